"""Waiting in tests on what happens, not on how long it usually takes.

A test that sleeps for "long enough" fails on a loaded machine and wastes time on an idle
one; a test that asserts a duration measures the machine. Tests here wait for a condition (a
port that accepts, a line a child prints, a file a command makes, a process gone, CPU a
server has spent) and give up only at a deadline far beyond any healthy run: the deadline
guards against a hang, it is not a speed target.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

import anyio

T = TypeVar("T")

# Far beyond any healthy run of what a test waits for, loaded 2-core machine included: only a
# hang reaches it.
HANG_GUARD_S = 60.0


def wait_until(
    condition: Callable[[], T], what: str, timeout: float = HANG_GUARD_S, interval: float = 0.02
) -> T:
    """Poll `condition` until it returns something truthy, and return that. Past `timeout`
    (a hang guard), fail naming `what` was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what}")
        time.sleep(interval)
        interval = min(interval * 1.5, 0.25)


async def wait_until_async(
    condition: Callable[[], T], what: str, timeout: float = HANG_GUARD_S, interval: float = 0.02
) -> T:
    """`wait_until` for async tests: the event loop keeps running while it polls."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what}")
        await anyio.sleep(interval)
        interval = min(interval * 1.5, 0.25)


class ExitedEarly(AssertionError):
    """The process ended before it was ready; `stderr` holds what it printed, when piped."""

    def __init__(self, what: str, returncode: int, stderr: str) -> None:
        super().__init__(f"{what} exited ({returncode}) before listening: {stderr[-2000:]}")
        self.stderr = stderr


def listens(pid: int, port: int) -> bool:
    """True once process `pid` itself holds a socket listening on TCP `port`: its own socket,
    not merely something on the port (under pytest-xdist another worker's server could be)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()  # sl local_address rem_address st ... inode
            if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{f[9]}]")
    if not inodes:
        return False
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                return True
        except OSError:
            continue
    return False


def wait_for_listener(proc: subprocess.Popen[bytes], port: int, what: str = "the server") -> None:
    """Until `proc` listens on `port`; raises ExitedEarly at once if it exits first."""

    def up() -> bool:
        if listens(proc.pid, port):
            return True
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise ExitedEarly(what, proc.returncode, err)
        return False

    wait_until(up, f"{what} to listen on port {port}")


def read_line_with(stream: IO[bytes], marker: bytes, what: str) -> bytes:
    """Lines of a child's piped output up to and including the first holding `marker` (a
    readiness line). A child that exits first ends the stream: that fails at once."""
    seen = b""
    while True:
        line = stream.readline()
        if not line:
            raise AssertionError(f"{what}: the output ended before {marker!r}: {seen[-2000:]!r}")
        seen += line
        if marker in line:
            return seen


def processes_with(token: str) -> list[int]:
    """Live processes (any user's) whose command line, arguments joined by spaces as `pgrep -f`
    joins them, holds `token`; a zombie has none."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ")
        except OSError:
            continue  # ended while we looked
        if token.encode() in cmdline and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def cpu_ticks(pid: int) -> int:
    """CPU time `pid` has used, user plus system, in clock ticks (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_until_busy(pid: int, seconds: float, what: str) -> None:
    """Until `pid` has used `seconds` more CPU than now: work it was handed is running. CPU
    spent, unlike time passed, cannot be made up by a loaded machine."""
    start, need = cpu_ticks(pid), seconds * os.sysconf("SC_CLK_TCK")
    wait_until(lambda: cpu_ticks(pid) - start >= need, what)
