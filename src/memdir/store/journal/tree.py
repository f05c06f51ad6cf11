"""The journal's writer: commits built in process with libgit2 (pygit2), no git process.

A step's commit is the newest snapshot's tree with the step's own paths replaced: each path
is read once through the store's link-safe descriptors (`SafeRoot.read`, which refuses links
and hard-linked files), hashed into a blob, and spliced into the trees above it; every other
tree is reused by id. So a step costs its own paths and their folders, not the store's size,
and git's index file is never read or written (at 50,000 files, reading and writing it was
most of a step's cost). The commit goes onto HEAD under the journal lock (`catch_up.py`),
so several processes append in turn.

Each object file (and its folder) is fsynced as libgit2 writes it, so it is on disk before the
ref that names it moves: a power cut could otherwise leave HEAD naming a commit that was never
written, which stopped every later step (issue 33; `repair.py` mends a journal damaged
so before). The ref itself is not fsynced: one lost after a power cut leaves the journal a step
behind the files, which the next process's whole-tree check commits (`reconcile.py`).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from memdir.errors import MemdirError
from memdir.store.atomic import write_atomic
from memdir.store.journal.format import MEMORY_PREFIX, found, why_skipped
from memdir.store.private import create
from memdir.store.safefs import SafeRoot, Unread, printable, private_dirs
from memdir.store.store import Change

BLOB = pygit2.enums.FileMode.BLOB
TREE = pygit2.enums.FileMode.TREE
IDENTITY = ("memdir", "memdir@localhost")
STAT_CACHE = "memdir-stat-cache"  # {path: (size, mtime_ns, blob)} of the last whole-tree check
IN_FLIGHT = "memdir-in-flight"  # b"1" while a step's writes may be ahead of the journal
RACY_NS = 1_000_000_000  # a file modified this close to a check is hashed again next time
DIR = "dir"

pygit2.option(pygit2.enums.Option.ENABLE_FSYNC_GITDIR, True)  # every process that commits imports this

Updates = dict[str, pygit2.Oid | None]  # path relative to the root: its new blob, or gone
Hook = Callable[[pygit2.Oid], None] | None


@dataclass
class Staged:
    """What a set of paths adds to a commit: blobs to splice in, and what was left out."""

    updates: Updates = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)  # create / modify / delete, by path
    skipped: list[Unread] = field(default_factory=list)
    stats: dict[str, tuple[int, int, str]] = field(default_factory=dict)  # for the stat cache


def look(safe: SafeRoot, rel: str) -> tuple[bytes | Unread | str | None, os.stat_result | None]:
    """The bytes of a plain file at `rel` (with its lstat from just before the read); None when
    nothing is there; DIR for a folder; an `Unread` saying why anything else (a link, a FIFO, a
    hard-linked file) is not journaled."""
    parts = tuple(rel.split("/"))
    shown = MEMORY_PREFIX + rel
    try:
        st, data = safe.lstat_read(parts, shown, _plain)
    except MemdirError:  # a parent is a link or a file now
        return Unread(printable(parts), "leads through a link or a file; not journaled"), None
    if st is None:
        return None, None
    if data is not None:
        return data, st
    if stat.S_ISDIR(st.st_mode):
        return DIR, None
    if not _plain(st):
        return why_skipped(found(parts, st)), None
    # The read failed: removed, swapped for a link or linked meanwhile; read again later.
    again = safe.lstat(parts, shown)
    return (why_skipped(found(parts, again)) if again is not None else None), None


def _plain(st: os.stat_result) -> bool:
    """A file the journal keeps: regular, with one link (shared with nothing outside)."""
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def blob_at(tree: pygit2.Tree | None, rel: str) -> str | None:
    if tree is None:
        return None
    try:
        entry = tree[rel]
    except KeyError:
        return None
    return str(entry.id) if entry.filemode != TREE else None


Captured = list[tuple[str, bytes | Unread | str | None, os.stat_result | None]]  # (rel, look(), lstat)


def capture(safe: SafeRoot, rels: set[str]) -> Captured:
    """Each of `rels` as it is now (`look`), in path order: what a step commits."""
    return [(rel, *look(safe, rel)) for rel in sorted(rels)]


def stage(repo: pygit2.Repository, safe: SafeRoot, tree: pygit2.Tree | None, rels: set[str]) -> Staged:
    """Read each of `rels` now and say how it differs from `tree`."""
    return staged_from(repo, tree, capture(safe, rels))


def staged_from(repo: pygit2.Repository, tree: pygit2.Tree | None, captured: Captured) -> Staged:
    """How what was captured differs from `tree`: its new blobs written, its deletions noted."""
    out = Staged()
    for rel, got, st in captured:
        old = blob_at(tree, rel)
        if got == DIR and old is None:
            continue  # a folder now: its files are steps (or a whole-tree check) of their own
        if isinstance(got, bytes):
            oid = pygit2.hash(got)
            if str(oid) != old:
                out.updates[rel] = repo.create_blob(got)
                out.changes.append(Change("modify" if old else "create", MEMORY_PREFIX + rel))
            if st is not None:  # taken before the read: a file changed since is read again
                out.stats[rel] = (st.st_size, st.st_mtime_ns, str(oid))
            continue
        if isinstance(got, Unread):
            out.skipped.append(got)
        if old is not None:
            out.updates[rel] = None
            out.changes.append(Change("delete", MEMORY_PREFIX + rel))
    return out


def splice(
    repo: pygit2.Repository, tree: pygit2.Tree | None, updates: dict[tuple[str, ...], pygit2.Oid | None]
) -> pygit2.Oid | None:
    """`tree` with `updates` applied (None removes); only the folders on changed paths are
    written again. Returns None for a folder left empty (git keeps no empty folders)."""
    tb = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    here = {parts[0]: oid for parts, oid in updates.items() if len(parts) == 1}
    below: dict[str, dict[tuple[str, ...], pygit2.Oid | None]] = {}
    for parts, oid in updates.items():
        if len(parts) > 1:
            below.setdefault(parts[0], {})[parts[1:]] = oid
    for name in sorted(here.keys() | below.keys()):
        entry = tb.get(name)
        sub = None
        if name in below:  # a folder on disk wins over a file of the same name
            sub = splice(repo, entry if isinstance(entry, pygit2.Tree) else None, below[name])
        blob = here.get(name)
        if sub is not None:
            tb.insert(name, sub, TREE)
        elif blob is not None:
            tb.insert(name, blob, BLOB)
        elif entry is not None and (name in here or isinstance(entry, pygit2.Tree)):
            tb.remove(name)  # deleted, or a folder left empty
    return tb.write() if len(tb) else None


def apply(repo: pygit2.Repository, tree: pygit2.Tree | None, updates: Updates) -> pygit2.Oid:
    new = splice(repo, tree, {tuple(rel.split("/")): oid for rel, oid in updates.items()})
    return new if new is not None else repo.TreeBuilder().write()


def commit(
    repo: pygit2.Repository, tree: pygit2.Oid, message: str, when: int | None = None, before_head: Hook = None
) -> pygit2.Oid:
    """Put a commit of `tree` on HEAD (the caller holds the journal lock), dated `when` (the
    step's time) or now; `before_head` is told the commit once it exists, before HEAD moves."""
    parents = [] if repo.head_is_unborn else [repo.head.target]
    sig = pygit2.Signature(*IDENTITY, int(time.time()) if when is None else when, 0)
    oid = repo.create_commit(None, sig, sig, message, tree, parents)
    if before_head is not None:
        before_head(oid)
    set_head(repo, oid)
    return oid


def set_head(repo: pygit2.Repository, oid: pygit2.Oid) -> None:
    """Point the branch HEAD names at `oid` by rewriting its 41 bytes in place.

    libgit2 (like git) writes a ref to a lock file and renames it over the old one; on ext4 a
    rename over an existing file starts writeback of the new one (`auto_da_alloc`), which cost
    more than the rest of the commit (benchmarks/results/2026-12-06-docstring-figures.md,
    "store/journal/tree.py"). One `pwrite` of a same-length file is whole or absent after a
    kill. No other writer can race it: every memdir committer holds the journal lock, and the
    housekeeping `git gc` runs with gc.packRefs=false (a ref packed and pruned under us could
    lose a step). A reader outside the lock that meets the 41-byte copy mid-way could read a mix
    of two ids, which names no object: git then reports a bad ref for that one read (the
    whole-tree check on its own thread reads HEAD under the journal lock)."""
    name = repo.references["HEAD"].target
    if not isinstance(name, str):  # a detached HEAD (set by hand): let libgit2 move it
        repo.set_head(oid)
        return
    path = Path(repo.path) / name
    private_dirs(path.parent)
    data = f"{oid}\n".encode()
    fd = create(path)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def head_tree(repo: pygit2.Repository) -> pygit2.Tree | None:
    if repo.head_is_unborn:
        return None
    tip = repo[repo.head.target]
    assert isinstance(tip, pygit2.Commit)
    return tip.tree


# -- the stat cache: which files a whole-tree check need not read again ----------------------
@dataclass
class StatCache:
    """{path: (size, mtime_ns, blob)} of the files as a whole-tree check saw them, and the tree
    they made: a file whose size and mtime are unchanged, on a path no commit since has
    touched, still holds that blob, so only changed files are read (as git's index does)."""

    tree: str = ""
    taken_ns: int = 0
    entries: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, git_dir: Path) -> StatCache | None:
        try:
            data = marshal.loads((git_dir / STAT_CACHE).read_bytes())
            tree, taken, entries = data
            if not (isinstance(tree, str) and isinstance(taken, int) and isinstance(entries, dict)):
                return None
            return cls(tree, taken, entries)
        except (OSError, EOFError, ValueError, TypeError):
            return None  # absent or unreadable: the next check reads every file

    def save(self, git_dir: Path) -> None:
        write_atomic(git_dir / STAT_CACHE, marshal.dumps((self.tree, self.taken_ns, self.entries)))


def open_mark(path: str) -> int:
    """A descriptor of the in-flight mark (created if absent), through which a step reads it,
    sets it and clears it with one open. The mark is one byte, only ever rewritten in place
    (never replaced), so this descriptor reads what another process last wrote; no fsync (a
    killed process loses nothing the kernel has). `path` is the git dir's IN_FLIGHT, joined once."""
    return create(path, os.O_RDWR)


def marked(fd: int) -> bool:
    """Is the mark set (a step's writes may be ahead of the journal)? Unreadable counts as not."""
    with contextlib.suppress(OSError):
        return os.pread(fd, 1, 0) == b"1"
    return False


def set_mark(fd: int, flag: bool) -> None:
    os.pwrite(fd, b"1" if flag else b"0", 0)
