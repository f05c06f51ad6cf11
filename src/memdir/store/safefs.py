"""File operations that cannot be redirected out of the root, even by a concurrent swap.

Checking a path and then opening it leaves a window in which another process (a sandboxed
shell command, a hostile neighbour) can replace a folder with a symlink. So every operation
walks from the root with directory file descriptors opened `O_NOFOLLOW`, and acts on the last
component relative to its parent's descriptor: what was checked is what is used.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from memdir.errors import ExistsError, NotFoundError, PathError
from memdir.store.dirsync import fsync_folder, fsync_folders
from memdir.store.paths import MAX_DEPTH, PREFIX, unplain
from memdir.store.secrets import SecretHit, redact_bytes
from memdir.store.secrets_allow import allowed_in

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
TMP_PREFIX = ".memdir-tmp-"
# Memory is private: a file memdir creates is its owner's alone, as is a folder, whatever the
# umask (a container's is often 0). A file it rewrites keeps the mode it had, and a folder that
# exists keeps its own: the owner of an existing store chose those (docs/api.md).
FILE_MODE = 0o600
DIR_MODE = 0o700
# Descriptors one folder removal holds at most; a folder met deeper than this is first moved up
# into the folder being removed, so a tree of any depth is removed without running out of them.
REMOVE_WINDOW = 64

FoundKind = Literal["dir", "file", "link", "other", "too-deep", "bad-name"]


class Found(NamedTuple):
    """One entry a scan met. `too-deep` is a folder below MAX_DEPTH levels and `bad-name` a name
    that is not UTF-8 (no memory path can name it): neither is descended into or read."""

    parts: tuple[str, ...]
    kind: FoundKind
    size: int = 0
    mtime_ns: int = 0
    nlink: int = 1


@dataclass(frozen=True)
class Unread:
    """Something a walk found and left unread, with the reason, for whoever reads its result."""

    path: str
    reason: str
    kind: str = ""  # the scan's kind: "too-deep" or "bad-name"

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


UNREAD_REASONS: dict[str, str] = {
    "too-deep": f"folders deeper than {MAX_DEPTH} levels are not read; delete this folder or one above it",
    "bad-name": "the name is not UTF-8 text, so no memory path can name it; rename it outside memory",
}


def printable(parts: tuple[str, ...]) -> str:
    """The memory path of `parts` as printable text (bytes that are not UTF-8 as \\xNN)."""
    text = PREFIX + "".join("/" + p for p in parts)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def unread(found: Found) -> Unread | None:
    """The finding for an entry a scan did not read, or None for one it read or passes over."""
    reason = UNREAD_REASONS.get(found.kind)
    return None if reason is None else Unread(printable(found.parts), reason, found.kind)


def utf8_name(name: str) -> bool:
    """False for a name whose bytes are not UTF-8 (os.scandir decodes those as lone surrogates)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path_error(exc: OSError, shown: str) -> PathError | NotFoundError:
    if exc.errno == errno.ELOOP:
        return PathError(f"{shown}: leads through a symbolic link; memory does not follow links")
    if exc.errno == errno.ENOTDIR:
        return PathError(f"{shown}: a parent of this path is a file, not a folder")
    if exc.errno == errno.ENOENT:
        hint = "; to make a new file, use create" if shown.endswith(".md") else ""
        return NotFoundError(f"{shown} does not exist; view its folder to see what is there{hint}")
    return PathError(f"{shown}: {os.strerror(exc.errno or 0)}")


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


class SafeRoot:
    """The root's operations, each relative to a descriptor chain that never follows a link."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.allowed: Callable[[str], bool] = allowed_in(root)  # a copy takes its store's

    @contextlib.contextmanager
    def dir_fd(self, parts: tuple[str, ...], shown: str, create: bool = False) -> Iterator[int]:
        fd = self._open_chain(parts, shown, create)
        try:
            yield fd
        finally:
            os.close(fd)

    def open_dir(self, parts: tuple[str, ...], shown: str) -> int:
        """A descriptor of the folder at `parts`, reached without following a link; the caller
        closes it (e.g. after handing it to a child process as `/proc/self/fd/N`)."""
        return self._open_chain(parts, shown, False)

    def _open_chain(self, parts: tuple[str, ...], shown: str, create: bool) -> int:
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts:
                try:
                    nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    made = True
                    try:
                        os.mkdir(part, DIR_MODE, dir_fd=fd)
                    except FileExistsError:
                        made = False  # made meanwhile by another writer: theirs, its mode too
                    nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                    if made:
                        os.fchmod(nfd, DIR_MODE)  # mkdir's mode passed through the umask
                os.close(fd)
                fd = nfd
        except OSError as exc:
            if exc.errno == errno.ENOTDIR and _is_link(part, fd):
                # O_DIRECTORY on a link says ENOTDIR: the folder on the way is a link, not a file
                exc = OSError(errno.ELOOP, os.strerror(errno.ELOOP))
            os.close(fd)
            raise _path_error(exc, shown) from None
        return fd

    def read(self, parts: tuple[str, ...], shown: str, limit: int | None = None) -> bytes:
        """The file's bytes (at most `limit` of them), refusing links, folders and hard links."""
        with self.dir_fd(parts[:-1], shown) as d:
            return _read_at(d, parts, shown, limit)

    def lstat_read(
        self, parts: tuple[str, ...], shown: str, wanted: Callable[[os.stat_result], bool]
    ) -> tuple[os.stat_result | None, bytes | None]:
        """`lstat` of the entry and, when `wanted(lstat)`, its bytes as `read` gives them, on
        one walk to its folder (a walk is an open per level; the journal looks at every file a
        step wrote, issue 47). (None, None) when absent, as `lstat`; bytes None when not wanted
        or when the read failed (removed, or swapped for a link, meanwhile)."""
        try:
            with self.dir_fd(parts[:-1], shown) as d:
                try:
                    st = os.stat(parts[-1], dir_fd=d, follow_symlinks=False)
                except FileNotFoundError:
                    return None, None
                if not wanted(st):
                    return st, None
                try:
                    return st, _read_at(d, parts, shown, None)
                except (NotFoundError, PathError, OSError):
                    return st, None
        except NotFoundError:
            return None, None

    @contextlib.contextmanager
    def open_plain(self, parts: tuple[str, ...], shown: str) -> Iterator[int]:
        """A read-only descriptor of the plain file at `parts` (refused as `read` refuses), for
        a reader that reads a part of it at a time (`store/window.py`: a page of a big file)."""
        with self.dir_fd(parts[:-1], shown) as d:
            fd, _st = _open_plain(d, parts, shown)
        try:
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def reader(self) -> Iterator[Reader]:
        """A `read` for a walk that reads many files: the descriptor of the folder it last read
        in is kept until it reads in another, so 100,000 notes in one folder cost one open
        each, not the chain from the root each (three opens, half of reading them)."""
        r = Reader(self)
        try:
            yield r
        finally:
            r.close()

    def lstat(self, parts: tuple[str, ...], shown: str) -> os.stat_result | None:
        """lstat of the entry, or None when absent (also when a parent is absent)."""
        if not parts:
            return os.lstat(self.root)
        try:
            with self.dir_fd(parts[:-1], shown) as d:
                return os.stat(parts[-1], dir_fd=d, follow_symlinks=False)
        except NotFoundError:
            return None
        except FileNotFoundError:
            return None

    def write(self, parts: tuple[str, ...], shown: str, data: bytes, *, must_exist: bool) -> list[SecretHit]:
        """Atomically create (must_exist=False: refuses an existing entry) or replace a file.
        Every byte written into a memory tree passes here, so the secrets in `data` are written
        as `[redacted: kind]` here, before anything touches the disk (`secrets.py`; the store's
        allowlist passes what it holds); returns what was redacted."""
        data, hits = redact_bytes(data, self.allowed)
        with self.dir_fd(parts[:-1], shown, create=not must_exist) as d:
            name = parts[-1]
            try:
                st: os.stat_result | None = os.stat(name, dir_fd=d, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if must_exist and st is None:  # the caller's one look (Store.write asks no other)
                raise NotFoundError(f"{shown} does not exist")
            if must_exist and (st is None or not stat.S_ISREG(st.st_mode) or st.st_nlink > 1):
                raise PathError(f"{shown} is not a plain file of this store")
            if not must_exist and st is not None:
                raise ExistsError(f"{shown} already exists; use str_replace or insert to change it")
            tmp = TMP_PREFIX + secrets.token_hex(8)
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE, dir_fd=d
            )
            try:
                with os.fdopen(fd, "wb") as fh:
                    os.fchmod(fh.fileno(), FILE_MODE if st is None else stat.S_IMODE(st.st_mode))
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=d)
                raise
            fsync_folder(d)
        return hits

    def delete(self, parts: tuple[str, ...], shown: str) -> None:
        with self.dir_fd(parts[:-1], shown) as d:
            st = os.stat(parts[-1], dir_fd=d, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                remove_tree(d, parts[-1])
            else:
                os.unlink(parts[-1], dir_fd=d)
            fsync_folder(d)

    def rename(self, old: tuple[str, ...], new: tuple[str, ...], shown_old: str, shown_new: str) -> None:
        with self.dir_fd(old[:-1], shown_old) as a, self.dir_fd(new[:-1], shown_new, create=True) as b:
            try:
                os.stat(new[-1], dir_fd=b, follow_symlinks=False)
            except FileNotFoundError:
                pass
            else:
                raise ExistsError(
                    f"{shown_new} already exists; choose another destination or delete it first"
                )
            os.rename(old[-1], new[-1], src_dir_fd=a, dst_dir_fd=b)
            # One folder holding both names (the same one, not two opened by the same path: a
            # swap between the two walks could make them differ) is made durable by one fsync;
            # two folders are fsynced at once (dirsync.py).
            if os.path.samestat(os.fstat(a), os.fstat(b)):
                fsync_folder(b)
            else:
                fsync_folders(b, a)

    def scan(
        self,
        parts: tuple[str, ...],
        shown: str,
        *,
        hidden: bool = False,
        only_files: Callable[[str], bool] | None = None,
    ) -> Iterator[Found]:
        """Every entry below `parts`, depth first, names sorted per folder (ripgrep's --sort
        path order); links and special files are reported, never followed or opened. With
        `hidden`, hidden entries are reported too (never descended into). An explicit stack,
        not recursion, and no folder below MAX_DEPTH levels is entered (it is reported as
        `too-deep`), so the walk holds at most MAX_DEPTH + 1 descriptors and ends on any tree.
        With `only_files`, an entry that is not a folder and whose name fails it is passed over
        without a stat (the orphan sweep looks at temp names only)."""
        if len(parts) > MAX_DEPTH:
            yield Found(parts, "too-deep")
            return
        top = self._open_chain(parts, shown, create=False)
        stack: list[tuple[int, tuple[str, ...], Iterator[os.DirEntry[str]]]] = [
            (top, parts, self._entries(top))
        ]
        try:
            while stack:
                fd, cur, it = stack[-1]
                ent = next(it, None)
                if ent is None:
                    stack.pop()
                    os.close(fd)
                    continue
                name = ent.name
                is_hidden = name.startswith(".")
                if is_hidden and not hidden:
                    continue
                if only_files is not None and not only_files(name) and not ent.is_dir(follow_symlinks=False):
                    continue
                child = (*cur, name)
                if not utf8_name(name):
                    yield Found(child, "bad-name")
                    continue
                try:
                    st = ent.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if len(child) > MAX_DEPTH:
                        yield Found(child, "too-deep")
                        continue
                    yield Found(child, "dir", 0, st.st_mtime_ns, st.st_nlink)
                    if is_hidden:
                        continue
                    try:
                        cfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    except OSError:
                        continue  # swapped for a link or removed meanwhile: not ours to follow
                    stack.append((cfd, child, self._entries(cfd)))
                elif stat.S_ISREG(st.st_mode):
                    yield Found(child, "file", st.st_size, st.st_mtime_ns, st.st_nlink)
                elif stat.S_ISLNK(st.st_mode):
                    yield Found(child, "link")
                else:
                    yield Found(child, "other")
        finally:
            for fd, _, _ in stack:
                os.close(fd)

    @staticmethod
    def _entries(fd: int) -> Iterator[os.DirEntry[str]]:
        try:
            with os.scandir(fd) as it:
                return iter(sorted(it, key=lambda e: e.name))
        except OSError:
            return iter(())


def _read_at(d: int, parts: tuple[str, ...], shown: str | None, limit: int | None) -> bytes:
    """The bytes of the plain file `parts[-1]` in the folder open at `d` (at most `limit`);
    an error names it `shown`, else `printable(parts)`."""
    fd, st = _open_plain(d, parts, shown)
    try:
        # One read of the size fstat gives, plus one byte, into a buffer of that size (no copy
        # of a 50 MB file in a growing buffer); a short read of a plain file is its end, and a
        # file grown meanwhile is read on to its end.
        want = st.st_size + 1 if limit is None else min(limit, st.st_size + 1)
        first = os.read(fd, want)
        if len(first) < want or (limit is not None and len(first) >= limit):
            return first
        chunks, got = [first], len(first)
        while limit is None or got < limit:
            more = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - got))
            if not more:
                break
            chunks.append(more)
            got += len(more)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_plain(d: int, parts: tuple[str, ...], shown: str | None) -> tuple[int, os.stat_result]:
    """A descriptor of the plain file `parts[-1]` in the folder open at `d` (no link, folder,
    device or hard link: `unplain`) and its fstat; the caller closes it."""
    try:
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=d)
    except OSError as exc:
        raise _path_error(exc, shown if shown is not None else printable(parts)) from None
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    problem = unplain(st, folder_ok=False)
    if problem is not None:
        os.close(fd)
        raise PathError(f"{shown if shown is not None else printable(parts)} {problem}")
    return fd, st


class Reader:
    """`SafeRoot.read` holding the descriptor of the folder it last read in (`SafeRoot.reader`).
    The descriptor was reached without following a link, so a folder swapped for one meanwhile
    cannot redirect a read: the reads stay in the folder the chain opened."""

    def __init__(self, safe: SafeRoot) -> None:
        self.safe = safe
        self._folder: tuple[str, ...] | None = None
        self._fd = -1

    def read(self, parts: tuple[str, ...], shown: str | None = None, limit: int | None = None) -> bytes:
        """`SafeRoot.read`; without `shown`, an error names the file by `printable(parts)`,
        made only then (a string per file was a fifth of reading 100,000 of them)."""
        folder = parts[:-1]
        if folder != self._folder:
            self.close()
            self._fd = self.safe.open_dir(folder, shown if shown is not None else printable(parts))
            self._folder = folder
        return _read_at(self._fd, parts, shown, limit)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._folder = -1, None


def private_dirs(path: Path) -> None:
    """`path` and its missing parents made, each DIR_MODE exactly; folders that exist are left
    as they are (what the SDK's memory helper does for its root)."""
    missing: list[Path] = []
    while not os.path.lexists(path):
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by another process: its mode is its maker's
        fd = os.open(folder, _DIR_FLAGS)
        try:
            os.fchmod(fd, DIR_MODE)
        finally:
            os.close(fd)


def remove_tree(parent: int, name: str) -> None:
    """`rm -r` of the folder `name` in the folder open at `parent`.

    Iterative (no depth overflows the stack), each step relative to a descriptor opened
    `O_NOFOLLOW` (a link inside is removed, never followed: a folder swapped for one cannot
    redirect the removal), and at most REMOVE_WINDOW descriptors open at once: a folder met at
    that depth is first moved up into the top folder under a temporary name and removed from
    there, so a tree deeper than the descriptor limit is removed whole (the standard library's
    fd-based rmtree recurses once per level)."""
    top = os.open(name, _DIR_FLAGS, dir_fd=parent)
    parked: list[str] = []
    stack: list[tuple[int, str, Iterator[os.DirEntry[str]]]] = [(top, name, _listing(top))]
    try:
        while stack:
            fd, here, it = stack[-1]
            ent = next(it, None)
            if ent is None:
                if len(stack) == 1:
                    if not parked:
                        break
                    moved = parked.pop()
                    cfd = os.open(moved, _DIR_FLAGS, dir_fd=top)
                    stack.append((cfd, moved, _listing(cfd)))
                    continue
                stack.pop()
                os.close(fd)
                os.rmdir(here, dir_fd=stack[-1][0])
                continue
            if ent.is_dir(follow_symlinks=False):
                if len(stack) >= REMOVE_WINDOW:
                    tmp = TMP_PREFIX + secrets.token_hex(8)
                    os.rename(ent.name, tmp, src_dir_fd=fd, dst_dir_fd=top)
                    parked.append(tmp)
                    continue
                cfd = os.open(ent.name, _DIR_FLAGS, dir_fd=fd)
                stack.append((cfd, ent.name, _listing(cfd)))
            else:
                os.unlink(ent.name, dir_fd=fd)
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _listing(fd: int) -> Iterator[os.DirEntry[str]]:
    """A folder's entries, read whole before any is removed (errors propagate: a removal that
    cannot list a folder must fail, not leave it behind silently)."""
    with os.scandir(fd) as it:
        return iter(list(it))
