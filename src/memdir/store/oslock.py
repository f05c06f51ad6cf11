"""The one exclusive lock memdir takes on a file: a store's writer lock, its index's, a run table's.

An `flock` on a descriptor of its own per holder: it excludes other processes and, since each
thread opens its own descriptor, other threads of this one too. It is reentrant within a
thread, and threads of one process queue on an in-process lock first, so a thread waiting for
another (the journal's whole-tree check, say) is woken the moment it is let go instead of
polling the file. Only a wait on another process polls, starting at a millisecond.

Written here on the standard library rather than taken from `filelock`: that library's
acquire-and-release cost ~260 us here against ~8 us for these few calls, and a store takes
its writer lock once per tool call (benchmarks/journal_overhead.py). It is an `flock` on the
same file, so it excludes every `filelock.FileLock` holder as before.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path
from types import TracebackType

from memdir.errors import MemdirError
from memdir.store.safefs import FILE_MODE

FIRST_WAIT = 0.001  # seconds between tries on a lock another process holds, doubling
LAST_WAIT = 0.05


class LockTimeout(MemdirError, TimeoutError):
    """The lock was held by another writer for the whole timeout."""


def lock_fd(path: Path, timeout: float) -> int:
    """A new descriptor of `path` holding its flock (closing it lets go), waiting at most
    `timeout`: the plain lock under `OsLock`, and the journal lock, held for one block and
    never reentered."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)  # a new one, its owner's only
    deadline = time.monotonic() + timeout
    wait = FIRST_WAIT
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise timed_out(path, timeout) from None
                time.sleep(min(wait, left))
                wait = min(wait * 2, LAST_WAIT)
    except BaseException:
        os.close(fd)
        raise


def timed_out(path: Path, timeout: float) -> LockTimeout:
    return LockTimeout(
        f"{path} stayed locked by another writer for {timeout:g} s; "
        "wait for it to finish (or stop it) and try again"
    )


class OsLock:
    """An exclusive lock on `path`, across processes and threads; reentrant within a thread."""

    def __init__(self, path: Path | str, timeout: float = 120.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._threads = threading.Lock()
        self._local = threading.local()

    @property
    def held(self) -> bool:
        """Does this thread hold the lock?"""
        return getattr(self._local, "depth", 0) > 0

    def acquire(self) -> None:
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            return
        deadline = time.monotonic() + self.timeout
        if not self._threads.acquire(timeout=max(self.timeout, 0.0)):
            raise self._timed_out()
        try:
            self._local.fd = self._lock_file(deadline)
        except BaseException:
            self._threads.release()
            raise
        self._local.depth = 1

    def release(self) -> None:
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            raise RuntimeError(f"{self.path} is not locked by this thread")
        self._local.depth = depth - 1
        if depth == 1:
            fd, self._local.fd = self._local.fd, None
            try:
                os.close(fd)  # closing the only descriptor lets the flock go
            finally:
                self._threads.release()

    def _lock_file(self, deadline: float) -> int:
        try:
            return lock_fd(self.path, deadline - time.monotonic())
        except LockTimeout:
            raise self._timed_out() from None

    def _timed_out(self) -> LockTimeout:
        return timed_out(self.path, self.timeout)

    def __enter__(self) -> OsLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
