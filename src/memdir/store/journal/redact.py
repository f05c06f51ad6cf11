"""Forgetting through every version: the journal's history rewritten so no object holds what a
`Forget` request (`store/redaction.py`) removes, then every object no longer reachable pruned.

Each commit of the first-parent line is made again with its files passed through the request's
rule, its message scrubbed, its author and committer (so its time) kept, its trailers kept
(tool, operation, kind: what `history` groups by) and one trailer added, `Memdir-Redacted: <id>`,
the marker `history` and the UI show where something went. Trees and blobs are rewritten once
each (a map by id), so a step costs the folders on its own paths, as a commit does (`tree.py`);
the commits before the first one touched are kept as they are.

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
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from memdir.conventions import locators
from memdir.errors import MemdirError
from memdir.store.journal.catch_up import catch_up, journal_lock
from memdir.store.journal.format import message as step_message
from memdir.store.journal.log import StepLog
from memdir.store.journal.repository import Journal, _clean_env
from memdir.store.journal.tree import BLOB, STAT_CACHE, TREE, commit, set_head
from memdir.store.redaction import Forget, Record
from memdir.store.store import Step

MARK = "memdir-redacting"
TRAILER = "Memdir-Redacted"


@dataclass
class Found:
    """What the history holds of a request: steps (by index) and paths touched, lines counted."""

    steps: list[int] = field(default_factory=list)
    paths: set[str] = field(default_factory=set)
    lines: int = 0
    cited: set[str] = field(default_factory=set)  # locators the removed lines cited


class _Rewriter:
    """Blobs and trees rewritten once each, by id; `dry` writes nothing (a new blob is only
    hashed, a changed tree only noted), for a dry run."""

    def __init__(self, repo: pygit2.Repository, request: Forget, *, dry: bool = False) -> None:
        self.repo = repo
        self.request = request
        self.dry = dry
        self.blobs: dict[pygit2.Oid, tuple[pygit2.Oid | None, int]] = {}
        self.trees: dict[tuple[pygit2.Oid, str], tuple[pygit2.Oid | None, set[str], int]] = {}
        self.cited: set[str] = set()

    def blob(self, oid: pygit2.Oid) -> tuple[pygit2.Oid | None, int]:
        """The blob with the rule applied (the same id when nothing matched), lines touched."""
        got = self.blobs.get(oid)
        if got is None:
            data = self.repo.odb.read(oid)[1]
            text = data.decode("utf-8", "surrogateescape")
            new, touched = self.request.apply(text)
            if touched:
                kept = set(new.split("\n"))
                self.cited.update(locators("\n".join(x for x in text.split("\n") if x not in kept)))
                raw = new.encode("utf-8", "surrogateescape")
                got = (pygit2.hash(raw) if self.dry else self.repo.create_blob(raw), touched)
            else:
                got = (oid, 0)
            self.blobs[oid] = got
        return got

    def tree(self, oid: pygit2.Oid, prefix: str) -> tuple[pygit2.Oid | None, set[str], int]:
        """The tree rewritten (None when left empty), the paths it changed, lines touched."""
        key = (oid, prefix)
        got = self.trees.get(key)
        if got is not None:
            return got
        tree = self.repo[oid]
        assert isinstance(tree, pygit2.Tree)
        tb: pygit2.TreeBuilder | None = None
        paths: set[str] = set()
        lines = 0
        for entry in tree:
            name, path = str(entry.name), prefix + str(entry.name)
            new: pygit2.Oid | None
            if entry.filemode == TREE:
                new, sub, n = self.tree(entry.id, path + "/")
                paths |= sub
            elif self.request.file_goes(path):
                new, n = None, 0
                paths.add(path)
            elif entry.filemode == BLOB:
                new, n = self.blob(entry.id)
                if n:
                    paths.add(path)
            else:
                continue
            lines += n
            if new == entry.id:
                continue
            if tb is None:
                tb = self.repo.TreeBuilder(tree)
            if self.dry:
                continue
            if new is None:
                tb.remove(name)
            else:
                tb.insert(name, new, entry.filemode)
        if tb is None:
            got = (oid, paths, lines)
        elif self.dry:
            got = (None, paths, lines)  # changed: what it would be is not needed
        else:
            got = (tb.write() if len(tb) else None, paths, lines)
        self.trees[key] = got
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
        rw = _Rewriter(repo, request, dry=True)
        for i, c in enumerate(_line(repo)):
            new, paths, n = rw.tree(c.tree_id, "")
            if new != c.tree_id or request.scrub(c.message) != c.message:
                found.steps.append(i)
                found.paths |= paths
                found.lines += n
    return found


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
            found = _rewrite(repo, request, record)
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


def _rewrite(repo: pygit2.Repository, request: Forget, record: Record) -> Found:
    found = Found()
    rw = _Rewriter(repo, request)
    parent: pygit2.Oid | None = None
    changed = False
    for i, c in enumerate(_line(repo)):
        new_tree, paths, n = rw.tree(c.tree_id, "")
        text = request.scrub(c.message)
        touched = new_tree != c.tree_id or text != c.message
        if touched:
            found.steps.append(i)
            found.paths |= paths
            found.lines += n
            text = text.rstrip("\n") + f"\n{TRAILER}: {record.id}\n"
        parents = [parent] if parent is not None else []
        same_parent = c.parent_ids[:1] == parents
        if not touched and same_parent:
            parent = c.id
            continue
        tree = new_tree if new_tree is not None else repo.TreeBuilder().write()
        parent = repo.create_commit(None, c.author, c.committer, text, tree, parents)
        changed = True
    found.cited = rw.cited
    if changed and parent is not None:
        (Path(repo.path) / MARK).write_text(record.id, encoding="ascii")
        set_head(repo, parent)
    return found


def _purge(journal: Journal, repo: pygit2.Repository) -> None:
    """Drop what the old history left: other refs, reflogs, the step log, the stat cache (its
    blobs may be the old ones), then every unreachable object."""
    git_dir = journal.git_dir
    if not (git_dir / MARK).exists():
        return
    keep = repo.references["HEAD"].target
    for name in list(repo.references):
        if name != keep and name != "HEAD":
            repo.references.delete(name)
    StepLog(git_dir).clear()
    for gone in (git_dir / STAT_CACHE, git_dir / "ORIG_HEAD", git_dir / "FETCH_HEAD"):
        with contextlib.suppress(FileNotFoundError):
            gone.unlink()
    shutil.rmtree(git_dir / "logs", ignore_errors=True)
    _wait_for_gc(git_dir)
    _git(journal, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    _git(journal, "-c", "gc.packRefs=false", "gc", "--prune=now", "--quiet")
    os.unlink(git_dir / MARK)


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


def _git(journal: Journal, *args: str) -> None:
    proc = subprocess.run(
        ["git", "-c", "safe.directory=*", *args],
        capture_output=True,
        env=_clean_env(journal.git_dir, journal.root),
        cwd=journal.root,
        check=False,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise MemdirError(f"journal: git {args[0]} failed while pruning the forgotten history: {err}")
