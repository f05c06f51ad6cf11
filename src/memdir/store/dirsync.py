"""Folder fsyncs: what makes a rename or a removal durable before the tool call returns.

A rename between two folders changes both, and each must be fsynced (docs/reliability.md).
One after the other, the second costs a flush of the disk's cache even when the first already
committed the filesystem's journal holding both changes (ext4 issues one for every fsync), so
a cross-folder rename paid two flushes where the SDK's helper pays none
(benchmarks/README.md, vs_anthropic_memory.py). Issued at once from two threads, both wait on
one commit. Both have returned before `fsync_folders` does, so what is durable when the call
returns is unchanged; only the waiting overlaps.

Where an fsync costs nothing (a memory-backed folder) the handoff to a thread would be the
whole cost, so the two run in turn there: the last folder fsync this process timed says which
case it is in.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

# A folder fsync slower than this waited for a disk; under it, the thread handoff (tens of
# microseconds, more on a busy machine) would cost more than the overlap saves.
SLOW_FSYNC_S = 100e-6

_last_fsync_s = 0.0
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def fsync_folder(fd: int) -> None:
    """fsync the folder open at `fd`, timed for `fsync_folders`' choice."""
    global _last_fsync_s
    start = time.perf_counter()
    os.fsync(fd)
    _last_fsync_s = time.perf_counter() - start


def fsync_folders(first: int, second: int) -> None:
    """fsync the two folders open at `first` and `second` (different folders); both are on
    disk when this returns, or it raises the first error."""
    if _last_fsync_s < SLOW_FSYNC_S:
        fsync_folder(first)
        fsync_folder(second)
        return
    other: Future[None] = _worker().submit(os.fsync, second)
    try:
        fsync_folder(first)
    except BaseException:
        with contextlib.suppress(Exception):  # waited for: the descriptors are the caller's
            other.result()
        raise
    other.result()


def _worker() -> ThreadPoolExecutor:
    """This process's one fsync thread, started at its first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(1, thread_name_prefix="memdir-fsync")
        return _pool


def _forget_after_fork() -> None:
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()  # the parent's thread did not follow the fork


os.register_at_fork(after_in_child=_forget_after_fork)
