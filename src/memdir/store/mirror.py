"""Trees of entries compared by content, and mirroring one folder onto another safely.

`scan` describes a folder without following links (files by content digest, cached by inode
and change time); `mirror` makes another folder match such a description through directory
descriptors opened without following links, so a link swapped in mid-way cannot redirect a
write. The shell's working copy uses both, in both directions.

Both bound depth like the rest of the store (`paths.MAX_DEPTH`): `scan` walks with an explicit
stack of descriptors, enters no folder below MAX_DEPTH levels and names those it left out, and
removals go through `safefs.remove_tree`, iterative too. A command that made a 2,200-level tree
once left a copy every later call crashed on (the recursive standard-library removal and path
strings past PATH_MAX), and a removal of a 1,100-level tree was never carried back.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import PathError
from memdir.store.paths import MAX_DEPTH, STATE_DIR
from memdir.store.safefs import TMP_PREFIX, SafeRoot, remove_tree

Rel = tuple[str, ...]
STABLE_NS = 2_000_000_000  # a digest is cached only for a file unchanged this long (see _digest)
_CACHE: dict[tuple[int, int, int, int, int], str] = {}
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Node:
    """One entry of a tree: kind 'dir', 'file', 'link' or 'other'; digest of a file, target of a link."""

    kind: str
    mode: int = 0
    value: str = ""


def _digest(d: int, name: str, st: os.stat_result) -> str:
    """Content digest, cached by (device, inode, size, mtime, ctime).

    ctime cannot be set from user space and moves on every change, so an unchanged key means
    unchanged content, provided the key was recorded after the file had been still for a while:
    two writes within one coarse clock tick could otherwise share a ctime.
    """
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    h = hashlib.blake2b(digest_size=20)
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=d)
    with open(fd, "rb", buffering=0) as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    digest = h.hexdigest()
    if st.st_ctime_ns < time.time_ns() - STABLE_NS:
        if len(_CACHE) > 500_000:
            _CACHE.clear()
        _CACHE[key] = digest
    return digest


def scan(
    top: Path,
    *,
    shared_as_other: bool = False,
    strict: bool = False,
    deep: list[Rel] | None = None,
) -> dict[Rel, Node]:
    """Every entry under `top` except the state folder, never following links.

    With `shared_as_other`, a file with several hard links counts as 'other' (never copied,
    never touched): it may be linked from outside the store, so its content must not reach the
    sandbox. With `strict`, an entry that cannot be read raises instead of being left out (left
    out of the copy's scan, it would look deleted). A folder below MAX_DEPTH levels is neither
    entered nor described; it is appended to `deep`. At most MAX_DEPTH + 1 descriptors are
    open at once, and no path string is ever built, so no name length or depth overflows.
    """
    tree: dict[Rel, Node] = {}
    try:
        first = os.open(top, _DIR_FLAGS)
    except OSError:
        if strict:
            raise
        return tree
    try:
        listing = _entries(first, top, (), strict)
    except BaseException:
        os.close(first)
        raise
    stack: list[tuple[int, Rel, Iterator[os.DirEntry[str]]]] = [(first, (), listing)]
    try:
        while stack:
            fd, rel, it = stack[-1]
            ent = next(it, None)
            if ent is None:
                stack.pop()
                os.close(fd)
                continue
            if not rel and ent.name == STATE_DIR:
                continue
            child = (*rel, ent.name)
            try:
                st = ent.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if len(child) > MAX_DEPTH:
                        if deep is not None:
                            deep.append(child)
                        continue
                    cfd = os.open(ent.name, _DIR_FLAGS, dir_fd=fd)
                    try:
                        listing = _entries(cfd, top, child, strict)
                    except BaseException:
                        os.close(cfd)
                        raise
                    tree[child] = Node("dir", stat.S_IMODE(st.st_mode))
                    stack.append((cfd, child, listing))
                elif stat.S_ISREG(st.st_mode) and not (shared_as_other and st.st_nlink > 1):
                    tree[child] = Node("file", stat.S_IMODE(st.st_mode), _digest(fd, ent.name, st))
                elif stat.S_ISLNK(st.st_mode):
                    tree[child] = Node("link", 0, os.readlink(ent.name, dir_fd=fd))
                else:
                    tree[child] = Node("other")
            except OSError as exc:
                if strict:
                    raise OSError(exc.errno, exc.strerror, str(top.joinpath(*child))) from None
                if child not in tree:  # a file (or folder) that cannot be read is not copied
                    tree[child] = Node("other")
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    return tree


def _entries(fd: int, top: Path, rel: Rel, strict: bool) -> Iterator[os.DirEntry[str]]:
    """A folder's entries, listed whole before the walk goes on."""
    try:
        with os.scandir(fd) as it:
            return iter(list(it))
    except OSError as exc:
        if strict:
            raise OSError(exc.errno, exc.strerror, str(top.joinpath(*rel))) from None
        return iter(())


def mirror(
    src: Path,
    src_tree: dict[Rel, Node],
    dst: Path,
    dst_tree: dict[Rel, Node],
    *,
    owner: int | None = None,
    keep_unseen_other: bool = False,
    durable: bool = True,
) -> list[str]:
    """Make `dst` hold what `src_tree` describes; returns notes on what could not be mirrored.

    `dst_tree` must describe `dst` now. 'other' entries of `src` are not mirrored. With
    `keep_unseen_other`, 'other' entries of `dst` that `src` does not have are left alone (they
    were never copied out). `owner` becomes the owner of everything created in `dst`. With
    `durable`, written files and changed folders are fsynced (the disposable copy skips it).
    Every operation goes through directory descriptors opened without following links
    (:class:`SafeRoot`), on both sides, so a swapped-in link cannot redirect it.
    """
    notes: list[str] = []
    sroot, droot = SafeRoot(src), SafeRoot(dst)
    wanted = {rel: node for rel, node in src_tree.items() if node.kind != "other"}
    removed: list[Rel] = []
    touched: set[Rel] = set()
    for rel in sorted(dst_tree, key=len):
        old, new = dst_tree[rel], wanted.get(rel)
        if new is not None and new.kind == old.kind:
            continue
        if keep_unseen_other and old.kind == "other" and rel not in src_tree:
            continue
        if any(rel[: len(r)] == r for r in removed):
            continue  # went with its folder
        with droot.dir_fd(rel[:-1], _shown(rel)) as d:
            if stat.S_ISDIR(os.stat(rel[-1], dir_fd=d, follow_symlinks=False).st_mode):
                remove_tree(d, rel[-1])  # all of it, below MAX_DEPTH too: nothing there is seen
            else:
                os.unlink(rel[-1], dir_fd=d)
        removed.append(rel)
        touched.add(rel[:-1])
    for rel in sorted(src_tree, key=len):
        was, new = dst_tree.get(rel), src_tree[rel]
        if was == new and new.kind != "other":
            continue  # the common case: nothing to do (an entry below a removed one has no `was`)
        if new.kind == "other":
            notes.append(f"{'/'.join(rel)}: not a file, folder or link; it was not kept")
            continue
        with droot.dir_fd(rel[:-1], _shown(rel)) as d:
            name = rel[-1]
            if was is not None and was.kind == new.kind and was.value == new.value:
                if new.kind != "link":  # only the mode changed
                    _set_mode(d, name, new, None)
                continue
            if new.kind == "dir":
                os.mkdir(name, 0o700, dir_fd=d)
                _set_mode(d, name, new, owner)
            elif new.kind == "file":  # a copy, never the inode: a hard link made on one side stays there
                tmp = TMP_PREFIX + uuid.uuid4().hex
                with sroot.dir_fd(rel[:-1], _shown(rel)) as s:
                    _copy_file(s, name, d, tmp, new.mode | 0o600, owner, durable)
                os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)
            else:
                tmp = TMP_PREFIX + uuid.uuid4().hex
                os.symlink(new.value, tmp, dir_fd=d)
                if owner is not None:
                    os.chown(tmp, owner, owner, dir_fd=d, follow_symlinks=False)
                os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)
        touched.add(rel[:-1])
    for parent in touched if durable else ():
        with contextlib.suppress(OSError), droot.dir_fd(parent, _shown(parent)) as d:
            os.fsync(d)
    return notes


def _shown(rel: Rel) -> str:
    return "/memories" + "".join("/" + p for p in rel)


def _set_mode(d: int, name: str, node: Node, owner: int | None) -> None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    fd = os.open(name, flags | (os.O_DIRECTORY if node.kind == "dir" else 0), dir_fd=d)
    try:
        os.fchmod(fd, node.mode | (0o700 if node.kind == "dir" else 0o600))
        if owner is not None:
            os.fchown(fd, owner, owner)
    finally:
        os.close(fd)


def _copy_file(s: int, name: str, d: int, tmp: str, mode: int, owner: int | None, durable: bool) -> None:
    """Copy regular file `name` in folder `s` to new file `tmp` in folder `d`, never via a link."""
    inp = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=s)
    try:
        if not stat.S_ISREG(os.fstat(inp).st_mode):
            raise PathError(f"{name}: changed into something that is not a file while being copied")
        out = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=d
        )
        try:
            with os.fdopen(os.dup(inp), "rb") as fin, os.fdopen(os.dup(out), "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
            os.fchmod(out, mode)
            if owner is not None:
                os.fchown(out, owner, owner)
            if durable:
                os.fsync(out)
        except BaseException:
            os.close(out)
            out = -1
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=d)
            raise
        finally:
            if out >= 0:
                os.close(out)
    finally:
        os.close(inp)
