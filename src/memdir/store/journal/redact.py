"""Forgetting through every version: the journal's history rewritten so no object holds what a
`Forget` request (`store/redaction.py`) removes, then every object no longer reachable pruned.

Each commit of the first-parent line is made again with its files passed through the request's
rule, its message scrubbed, its author and committer (so its time) kept, its trailers kept
(tool, operation, kind: what `history` groups by) and one trailer added, `Memdir-Redacted: <id>`,
the marker `history` and the UI show where something went. Which steps the words reach is read
once per tree and blob (by id); the new line is written by one `git fast-import`
(`rewrite_stream.py`), from the first step they reach on.

Atomic by the branch's move: every new object is written before HEAD moves (one in-place write
of its 41 bytes, `tree.set_head`), so a kill before it leaves the old history whole and one
after it the new. A mark file (`memdir-redacting`) stays until the unreachable objects are gone
(reflogs expired, `git gc --prune=now`), and the next forget finishes that first (`resume`).
The caller holds the writer lock (so no step is logged meanwhile); this takes the journal lock,
so no committer moves HEAD meanwhile, and lands what the step log held first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from memdir.store.journal.catch_up import catch_up, journal_lock
from memdir.store.journal.format import message as step_message
from memdir.store.journal.log import StepLog
from memdir.store.journal.repository import Journal, _clean_env
from memdir.store.journal.rewrite_stream import REF, Stream, changes_of
from memdir.store.journal.rewrite_stream import run as write_stream
from memdir.store.journal.tree import BLOB, STAT_CACHE, TREE, commit, set_head
from memdir.store.redaction import Forget, Record
from memdir.store.store import Step

MARK = "memdir-redacting"


@dataclass
class Found:
    """What the history holds of a request: steps (by index) and paths touched, lines counted."""

    steps: list[int] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)
    lines: int = 0
    cited: set[str] = field(default_factory=set)  # locators the removed lines cited


class _Reader:
    """Which trees and blobs the request changes, each read once (by id); nothing written."""

    def __init__(self, repo: pygit2.Repository, request: Forget) -> None:
        self.repo = repo
        self.request = request
        self.blobs: dict[pygit2.Oid, int] = {}  # lines the rule touches
        self.trees: dict[tuple[pygit2.Oid, str], tuple[bool, set[str], int]] = {}

    def blob(self, oid: pygit2.Oid) -> int:
        got = self.blobs.get(oid)
        if got is None:
            text = self.repo.odb.read(oid)[1].decode("utf-8", "surrogateescape")
            got = self.blobs[oid] = self.request.apply(text)[1]
        return got

    def tree(self, oid: pygit2.Oid, prefix: str) -> tuple[bool, set[str], int]:
        """Does the rule change this tree; the paths it changes, lines touched."""
        key = (oid, prefix)
        got = self.trees.get(key)
        if got is not None:
            return got
        tree = self.repo[oid]
        assert isinstance(tree, pygit2.Tree)
        changed, paths, lines = False, set[str](), 0
        for entry in tree:
            path = prefix + str(entry.name)
            if entry.filemode == TREE:
                sub_changed, sub, n = self.tree(entry.id, path + "/")
                changed, paths, lines = changed or sub_changed, paths | sub, lines + n
            elif self.request.file_goes(path) or (entry.filemode == BLOB and self.blob(entry.id)):
                changed = True
                paths.add(path)
                lines += self.blobs.get(entry.id, 0)
        got = self.trees[key] = (changed, paths, lines)
        return got


def _line(repo: pygit2.Repository) -> list[pygit2.Commit]:
    if repo.head_is_unborn:
        return []
    walk = repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walk.simplify_first_parent()
    return list(walk)


def scan(journal: Journal, request: Forget) -> Found:
    """What the history holds of `request`, nothing written (for a dry run and the record)."""
    found = Found()
    if not journal.exists:
        return found
    with journal._reading() as repo:
        reader = _Reader(repo, request)
        for i, c in enumerate(_line(repo)):
            _note(found, i, c, reader, request)
    return found


def _note(found: Found, i: int, c: pygit2.Commit, reader: _Reader, request: Forget) -> bool:
    """Is step `i` (commit `c`) one the request changes? Noted in `found` if so."""
    changed, paths, n = reader.tree(c.tree_id, "")
    if not changed and request.scrub(c.message) == c.message:
        return False
    found.steps.append(i)
    found.paths |= paths
    found.lines += n
    return True


def rewrite(journal: Journal, request: Forget, record: Record, *, live_changed: bool) -> Found:
    """Rewrite the history without what `request` matches and prune what is left unreachable.
    When the history held it but no live file did (`live_changed`), the step makes no commit of
    its own, so a `forget` commit holding `record` goes on top here. The writer lock is the
    caller's."""
    found = Found()
    git_dir = journal.git_dir
    if not journal.exists:
        return found
    with journal_lock(git_dir):
        repo = journal.repo()
        try:
            log = StepLog(git_dir)
            try:
                catch_up(repo, log)  # every acknowledged step in the history it rewrites
            finally:
                log.close()
            found = _rewrite(journal, repo, request, record)
            record.versions = len(found.steps)
            if found.steps and not live_changed:
                head = repo.head.target
                tip = repo[head]
                assert isinstance(tip, pygit2.Commit)
                step = Step("forget", {**record.meta(), "role": "forget"})
                commit(repo, tip.tree_id, step_message(step), record.time)
            _purge(journal, repo)
        finally:
            repo.free()
    return found


def _rewrite(journal: Journal, repo: pygit2.Repository, request: Forget, record: Record) -> Found:
    """Write the new line (`rewrite_stream.py`: one pack) and move HEAD onto it."""
    found = Found()
    reader, stream = _Reader(repo, request), Stream(repo, request)
    parent: bytes | None = None
    last: pygit2.Commit | None = None
    started = False
    for i, c in enumerate(_line(repo)):
        touched = _note(found, i, c, reader, request)
        if not started and not touched:
            last = c  # kept as it is
            continue
        if not started:
            started, parent = True, (str(last.id).encode() if last is not None else None)
        parent = stream.commit(c, changes_of(repo, c, last), parent, record.id if touched else None)
        last = c
    if not started:
        return found
    _drop_stale_locks(journal.git_dir)
    with contextlib.suppress(KeyError, pygit2.GitError):
        repo.references.delete(REF)  # a stopped forget's: the new line starts clean
    tip = write_stream(repo, stream, _clean_env(journal.git_dir, journal.root), journal.root)
    found.cited = stream.cited
    (journal.git_dir / MARK).write_text(record.id, encoding="ascii")
    set_head(repo, tip)
    return found


def _purge(journal: Journal, repo: pygit2.Repository) -> None:
    """Drop what the old history left: other refs, reflogs, the step log, the stat cache (its
    blobs may be the old ones), then every unreachable object."""
    git_dir = journal.git_dir
    if not (git_dir / MARK).exists():
        return
    _wait_for_gc(git_dir)
    _drop_stale_locks(git_dir)
    keep = repo.references["HEAD"].target
    for name in list(repo.references):
        if name != keep and name != "HEAD":
            repo.references.delete(name)
    log = StepLog(git_dir)
    try:
        log.clear()  # every record was committed before the rewrite; their bytes go now
    finally:
        log.close()
    for gone in (git_dir / STAT_CACHE, git_dir / "ORIG_HEAD", git_dir / "FETCH_HEAD"):
        with contextlib.suppress(FileNotFoundError):
            gone.unlink()
    shutil.rmtree(git_dir / "logs", ignore_errors=True)
    pruning = " while pruning the forgotten history"
    journal.run_git("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all", doing=pruning)
    journal.run_git("-c", "gc.packRefs=false", "gc", "--prune=now", "--quiet", doing=pruning)
    os.unlink(git_dir / MARK)


def _drop_stale_locks(git_dir: Path) -> None:
    """Remove the `.lock` files a killed forget left on its own refs (`refs/memdir/`): only a
    forget writes them, and every forget holds the journal lock the caller holds now, so such a
    lock is no one's, and libgit2 would refuse to touch the ref while it stands."""
    for lock in (git_dir / "refs" / "memdir").rglob("*.lock"):
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()


def _wait_for_gc(git_dir: Path, timeout: float = 600.0) -> None:
    """Wait for a `git gc` still running on this journal: a forget killed while it pruned
    leaves its gc running, and a second gc started meanwhile would find the first's `gc.pid` and
    do nothing, pruning nothing."""
    pid_file = git_dir / "gc.pid"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid = int(pid_file.read_text(encoding="ascii").split()[0])
            os.kill(pid, 0)
        except (OSError, ValueError, IndexError):
            return  # no gc.pid, or its gc is gone (`kill` raises ProcessLookupError)
        time.sleep(0.05)


def resume(journal: Journal) -> bool:
    """Finish the pruning a killed forget left (its mark still there); True when it had to."""
    if not (journal.git_dir / MARK).exists():
        return False
    with journal_lock(journal.git_dir):
        repo = journal.repo()
        try:
            _purge(journal, repo)
        finally:
            repo.free()
    return True
