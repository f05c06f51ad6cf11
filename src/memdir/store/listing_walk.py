"""The walk behind a folder listing: the entries of its first levels, and the bytes below.

A listing shows a few levels (tools/view.py: LIST_DEPTH) but a folder's size counts everything
inside it, so every file of the subtree is stat'ed once. `Store.walk` yields an object per entry
in sorted order; below the shown levels that is wasted, since only a sum is needed there. So
this walk keeps `SafeRoot.scan`'s rules everywhere (descriptors opened `O_NOFOLLOW` from the
root, so a folder swapped for a link is never followed; hidden names skipped; names that are
not UTF-8 and folders below MAX_DEPTH levels reported as unread, never entered; at most one
descriptor per level) and its sorted order on the shown levels, but below them only adds up
sizes, folder by folder in a tight loop (the shape of search/scan.py's walk). The unread
findings come out in the order `Store.walk` gives them: its depth-first walk over sorted names
visits paths in the sorted order of their parts, so sorting the findings by parts restores it.
tests/store/test_view_cache.py checks the result against `Store.walk` on a tree with every kind of
entry.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

from memdir.store.paths import MAX_DEPTH
from memdir.store.safefs import Found, FoundKind, SafeRoot, Unread, unread, utf8_name

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NAME = attrgetter("name")


class Seen(NamedTuple):
    """A file or folder on the shown levels; a file with the stat a description cache is keyed
    by (a folder's type comes from its directory entry, with no stat: its times are 0). A
    tuple: a listing makes hundreds of these."""

    parts: tuple[str, ...]
    is_dir: bool
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int


@dataclass
class LevelWalk:
    """`entries`: the files and folders at most `depth` levels below the top, sorted by parts;
    `totals`: the bytes below each of those folders and the top; `unread`: what was left
    unread, in `Store.walk`'s order."""

    entries: list[Seen] = field(default_factory=list)
    totals: dict[tuple[str, ...], int] = field(default_factory=dict)
    unread: list[Unread] = field(default_factory=list)


def walk_levels(safe: SafeRoot, parts: tuple[str, ...], shown: str, depth: int) -> LevelWalk:
    """The listing walk of the folder at `parts` (an existing folder; `shown` is its path for
    errors): entries down to `depth` levels (at least 1), sizes of everything."""
    if depth < 1:
        raise ValueError(f"a listing shows at least one level, not {depth}")
    out = LevelWalk()
    skipped: list[tuple[tuple[str, ...], FoundKind]] = []
    below: dict[tuple[str, ...], int] = {}  # folder at the last shown level -> bytes inside it
    if len(parts) > MAX_DEPTH:
        out.unread.extend(_findings([(parts, "too-deep")]))
        out.totals[parts] = 0
        return out
    top = safe.open_dir(parts, shown)
    stack: list[tuple[int, tuple[str, ...], Iterator[os.DirEntry[str]]]] = [(top, parts, _sorted(top))]
    last = len(parts) + depth
    try:
        while stack:
            fd, cur, it = stack[-1]
            ent = next(it, None)
            if ent is None:
                stack.pop()
                os.close(fd)
                continue
            name = ent.name
            if name[0] == ".":
                continue
            child = (*cur, name)
            if not name.isascii() and not utf8_name(name):
                skipped.append((child, "bad-name"))
                continue
            try:
                is_dir = ent.is_dir(follow_symlinks=False)  # the entry's type: no stat for a folder
                st = None if is_dir else ent.stat(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if len(child) > MAX_DEPTH:
                    skipped.append((child, "too-deep"))
                    continue
                out.entries.append(Seen(child, True, 0, 0, 0, 0))
                try:
                    cfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue  # swapped for a link or removed meanwhile: not ours to follow
                if len(child) < last:
                    stack.append((cfd, child, _sorted(cfd)))
                    continue
                try:
                    below[child] = _bytes_below(cfd, child, skipped)
                finally:
                    os.close(cfd)
            elif st is not None and stat.S_ISREG(st.st_mode):
                out.entries.append(Seen(child, False, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    out.totals = _totals(parts, out.entries, below)
    out.unread = _findings(sorted(skipped))
    return out


def _sorted(fd: int) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(fd) as it:
            return iter(sorted(it, key=_NAME))
    except OSError:
        return iter(())


def _bytes_below(top: int, parts: tuple[str, ...], skipped: list[tuple[tuple[str, ...], FoundKind]]) -> int:
    """The bytes of every visible regular file below the folder open at `top` (not closed
    here), noting what is left unread in `skipped`."""
    total, subdirs = _folder_bytes(top, parts, skipped)
    stack: list[tuple[int, tuple[str, ...], Iterator[str]]] = [(top, parts, iter(subdirs))]
    try:
        while stack:
            fd, cur, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if fd != top:
                    os.close(fd)
                continue
            child = (*cur, name)
            if len(child) > MAX_DEPTH:
                skipped.append((child, "too-deep"))
                continue
            try:
                cfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            size, subs = _folder_bytes(cfd, child, skipped)
            total += size
            stack.append((cfd, child, iter(subs)))
    finally:
        for fd, _, _ in stack:
            if fd != top:
                os.close(fd)
    return total


def _folder_bytes(
    fd: int, parts: tuple[str, ...], skipped: list[tuple[tuple[str, ...], FoundKind]]
) -> tuple[int, list[str]]:
    """(bytes of the regular files directly in the folder open at `fd`, its subfolders' names)."""
    size = 0
    subdirs: list[str] = []
    try:
        with os.scandir(fd) as it:
            for ent in it:
                name = ent.name
                if name[0] == ".":
                    continue
                if not name.isascii() and not utf8_name(name):
                    skipped.append(((*parts, name), "bad-name"))
                    continue
                try:
                    if ent.is_dir(follow_symlinks=False):
                        subdirs.append(name)
                    else:
                        st = ent.stat(follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode):  # a link, FIFO or device holds no bytes here
                            size += st.st_size
                except OSError:
                    continue
    except OSError:
        pass
    return size, subdirs


def _totals(
    top: tuple[str, ...], entries: list[Seen], below: dict[tuple[str, ...], int]
) -> dict[tuple[str, ...], int]:
    """Bytes below the top and each shown folder: each file's size goes to its own folder,
    then folders add up into their parents, children first."""
    totals: dict[tuple[str, ...], int] = {top: 0}
    folders = [top]
    for e in entries:
        if e.is_dir:
            totals[e.parts] = below.get(e.parts, 0)
            folders.append(e.parts)
    for e in entries:
        if not e.is_dir:
            totals[e.parts[:-1]] += e.size
    for p in reversed(folders[1:]):  # the walk met every folder before its children
        totals[p[:-1]] += totals[p]
    return totals


def _findings(skipped: list[tuple[tuple[str, ...], FoundKind]]) -> list[Unread]:
    found = (unread(Found(p, kind)) for p, kind in skipped)
    return [u for u in found if u is not None]
