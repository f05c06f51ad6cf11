# ruff: noqa: E501  (the catalogue keeps each shell command on one line, as it would be typed)
"""Issue 10, item 4: a catalogue of known escape techniques against the shell tool. Each row is
one technique with the evidence that it failed; zero may succeed. (docs/reliability.md, section 4,
states the promise; benchmarks/results/2026-12-06-reliability.md, "4. Sandbox escapes", lists
the techniques; tests/tools/test_shell.py holds the tool's own contract tests.)"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.waits import processes_with

from memdir.tools.profiles import Harness
from memdir.tools.sandbox import ShellLimits, _probe
from memdir.tools.wiring import open_store

pytestmark = pytest.mark.skipif(_probe() is not None, reason=f"no confining sandbox here: {_probe()}")

SECRET = "host-secret-c4a1e7"
FAKE_KEY = "sk-test-should-never-be-visible-9d2f"
# How long the "outlive the command" sleeps would last: 300 s and a fraction drawn per run, so
# that looking for survivors finds this run's and not those of a run beside it.
LINGER = f"300.{secrets.randbelow(10**6):06d}"


@dataclass
class Ctx:
    root: Path
    outside: Path
    secret: Path
    port: int
    abstract: str


@dataclass(frozen=True)
class Technique:
    name: str
    command: str  # may use {secret}, {outside}, {port}, {abstract}
    held: Callable[[str, Ctx], bool]  # the escape failed, given the tool's output


def no_secret(out: str, c: Ctx) -> bool:
    return SECRET not in out and "root:x:0:0" not in out


def no_marker(out: str, c: Ctx) -> bool:
    return "ESCAPED" not in out and no_secret(out, c)


def nothing_written_outside(out: str, c: Ctx) -> bool:
    return sorted(p.name for p in c.outside.iterdir()) == ["secret.txt"] and no_marker(out, c)


def still_unprivileged(out: str, c: Ctx) -> bool:
    return "uid=0(" not in out and no_marker(out, c)


TECHNIQUES = [
    # -- host files -------------------------------------------------------------------
    Technique("read /etc/passwd", "cat /etc/passwd", no_secret),
    Technique("read /etc/shadow", "cat /etc/shadow && echo ESCAPED", no_marker),
    Technique("list /root and /home", "ls -a /root /home 2>&1; ls /root/.ssh && echo ESCAPED", no_marker),
    Technique("read a host file by absolute path", "cat {secret}", no_secret),
    Technique("climb with cd ..", "cd ..; cd ..; cd ..; cat ./*/secret.txt {secret} 2>&1", no_secret),
    Technique(
        "find / for the secret", "grep -rs {secret_text} / --exclude-dir=proc 2>/dev/null | head", no_secret
    ),
    Technique(
        "init's root via /proc/1/root", "cat /proc/1/root/etc/passwd /proc/1/root{secret} 2>&1", no_secret
    ),
    Technique(
        "other processes' roots", "for p in /proc/[0-9]*; do cat $p/root{secret} 2>/dev/null; done", no_secret
    ),
    Technique(
        "host paths from mountinfo",
        "for d in $(awk '{{print $4}}' /proc/self/mountinfo); do cat $d/../secret.txt $d{secret} 2>/dev/null; done",
        no_secret,
    ),
    # -- links --------------------------------------------------------------------------
    Technique("symlink to /etc/passwd", "ln -s /etc/passwd p.md; cat p.md", no_secret),
    Technique("symlink to the host secret", "ln -s {secret} s.md; cat s.md", no_secret),
    Technique(
        "symlink then write through it",
        "ln -s {outside}/new.md w.md; echo ESCAPED > w.md; cat {outside}/new.md",
        nothing_written_outside,
    ),
    Technique("hard link into /usr", "ln /usr/bin/env e && echo ESCAPED", no_marker),
    # -- writing outside -------------------------------------------------------------------
    Technique("write into /usr", "echo x > /usr/bin/pwned && echo ESCAPED", no_marker),
    Technique("write to /", "echo x > /pwned && echo ESCAPED", no_marker),
    Technique("write to the host folder", "echo ESCAPED > {outside}/x.md", nothing_written_outside),
    Technique("write to /dev/shm", "echo x > /dev/shm/pwned && echo ESCAPED", no_marker),
    Technique(
        "/tmp is not the host's",
        "echo hi > /tmp/memdir-escape-probe; ls /tmp",
        lambda o, c: not Path("/tmp/memdir-escape-probe").exists(),
    ),
    # -- privileges -------------------------------------------------------------------------
    Technique("mount a filesystem", "mount -t tmpfs none /tmp 2>&1 && echo ESCAPED", no_marker),
    Technique("chroot", "chroot / true 2>&1 && echo ESCAPED", no_marker),
    Technique(
        "new user namespace as root",
        "unshare -Ur sh -c 'cat /etc/passwd {secret}; mount -t proc p /proc && echo ESCAPED' 2>&1",
        no_marker,
    ),
    Technique(
        "setuid binaries",
        "for b in $(find /usr -perm -4000 2>/dev/null); do $b -c id 2>/dev/null; done; id",
        still_unprivileged,
    ),
    Technique(
        "capabilities",
        "grep -E 'Cap|NoNewPrivs' /proc/self/status",
        lambda o, c: (
            "NoNewPrivs:\t1" in o
            and sum(
                re.sub(r"\s+", " ", ln).endswith(" 0000000000000000")
                for ln in o.splitlines()
                if ln.startswith(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
            )
            == 5
        ),
    ),
    Technique(
        "kernel tunables via /proc/sys", "echo 1 > /proc/sys/kernel/sysrq 2>&1 && echo ESCAPED", no_marker
    ),
    Technique(
        "/sys is absent", "ls /sys/class 2>&1 | head -3; cat /sys/kernel/notes && echo ESCAPED", no_marker
    ),
    Technique("block devices", "ls /dev/sd* /dev/vd* /dev/nvme* 2>/dev/null && echo ESCAPED", no_marker),
    Technique(
        "terminal injection (TIOCSTI)",
        "python3 -c \"import fcntl,termios,sys; fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('ESCAPED')\" 2>&1",
        no_marker,
    ),
    Technique("kill every process", "kill -9 -1 2>&1; echo done", lambda o, c: no_marker(o, c)),
    # -- network ------------------------------------------------------------------------------
    Technique(
        "TCP to a host listener",
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('ESCAPED')\" 2>&1",
        no_marker,
    ),
    Technique(
        "TCP to a public address",
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3); print('ESCAPED')\" 2>&1",
        no_marker,
    ),
    Technique(
        "UDP out",
        "python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('8.8.8.8', 53)); print('ESCAPED')\" 2>&1",
        no_marker,
    ),
    Technique(
        "DNS",
        "python3 -c \"import socket; socket.getaddrinfo('example.com', 80); print('ESCAPED')\" 2>&1",
        no_marker,
    ),
    Technique(
        "host abstract unix socket",
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0{abstract}'); print('ESCAPED')\" 2>&1",
        no_marker,
    ),
    # -- state and secrets ----------------------------------------------------------------------
    Technique(
        "the store's hidden state",
        "ls -a /memories; cat /memories/.memdir/writer.lock && echo ESCAPED; ls /memories/.memdir/journal.git && echo ESCAPED",
        no_marker,
    ),
    Technique(
        "API keys in the environment",
        "env; cat /proc/self/environ | tr '\\0' '\\n'",
        lambda o, c: FAKE_KEY not in o,
    ),
    Technique(
        "parent's environment via /proc",
        "cat /proc/1/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n'",
        lambda o, c: FAKE_KEY not in o,
    ),
    # -- resources ---------------------------------------------------------------------------------
    Technique("fork bomb", "b(){{ b|b& }}; b; sleep 1; echo survived", lambda o, c: True),
    Technique(
        "memory exhaustion", "python3 -c \"x = bytearray(8 * 1024**3); print('ESCAPED')\" 2>&1", no_marker
    ),
    Technique(
        "disk fill",
        "head -c 200000000 /dev/zero > big.md 2>&1; ls -l big.md",
        lambda o, c: not (c.root / "big.md").exists() or (c.root / "big.md").stat().st_size < 100_000_000,
    ),
    Technique(
        "outlive the command",
        "(setsid sleep {linger} &) ; nohup sleep {linger} >/dev/null 2>&1 & echo started",
        lambda o, c: True,
    ),
]


# Searching the whole visible file system takes seconds: the one technique marked slow.
SLOW_TECHNIQUES = {"find / for the secret"}


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("escape")
    root = base / "mem"
    root.mkdir()
    (root / "MEMORY.md").write_text("# Memory\n")
    outside = base / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text(SECRET + "\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    hits: list[int] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            hits.append(1)
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    abstract = f"memdir-escape-{os.getpid()}"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind("\0" + abstract)
    unix.listen(1)
    os.environ["MEMDIR_TEST_FAKE_KEY"] = FAKE_KEY
    yield Ctx(root, outside, secret, listener.getsockname()[1], abstract), hits
    os.environ.pop("MEMDIR_TEST_FAKE_KEY", None)
    listener.close()
    unix.close()


def test_catalogue_has_at_least_30_techniques() -> None:
    assert len(TECHNIQUES) >= 30
    assert len({t.name for t in TECHNIQUES}) == len(TECHNIQUES)
    assert {t.name for t in TECHNIQUES} >= SLOW_TECHNIQUES  # a renamed one would lose its mark


def command(technique: Technique, c: Any) -> str:
    """The technique's shell command with this world's paths, port and secret filled in."""
    return technique.command.format(
        secret=c.secret,
        outside=c.outside,
        port=c.port,
        abstract=c.abstract,
        secret_text=SECRET,
        linger=LINGER,
    )


@pytest.mark.parametrize(
    "technique",
    [pytest.param(t, id=t.name, marks=[pytest.mark.slow] * (t.name in SLOW_TECHNIQUES)) for t in TECHNIQUES],
)
def test_escape_fails(ctx: Any, technique: Technique) -> None:
    c, hits = ctx
    before_hits = len(hits)
    cmd = command(technique, c)
    harness = Harness(
        open_store(c.root), "shell", config={"shell": ShellLimits(timeout=8, memory_mb=512, max_procs=32)}
    )
    result = harness.call("bash", {"command": cmd})
    out = result.text
    assert technique.held(out, c), f"{technique.name} may have escaped:\n{out[:2000]}"
    assert len(hits) == before_hits, "the host listener was reached"
    assert c.secret.read_text() == SECRET + "\n"
    # nothing of the sandbox outlives its command
    leftover = processes_with(f"sleep {LINGER}")
    assert not leftover, f"processes outlived the command: {leftover}"


UNCONFINED_PROBES = [
    "read a host file by absolute path",
    "write to the host folder",
    "TCP to a host listener",
]


@pytest.mark.parametrize("name", UNCONFINED_PROBES)
def test_checks_would_catch_an_unconfined_shell(ctx: Any, name: str, tmp_path: Path) -> None:
    """The same technique run by a plain, unconfined bash must be judged an escape: the
    checks above can fail."""
    c, hits = ctx
    technique = next(t for t in TECHNIQUES if t.name == name)
    cmd = command(technique, c)
    before_hits = len(hits)
    out = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, capture_output=True, text=True, timeout=30).stdout
    escaped = not technique.held(out, c) or len(hits) > before_hits
    for extra in c.outside.iterdir():
        if extra.name != "secret.txt":
            extra.unlink()
    assert escaped, f"{name}: an unconfined shell was not detected"
