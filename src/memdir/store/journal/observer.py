"""The journal's writer side: the store observer that logs one step per writing tool call.

A step reads the paths it changed once, appends them as one record to the step log
(`log.py`) under the writer lock, and pokes its process's committer
(`commitd.py`), which makes the commit just after the call returns. Before the tool
writes, it first commits what a killed writer left and sets the in-flight mark; the whole-tree
check (`reconcile.py`) runs inside the first step of a process on a small store, and on
a thread of its own otherwise. The reader side, and the commit trailers, are `repository.py`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import shutil
import time
import warnings
from typing import TYPE_CHECKING

import pygit2

from memdir.store.journal.catch_up import catch_up, commit_pending, journal_lock
from memdir.store.journal.commitd import poke
from memdir.store.journal.format import MEMORY_PREFIX, message, rolled_forward
from memdir.store.journal.log import Record, StepLog
from memdir.store.journal.reconcile import CRASH, Background, check, recover
from memdir.store.journal.repair import NOTE, drop_note, take_note
from memdir.store.journal.repository import Journal
from memdir.store.journal.tree import (
    IN_FLIGHT,
    STAT_CACHE,
    apply,
    capture,
    commit,
    head_tree,
    marked,
    open_mark,
    set_mark,
)
from memdir.store.safefs import SafeRoot, Unread
from memdir.store.store import StoreObserver

if TYPE_CHECKING:
    from memdir.store.store import Step, Store

GC_EVERY = 256
TRIM_BYTES = 4 << 20  # a step log this long, all of it committed, is cut back to its header
FULL_EVERY = 100  # steps between whole-tree checks (they catch edits made outside the tools)
SYNC_CACHE_BYTES = 256 * 1024  # a stat cache this small (~3,000 files): the check runs in the step


class JournalObserver(StoreObserver):
    """Logs one step per writing tool call, for the committer process to commit
    (`commitd.py`); opens nothing until the first write."""

    records_steps = True  # a stopped landing's record goes once the journal has its step

    def __init__(self, store: Store) -> None:
        self.store = store
        self.journal = Journal(store.root)
        self.safe = SafeRoot(self.journal.root)
        self.log = StepLog(self.journal.git_dir)
        self._repo: pygit2.Repository | None = None
        self._since_full = FULL_EVERY  # steps since the last whole-tree check (or a failure)
        self._checked = False  # has this process run a whole-tree check yet?
        self._marked = False  # this step set the in-flight mark
        self._failed = False  # this step's record was not logged: leave the mark set
        self._head_checked = False  # has a step of this observer checked the journal's head?
        self.background: Background | None = None  # the latest check on its own thread
        self._mark: int | None = None  # the in-flight mark's descriptor, open for one step
        self._note = str(self.journal.git_dir / NOTE)  # a step's one look for a repair's note
        self._mark_file = str(self.journal.git_dir / IN_FLIGHT)

    def _open(self) -> pygit2.Repository:
        self.journal.ensure()
        if self._repo is None:
            self._repo = self.journal.repo()
        return self._repo

    def before_step(self, store: Store, step: Step) -> None:
        """Under the writer lock, before the tool writes: first commit what a killed writer
        left (its logged steps, then its unlogged writes as a `recovered` step), then set the
        in-flight mark for this step. A failure here is not the tool call's: `on_step` warns
        about it."""
        self._marked = self._failed = False
        self._close_mark()  # a step whose `after_step` never came (an observer before it failed)
        try:
            repo = self._open()
            git_dir = self.journal.git_dir
            with contextlib.suppress(OSError):  # unreadable: not crashed, as before; setting it fails
                self._mark = open_mark(self._mark_file)
            crashed = self._mark is not None and marked(self._mark)
            first = not self._head_checked  # a damaged head is found by the first step at the latest
            if crashed or first or os.path.exists(self._note) or self.log.size() > TRIM_BYTES:
                with journal_lock(git_dir):
                    catch_up(repo, self.log)  # repairs a damaged head first (repair.py)
                    self.log.clear()  # all committed; a record cut by a kill goes with it
                    self._head_checked = True
                    note = take_note(git_dir)
                    if crashed or note is not None:
                        recover(repo, self.safe, git_dir, note or CRASH, always=note is not None)
                    if note is not None:
                        drop_note(git_dir)
                        warnings.warn(f"journal: {note}", stacklevel=2)
            if self._mark is None:
                raise OSError(f"journal: cannot open the in-flight mark in {git_dir}")
            set_mark(self._mark, True)
            self._marked = True
        except Exception:  # the journal's trouble, not the call's: `on_step` warns about it
            self._since_full = FULL_EVERY

    def on_step(self, store: Store, step: Step) -> None:
        # The write has already happened; a journal failure must not turn it into a failed
        # tool call. The in-flight mark then stays set, so the next step recovers the change.
        try:
            self._record(step)
        except Exception as exc:  # whatever it is, the file write has landed: never re-raised
            self._since_full = FULL_EVERY
            self._failed = True
            warnings.warn(f"journal: step {step.tool!r} not recorded: {exc}", stacklevel=2)

    def after_step(self, store: Store, step: Step) -> None:
        """The step is logged (or wrote nothing): clear the in-flight mark."""
        if self._marked and not self._failed and self._mark is not None:
            # Left set, the next step runs a whole-tree check: slower, never wrong.
            with contextlib.suppress(OSError):
                set_mark(self._mark, False)
        self._marked = False
        self._close_mark()

    def _close_mark(self) -> None:
        if self._mark is not None:
            fd, self._mark = self._mark, None
            with contextlib.suppress(OSError):
                os.close(fd)

    def _record(self, step: Step) -> None:
        # This step's `before_step` opened the journal under the same writer lock: no second look.
        repo = self._repo if self._marked and self._repo is not None else self._open()
        git_dir = self.journal.git_dir
        due = self._since_full >= FULL_EVERY
        inline = due and not self._checked and self._small()
        if inline:  # the first check of a process on a small store: folded into this step
            with journal_lock(git_dir):
                catch_up(repo, self.log)
                tree = head_tree(repo)
                staged, cache = check(repo, self.safe, git_dir, tree)
                new = apply(repo, tree, staged.updates) if staged.updates or tree is None else tree.id
                text = message(step, staged.skipped)
                if staged.updates or tree is None or not rolled_forward(text):
                    commit(repo, new, text)
                cache.tree = str(new)
                cache.save(git_dir)
        else:
            rels = {p.removeprefix(MEMORY_PREFIX) for c in step.changes for p in (c.path, c.new_path) if p}
            seen = capture(self.safe, rels)
            skipped = [got for _, got, _ in seen if isinstance(got, Unread)]
            files = tuple((rel, got if isinstance(got, bytes) else None) for rel, got, _ in seen)
            self.log.append(Record(int(time.time()), message(step, skipped), files))
            if not poke(git_dir):  # no committer process here: commit it now, in the call
                commit_pending(git_dir, repo=repo)
        if due:
            self._checked = True
            self._since_full = 0
            if not inline and (self.background is None or self.background.done.is_set()):
                self.background = Background(self.journal.root, git_dir, self.store.writer_lock)
        else:
            self._since_full += 1
        if random.random() < 1 / GC_EVERY:
            self.journal.collect()

    def _small(self) -> bool:
        try:
            return (self.journal.git_dir / STAT_CACHE).stat().st_size <= SYNC_CACHE_BYTES
        except OSError:
            return False  # no stat cache yet: the first check reads every file, so not inline

    def settled(self, timeout: float | None = None) -> bool:
        """Wait for the whole-tree check on its own thread, if any, and commit whatever is
        still logged; True once nothing is left."""
        if self.background is not None and not self.background.done.wait(timeout):
            return False
        commit_pending(self.journal.git_dir)
        return True

    def close(self) -> None:
        """Let go of the repository's descriptors and maps now (a tenant leaving the pool), not
        when the collector gets to it; the next step opens it again."""
        self.log.close()
        self._close_mark()
        if self._repo is not None:
            self._repo.free()
            self._repo = None


class _NoJournal(StoreObserver):
    records_steps = True  # no git, no journal: nothing else will record a stopped landing

    def on_step(self, store: Store, step: Step) -> None:
        return None


_warned = False


@functools.lru_cache(maxsize=1)
def _git() -> str | None:
    return shutil.which("git")


def observer(store: Store) -> JournalObserver | _NoJournal:
    """The factory `tools/wiring.py` hands a store: a journal, or nothing (one warning) without
    git (the baseline is one `git fast-import`, and the journal stays a repository git reads)."""
    global _warned
    if _git() is None:
        if not _warned:
            warnings.warn("git is not installed: store steps are not journaled", stacklevel=2)
            _warned = True
        return _NoJournal()
    return JournalObserver(store)
