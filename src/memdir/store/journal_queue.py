"""The committer: a store's journal steps made into git commits on a thread, in step order,
while the tool calls that made them have already returned (a group commit).

A step is acknowledged once its record is in the step log (`journal_log.py`); this thread then
commits the records in order. The journal lock (`<git dir>/memdir-journal.lock`, an flock)
says who may move HEAD: a process takes it at its first step after being idle and keeps it
while it has records to commit or a step open, so another process's step, or a whole-tree
check, waits until these commits have landed and so always builds on the newest snapshot.
Whoever takes the lock first commits what a killed holder left in the log (`catch_up`).

Readers wait for commits rather than read a journal that lags its files: in this process
`caught_up` waits for each committer of the root to drain; across processes it takes the lock
shared, for at most READ_WAIT. At exit every committer drains (`atexit`), and a forked child
drops its parent's queue and lock (the parent commits them).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import random
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2

from memdir.errors import MemdirError
from memdir.store.journal_log import Record, StepLog, land
from memdir.store.journal_tree import mark
from memdir.store.oslock import LockTimeout, lock_fd

LOCK = "memdir-journal.lock"
MAX_QUEUE = 64  # records waiting at most; a step beyond waits for the thread (bounded memory)
LINGER = 1.0  # seconds the thread waits for more work before it ends
READ_WAIT = 10.0  # seconds a reader waits for another process's commits before it reads anyway
LOCK_TIMEOUT = 120.0
GC_EVERY = 256

_live: weakref.WeakSet[Committer] = weakref.WeakSet()


class Committer:
    """The queue and thread of one store's journal in this process."""

    def __init__(self, git_dir: Path, gc: Callable[[], None]) -> None:
        self.git_dir = Path(git_dir)
        self.log = StepLog(self.git_dir)
        self._gc = gc
        self._cv = threading.Condition()
        self._queue: deque[Record] = deque()
        self._busy = False  # the thread is committing the queue's first record
        self._open = 0  # steps between `begin` and `end`
        self._fd: int | None = None  # the journal lock, while this process holds it
        self._failed = False  # a commit failed since the lock was taken: leave the mark set
        self._thread: threading.Thread | None = None
        self._repo: pygit2.Repository | None = None
        _live.add(self)

    @property
    def holding(self) -> bool:
        return self._fd is not None

    def begin(self) -> bool:
        """A step starts (the writer lock held). True when the journal lock was taken just now:
        the caller then commits what a killed holder left (`catch_up`) before anything else."""
        with self._cv:
            if self._fd is not None:
                self._open += 1
                return False
        fd = lock_fd(self.git_dir / LOCK, LOCK_TIMEOUT)  # waits for another process's commits
        with self._cv:
            self._fd = fd
            self._open += 1
        return True

    def submit(self, record: Record) -> None:
        """Log `record` (from here on the step is acknowledged) and queue its commit."""
        if self._fd is None:
            raise MemdirError("journal: a step was recorded without the journal lock")
        logged = self.log.append(record)
        with self._cv:
            self._cv.wait_for(lambda: len(self._queue) < MAX_QUEUE)
            self._queue.append(logged)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memdir-journal-commit", daemon=True)
                self._thread.start()
            self._cv.notify_all()

    def end(self) -> None:
        """The step is over: the lock goes once its commits have landed."""
        with self._cv:
            self._open = max(0, self._open - 1)
            self._release_if_idle()

    def failed(self) -> None:
        """A step was not journaled: keep the in-flight mark, so the next holder reconciles."""
        self._failed = True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued record is committed; False at the timeout."""
        if threading.current_thread() is self._thread:
            return True  # the thread's own housekeeping
        with self._cv:
            return self._cv.wait_for(lambda: not self._queue and not self._busy, timeout)

    def idle(self, timeout: float | None = None) -> bool:
        """Wait until this process no longer holds the journal lock (no step open meanwhile)."""
        with self._cv:
            return self._cv.wait_for(lambda: self._fd is None, timeout)

    def close(self) -> None:
        self.flush()
        with self._cv:
            if self._repo is not None:
                self._repo.free()
                self._repo = None

    def _run(self) -> None:
        while True:
            with self._cv:
                if not self._cv.wait_for(lambda: bool(self._queue), LINGER):
                    self._thread = None
                    return
                record = self._queue[0]
                self._busy = True
            try:
                if self._repo is None:
                    self._repo = pygit2.Repository(str(self.git_dir))
                land(self._repo, record, self.log)
                if random.random() < 1 / GC_EVERY:
                    self._gc()
            except Exception as exc:  # a thread that died here would leave every reader waiting
                self._failed = True
                warnings.warn(f"journal: step not recorded: {exc}", stacklevel=1)
            with self._cv:
                self._queue.popleft()
                self._busy = False
                self._release_if_idle()
                self._cv.notify_all()

    def _release_if_idle(self) -> None:
        """Under the condition: let the lock go when nothing is queued, committing or open."""
        if self._fd is None or self._open or self._queue or self._busy:
            return
        try:
            self.log.clear()
            if not self._failed:
                mark(self.git_dir, False)
        except OSError:
            pass  # the log or mark left as they are: the next holder reconciles, never wrong
        finally:
            self._failed = False
            self.log.close()
            fd, self._fd = self._fd, None
            os.close(fd)
            self._cv.notify_all()

    def _after_fork(self) -> None:
        self._cv = threading.Condition()
        self._queue.clear()
        self._busy, self._open, self._thread, self._repo = False, 0, None, None
        if self._fd is not None:
            os.close(self._fd)  # the child's copy; the parent still holds the lock
            self._fd = None
        self.log.close()
        self.log = StepLog(self.git_dir)


def catch_up(repo: pygit2.Repository, log: StepLog) -> int:
    """Commit the records a killed holder left (the journal lock just taken); how many."""
    records = log.pending(None if repo.head_is_unborn else str(repo.head.target))
    for record in records:
        land(repo, record, log)
    log.clear()
    return len(records)


def caught_up(git_dir: Path) -> None:
    """Before a read of the journal: wait for this process's commits, and for a while for
    another process's."""
    git_dir = Path(git_dir)
    mine = [c for c in list(_live) if c.git_dir == git_dir]
    for c in mine:
        c.flush()
    if any(c.holding for c in mine) or not (git_dir / LOCK).exists():
        return  # this process holds the lock (its queue is flushed), or no writer ever took it
    with contextlib.suppress(LockTimeout, OSError):
        os.close(lock_fd(git_dir / LOCK, READ_WAIT, shared=True))


@contextlib.contextmanager
def exclusive(git_dir: Path) -> Iterator[None]:
    """Hold the journal lock for a commit of one's own (a whole-tree check), the writer lock
    already held so no step of this process opens meanwhile."""
    git_dir = Path(git_dir)
    for c in [c for c in list(_live) if c.git_dir == git_dir]:
        c.idle()
    fd = lock_fd(git_dir / LOCK, LOCK_TIMEOUT)
    try:
        yield
    finally:
        os.close(fd)


def _drain_all() -> None:
    for c in list(_live):
        with contextlib.suppress(Exception):
            c.flush(30.0)


def _after_fork_in_child() -> None:
    for c in list(_live):
        c._after_fork()


atexit.register(_drain_all)
os.register_at_fork(after_in_child=_after_fork_in_child)
