"""The whole-tree check: the files against the journal's newest snapshot, so changes no tool
step recorded (a writer killed between its file writes and its commit, an edit made by hand)
still reach the journal.

A check walks the store (`SafeRoot.scan`: bounded, link-safe) and reads again only the files the
stat cache cannot vouch for (`tree.StatCache`), so on an unchanged store it costs a walk
(seconds at 100,000 files: benchmarks/first_write_100k.py;
benchmarks/results/2026-12-06-docstring-figures.md, "store/journal/reconcile.py"). Where that
matters it runs on a thread of its own (`Background`): the walk and the hashing hold no lock;
then, under the writer lock and the journal lock (so every step logged before has been
committed), every path a step committed meanwhile and every path found changed is read again
against the snapshot as it is by then, and only what still differs is committed, as a step of
tool `recovered`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2

from memdir.store.atomic import WriterLock
from memdir.store.journal.catch_up import catch_up, journal_lock
from memdir.store.journal.format import MEMORY_PREFIX, recovered_message, why_skipped
from memdir.store.journal.log import StepLog
from memdir.store.journal.tree import (
    RACY_NS,
    TREE,
    Staged,
    StatCache,
    apply,
    commit,
    head_tree,
    stage,
)
from memdir.store.safefs import SafeRoot
from memdir.store.store import Change

log = logging.getLogger(__name__)

OUTSIDE = "files changed outside the tools (found by the whole-tree check)"
CRASH = "a writer stopped between writing files and journaling them"


def paths_of(tree: pygit2.Tree, prefix: str = "") -> Iterator[str]:
    for entry in tree:
        name = prefix + (entry.name or "")
        if entry.filemode == TREE:
            sub = entry if isinstance(entry, pygit2.Tree) else None
            if sub is not None:
                yield from paths_of(sub, name + "/")
        else:
            yield name


def touched(
    repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree
) -> tuple[set[str], set[str], set[str]]:
    """(paths changed, added, deleted) between two snapshots."""
    changed: set[str] = set()
    added: set[str] = set()
    deleted: set[str] = set()
    if old.id == new.id:
        return changed, added, deleted
    for d in old.diff_to_tree(new).deltas:
        changed.update(p for p in (d.old_file.path, d.new_file.path) if p)
        if d.status == pygit2.enums.DeltaStatus.ADDED:
            added.add(d.new_file.path)
        elif d.status == pygit2.enums.DeltaStatus.DELETED:
            deleted.add(d.old_file.path)
    return changed, added, deleted


def check(
    repo: pygit2.Repository, safe: SafeRoot, git_dir: Path, tree: pygit2.Tree | None
) -> tuple[Staged, StatCache]:
    """How the files differ from `tree`, and the stat cache of the files as seen now (its
    `tree` is set by the caller, once the result is committed)."""
    taken = time.time_ns()
    files: dict[str, tuple[int, int]] = {}
    out = Staged()
    for f in safe.scan((), "/memories"):
        if f.kind == "file" and f.nlink == 1:
            files["/".join(f.parts)] = (f.size, f.mtime_ns)
        elif f.kind != "dir":
            out.skipped.append(why_skipped(f))
    cache = StatCache.load(git_dir)
    base = _tree(repo, cache.tree) if cache is not None and tree is not None else None
    known: dict[str, tuple[int, int, str]] = {}
    if tree is None:
        tracked: set[str] = set()
    elif cache is not None and base is not None:
        changed, added, deleted = touched(repo, base, tree)
        tracked = (set(cache.entries) | added) - deleted
        known = {p: e for p, e in cache.entries.items() if p not in changed}
    else:
        tracked = set(paths_of(tree))
    cutoff = (cache.taken_ns if cache is not None else 0) - RACY_NS
    entries: dict[str, tuple[int, int, str]] = {}
    suspect: set[str] = set()
    for rel, (size, mtime) in files.items():
        e = known.get(rel)
        if e is not None and e[0] == size and e[1] == mtime and mtime < cutoff:
            entries[rel] = e
        else:
            suspect.add(rel)
    staged = stage(repo, safe, tree, suspect)
    staged.skipped[:0] = out.skipped
    for rel in sorted(tracked - files.keys()):
        staged.updates[rel] = None
        staged.changes.append(Change("delete", MEMORY_PREFIX + rel))
    entries.update(staged.stats)
    return staged, StatCache("", taken, entries)


def _tree(repo: pygit2.Repository, sha: str) -> pygit2.Tree | None:
    try:
        obj = repo.get(sha)
    except (ValueError, pygit2.GitError):
        return None
    return obj if isinstance(obj, pygit2.Tree) else None


def settle(
    repo: pygit2.Repository,
    git_dir: Path,
    staged: Staged,
    cache: StatCache,
    message: str,
    *,
    always: bool = False,
) -> bool:
    """Commit what a check found (if anything, or in any case `always`: a repair's note must
    reach the history) and keep its stat cache. True if committed."""
    tree = head_tree(repo)
    new = apply(repo, tree, staged.updates) if staged.updates or tree is None else tree.id
    landed = bool(staged.updates) or tree is None or always
    if landed:
        commit(repo, new, message)
    cache.tree = str(new)
    cache.save(git_dir)
    return landed


def recover(
    repo: pygit2.Repository, safe: SafeRoot, git_dir: Path, reason: str, *, always: bool = False
) -> bool:
    """The whole-tree check, committed as one `recovered` step (the writer and journal locks
    held); with `always`, even when it finds nothing, so `reason` is in the history."""
    staged, cache = check(repo, safe, git_dir, head_tree(repo))
    message = recovered_message(reason, staged.changes, staged.skipped)
    return settle(repo, git_dir, staged, cache, message, always=always)


class Background:
    """One whole-tree check on its own thread; `done` is set when it has landed (or failed)."""

    def __init__(self, root: Path, git_dir: Path, lock: WriterLock) -> None:
        self.root, self.git_dir, self.lock = root, git_dir, lock
        self.done = threading.Event()
        self.landed = False
        self.thread = threading.Thread(target=self._run, name="memdir-journal-check", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.landed = self._check()
        except Exception as exc:  # derived state: the next check repairs whatever this missed
            log.warning("journal: whole-tree check failed (%s); the next one will catch up", exc)
        finally:
            self.done.set()

    def _check(self) -> bool:
        repo = pygit2.Repository(str(self.git_dir))
        log = StepLog(self.git_dir)
        try:
            return self._check_with(repo, log)
        finally:
            log.close()
            repo.free()

    def _check_with(self, repo: pygit2.Repository, log: StepLog) -> bool:
        safe = SafeRoot(self.root)
        with self.lock.hold(), journal_lock(self.git_dir):  # HEAD moves only under the journal lock
            catch_up(repo, log)  # the steps logged so far are in the snapshot compared
            before = head_tree(repo)
        staged, cache = check(repo, safe, self.git_dir, before)
        with self.lock.hold(), journal_lock(self.git_dir):
            catch_up(repo, log)
            now = head_tree(repo)
            if before is not None and now is not None and now.id != before.id:
                # Steps landed meanwhile: read their paths and ours again, against `now`.
                changed, _, _ = touched(repo, before, now)
                again = changed | set(staged.updates)
                fresh = stage(repo, safe, now, again)
                keep = [c for c in staged.changes if c.path.removeprefix(MEMORY_PREFIX) not in again]
                staged.updates = {p: o for p, o in staged.updates.items() if p not in again}
                staged.updates.update(fresh.updates)
                staged.changes = keep + fresh.changes
                for p in again:
                    cache.entries.pop(p, None)
                cache.entries.update(fresh.stats)
            message = recovered_message(OUTSIDE, staged.changes, staged.skipped)
            return settle(repo, self.git_dir, staged, cache, message)
