"""Atomic writes and the per-store writer lock.

A write lands whole or not at all: temp file in the same folder (exclusive create), fsync,
`os.replace`, fsync of the folder. The writer lock is an OS file lock (`oslock.py`, across
processes and threads), so two writers never interleave their read-modify-write cycles.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memdir.store.oslock import OsLock
from memdir.store.safefs import FILE_MODE


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace (or create) `path` with `data` and permissions `mode`; on any failure the old file
    is untouched. The temp file is created 0600 (`mkstemp`) and given `mode` before the replace,
    so a private file is never readable by others, not even for a moment. Without `mode`, a
    file that exists keeps its own and a new one is FILE_MODE, whatever the umask (private.py)."""
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = FILE_MODE
    fd, tmp = tempfile.mkstemp(prefix=".memdir-tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


class WriterLock:
    """One writer at a time per store, across processes; reentrant within a thread."""

    def __init__(self, lock_file: Path, timeout: float = 120.0) -> None:
        self._lock = OsLock(lock_file, timeout=timeout)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._lock:
            yield
