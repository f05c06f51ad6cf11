"""Catching up with the step log: committing the logged steps, in order, under the journal lock.

The journal lock (`<git dir>/memdir-journal.lock`, an flock) says who may move HEAD. Whoever
holds it commits every record the log still holds before making any commit of its own, so the
history keeps step order whoever commits: the committer process a writer pokes after each step
(`commitd.py`), a writer whose predecessor was killed, the whole-tree check, or a
reader that finds records waiting (`commit_pending`), in this process or any other. Catching up is
idempotent (the log's header, `log.py`), so two committers in turn never commit a record
twice. ("Landing" is another thing: a many-file step, `store/landing_intent.py`.)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pygit2

from memdir.store.journal.log import StepLog, commit_record
from memdir.store.journal.repair import repair
from memdir.store.oslock import lock_fd
from memdir.store.private import owner_only

LOCK = "memdir-journal.lock"
LOCK_TIMEOUT = 120.0
READ_WAIT = 30.0  # seconds a reader waits for the journal lock before it reads what is committed


@contextlib.contextmanager
def journal_lock(git_dir: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    fd = lock_fd(Path(git_dir) / LOCK, timeout)
    try:
        with owner_only():  # every journal write holds this lock; libgit2 takes the umask (private.py)
            yield
    finally:
        os.close(fd)


def catch_up(repo: pygit2.Repository, log: StepLog) -> int:
    """Commit every logged step not yet committed, in order (the journal lock held), and leave
    the header saying that nothing before the log's end is waiting; how many were committed. A
    head that cannot be read is first put back on the newest whole commit (`repair.py`)."""
    repair(repo, Path(repo.path))
    records, end = log.scan(None if repo.head_is_unborn else str(repo.head.target))
    for record in records:
        commit_record(repo, record, log)
    if not repo.head_is_unborn:
        head = repo.head.target
        assert isinstance(head, pygit2.Oid)
        log.caught_up(end, head)
    return len(records)


def commit_pending(
    git_dir: Path, timeout: float = LOCK_TIMEOUT, repo: pygit2.Repository | None = None
) -> int:
    """Commit what the log holds, if anything; cheap when nothing waits (no git opened)."""
    log = StepLog(git_dir, create=False)
    try:
        if not log.maybe_pending():
            return 0
        with journal_lock(git_dir, timeout):
            own = repo is None
            repo = repo if repo is not None else pygit2.Repository(str(git_dir))
            try:
                return catch_up(repo, log)
            finally:
                if own:
                    repo.free()
    except FileNotFoundError:
        return 0  # no journal, or no step ever logged
    finally:
        log.close()
