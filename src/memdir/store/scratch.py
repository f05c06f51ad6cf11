"""Where throwaway copies of a store live, and how the ones a killed process left are found.

A consolidation pass holds two copies of the store (`workcopy.scratch_copy`) for as long as its
model runs; a SIGKILL used to leave them in the system's temp folder for good. A copy now lives
in the store's state folder (`<root>/.memdir/scratch/<name>/`, never seen by a tool, the index
or the journal), beside a lock file its process holds (an flock, which the kernel lets go when
the process dies, however it dies). `sweep` removes every copy whose lock nobody holds: a
Store's first step runs it (`Store.sweep_orphans`), and so does each new copy. A root whose
state folder cannot be written (a read-only store) gets its copy in the temp folder, as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memdir.store.paths import STATE_DIR
from memdir.store.safefs import DIR_MODE, private_dirs

SCRATCH = "scratch"
LOCK_SUFFIX = ".lock"


@contextlib.contextmanager
def scratch_dir(root: Path) -> Iterator[Path]:
    """A new empty folder for one throwaway copy of the store at `root`, removed on exit; its
    lock is held until then, so no sweep takes it from a live process."""
    base = Path(root) / STATE_DIR / SCRATCH
    try:
        private_dirs(base)
        sweep(base)
        fd, lock = _locked(base)
    except OSError:  # a store we may not write: the temp folder, as before
        with tempfile.TemporaryDirectory(prefix="memdir-scratch-") as tmp:
            yield Path(tmp)
        return
    where = lock.with_name(lock.name.removesuffix(LOCK_SUFFIX))
    try:
        os.mkdir(where, DIR_MODE)
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def _locked(base: Path) -> tuple[int, Path]:
    """A new lock file under `base`, held. A sweep may take a lock file in the instant between
    its creation and its flock; then it is gone from its folder and a new one is made."""
    while True:
        fd, name = tempfile.mkstemp(prefix="copy-", suffix=LOCK_SUFFIX, dir=base)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(name).st_ino == os.fstat(fd).st_ino:
                return fd, Path(name)
        except FileNotFoundError:
            pass
        os.close(fd)


def sweep(base: Path) -> list[str]:
    """Remove the copies under `base` whose process is gone (their lock is free); their names.
    A copy folder with no lock file yet is one being made right now (the lock follows the
    folder at once), or one whose sweep was killed after removing the folder."""
    gone: list[str] = []
    try:
        names = os.listdir(base)
    except OSError:
        return gone
    for name in names:
        if not name.endswith(LOCK_SUFFIX):
            continue
        lock = base / name
        try:
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live copy
            copy = base / name.removesuffix(LOCK_SUFFIX)
            shutil.rmtree(copy, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.unlink(lock)  # last: a sweep killed before this finds the lock again
            gone.append(copy.name)
        finally:
            os.close(fd)
    return gone


def sweep_root(root: Path) -> list[str]:
    """`sweep` for the store at `root` (nothing to do when it never made a copy)."""
    base = Path(root) / STATE_DIR / SCRATCH
    return sweep(base) if base.is_dir() else []
