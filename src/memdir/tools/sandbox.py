"""The bubblewrap sandbox the shell tool runs in, and the limits that bound it.

Only `/usr` (read-only, with the merged-usr links `/bin`, `/lib`, `/lib64`, `/sbin`), a private
`/proc` and `/dev`, a small tmpfs `/tmp` and the working copy at `/memories` are mounted; the
network, IPC, UTS and PID namespaces are new. As root we drop to an unprivileged uid inside
(with every capability gone and no way back, since bwrap sets no-new-privs), because the
kernel never applies the process limit to root: without that a fork bomb would take the
machine's PID space. Time is bounded from outside: the whole process group is killed, and
with it the PID namespace. If bwrap is missing or cannot confine, :func:`require_sandbox`
raises :class:`SandboxUnavailable`; there is no unconfined fallback.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import SandboxUnavailable

MOUNT = "/memories"
# As root, each store's commands run as their own unprivileged uid, so the process limit (which
# the kernel counts per uid, machine-wide) is not shared by stores served side by side.
UID_BASE, UID_SPAN = 200_000, 100_000
PATH_ENV = "/usr/local/bin:/usr/bin:/bin"
MIB = 1024 * 1024


@dataclass(frozen=True)
class ShellLimits:
    """Bounds on one command. `output_chars` is what the model sees; the rest is counted."""

    timeout: float = 30.0
    memory_mb: int = 1024  # address space per process
    max_procs: int = 64
    max_file_mb: int = 64  # largest file a command may write
    tmp_mb: int = 128  # size of the private /tmp
    growth_mb: int = 1024  # most the store may grow by in one command; beyond it nothing is kept
    output_chars: int = 50_000


@dataclass(frozen=True)
class Outcome:
    """What a command printed and how it ended."""

    stdout: str
    stderr: str
    exit_code: int | None  # None when killed at the time limit
    timed_out: bool
    total_bytes: int  # stdout + stderr as produced, before truncation
    truncated: bool
    seconds: float


def _privileged() -> bool:
    return os.geteuid() == 0


def bwrap_argv(
    workdir: Path, limits: ShellLimits, command: str, *, uid: int | None = None, info_fd: int | None = None
) -> list[str]:
    """The full command line: bwrap, the drop to `uid` when we are root, prlimit, bash."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(
            "the shell tool needs bubblewrap ('bwrap') and it is not installed; install the "
            "'bubblewrap' package (scripts/setup-system.sh does it with apt) or use another profile"
        )
    argv = [
        bwrap, "--die-with-parent", "--new-session",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
        "--perms", "1777", "--size", str(limits.tmp_mb * MIB), "--tmpfs", "/tmp",
        "--bind", str(workdir), MOUNT, "--chdir", MOUNT,
        # Without root, bwrap's own / and /dev belong to the user and would take unbounded writes.
        "--remount-ro", "/",
        "--clearenv", "--setenv", "PATH", PATH_ENV, "--setenv", "HOME", MOUNT,
        "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp", "--setenv", "TERM", "dumb",
        "--cap-drop", "ALL",
    ]  # fmt: skip
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]  # reports the sandbox's pid 1, see _kill_group
    if _privileged():
        # Keep only what setpriv needs to become `uid`; the uid change clears it again.
        uid = UID_BASE if uid is None else uid
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--"]
        argv += ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}"]
        # An empty bounding set too: no later exec can regain a capability, whatever it is.
        argv += ["--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    argv += [
        "--", "/usr/bin/prlimit",
        f"--as={limits.memory_mb * MIB}", f"--nproc={limits.max_procs}",
        f"--fsize={limits.max_file_mb * MIB}", "--nofile=256", "--core=0",
        "--", "/usr/bin/bash", "--noprofile", "--norc", "-c", command,
    ]  # fmt: skip
    return argv


def sandbox_owner(key: str = "") -> int | None:
    """The uid commands for `key` (a store root) run as, which must own its working copy.

    None when we are not root: then bubblewrap maps our own uid, which owns the copy already.
    """
    if not _privileged():
        return None
    digest = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=8).digest()
    return UID_BASE + int.from_bytes(digest, "big") % UID_SPAN


def run(workdir: Path, command: str, limits: ShellLimits, uid: int | None = None) -> Outcome:
    """Run `command` confined to `workdir` (seen as /memories) and collect bounded output."""
    info_r, info_w = os.pipe()
    argv = bwrap_argv(workdir, limits, command, uid=uid, info_fd=info_w)
    keep = limits.output_chars * 4  # bytes enough for output_chars of UTF-8
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, cwd="/", pass_fds=(info_w,),
            umask=0o077,  # what the command makes is private, as the store's own writes (safefs.FILE_MODE)
        )  # fmt: skip
    except BaseException:
        os.close(info_r)
        raise
    finally:
        os.close(info_w)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    total = 0
    timed_out = False
    sel = selectors.DefaultSelector()
    for f in (proc.stdout, proc.stderr):
        sel.register(f, selectors.EVENT_READ)
    try:
        while sel.get_map():
            left = limits.timeout - (time.monotonic() - start)
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(timeout=min(left, 0.5)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                total += len(chunk)
                buf = bufs[key.fd]
                if len(buf) < keep:
                    buf += chunk[: keep - len(buf)]
        if not timed_out:
            try:
                proc.wait(timeout=max(0.1, limits.timeout - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        sel.close()
        if timed_out or proc.poll() is None:
            _kill_group(proc, info_r)
        os.close(info_r)
        proc.stdout.close()
        proc.stderr.close()
    out, err = (bufs[fd].decode("utf-8", "replace") for fd in (out_fd, err_fd))
    limit = limits.output_chars
    truncated = total > len(bufs[out_fd]) + len(bufs[err_fd]) or len(out) + len(err) > limit
    if truncated:  # keep room for stderr: the error usually says what went wrong
        out = out[: limit - min(len(err), limit // 5)]
        err = err[: limit - len(out)]
    return Outcome(
        out, err, None if timed_out else proc.returncode, timed_out, total, truncated,
        time.monotonic() - start,
    )  # fmt: skip


def _kill_group(proc: subprocess.Popen[bytes], info_fd: int) -> None:
    """Kill bwrap's group, then wait until the sandbox's pid 1 is gone.

    bwrap's child (pid 1 inside) dies with bwrap and takes the PID namespace along, but that
    happens after bwrap itself is reaped; waiting for it means no process of the command can
    still be touching the working copy when the harness reads it.
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    os.set_blocking(info_fd, False)
    try:
        info = json.loads(os.read(info_fd, 65536) or b"{}")
    except (OSError, ValueError):
        info = {}
    child = info.get("child-pid")
    deadline = time.monotonic() + 10
    while isinstance(child, int) and _alive(child) and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
        time.sleep(0.01)


def _alive(pid: int) -> bool:
    """True while `pid` runs; a zombie pid 1 has already outlived every process of its namespace."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


PROBE = "test ! -e /etc/passwd && test ! -e /root && touch /memories/probe && echo confined"


@functools.lru_cache(maxsize=1)
def _probe() -> str | None:
    """Why a confining sandbox cannot be made here, or None when it can (checked once)."""
    try:
        with tempfile.TemporaryDirectory(prefix="memdir-probe-") as tmp:
            owner = sandbox_owner(tmp)
            if owner is not None:
                os.chown(tmp, owner, owner)
            os.chmod(tmp, 0o755)  # bwrap enters it before the uid drop, with no capabilities
            out = run(Path(tmp), PROBE, ShellLimits(timeout=20), owner)
            if out.stdout.strip() == "confined" and out.exit_code == 0:
                return None
            detail = (out.stderr.strip() or out.stdout.strip() or f"exit status {out.exit_code}")[:500]
            return f"bubblewrap did not produce a confining sandbox: {detail}"
    except SandboxUnavailable as exc:
        return str(exc)
    except OSError as exc:
        return f"bubblewrap could not be started: {exc}"


def shell_available() -> bool:
    return _probe() is None


def require_sandbox() -> None:
    """Raise :class:`SandboxUnavailable` with the reason when no confining sandbox can be made."""
    reason = _probe()
    if reason is not None:
        raise SandboxUnavailable(
            f"the shell profile is unavailable: {reason}. memdir never runs an unconfined shell; "
            "install bubblewrap on a Linux host that allows it, or use another profile"
        )
