"""A private working copy of a store, kept in step with it, and carrying changes back.

The shell tool runs commands on a copy, not on the root itself: the copy leaves out the store's
derived state (`.memdir`: index, journal, writer lock), so no command can see or touch it, and
comparing the copy with the root after a command tells exactly what changed, by content, not
by timestamps. The copy persists between calls (under the state folder) and is brought up to
date from the root before each command, so a call costs a few stat walks, not a full copy.

Both directions use :func:`memdir.store.mirror.mirror`, which never follows a link; so does
:func:`scratch_copy`, the throwaway copy an answering role with a shell works in. The copy holds no
folder below MAX_DEPTH levels, as the store's own walks read none: what a command made deeper
is named in the result and dropped, and a copy left deeper (by an older memdir or a crash) is
pruned before the next command, so no depth a command reaches can break a later call.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import MemdirError, PathError, ToolError
from memdir.store.mirror import Node, Rel, mirror, scan
from memdir.store.paths import MAX_DEPTH, STATE_DIR, parse_memory_path
from memdir.store.safefs import DIR_MODE, TMP_PREFIX, SafeRoot, remove_tree
from memdir.store.scratch import scratch_dir
from memdir.store.secrets import redact_bytes, said
from memdir.store.store import Store

_DIRS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Outcome:
    """What carrying back did: memory files changed, and notes for the model."""

    changed_md: list[str] = field(default_factory=list)  # created or modified .md memory paths
    notes: list[str] = field(default_factory=list)


@contextlib.contextmanager
def scratch_copy(store: Store) -> Iterator[Store]:
    """A throwaway copy of the store for a role that holds a writing tool (the shell's `bash`)
    but must not change the store it is judged on: whatever it writes goes with the copy.
    Derived state is left out, links are not followed and hard-linked files are not copied
    (the same `mirror` as the shell's working copy); paths in the copy are the original's, so
    citations made in it resolve against the original. It lives under the store's state folder,
    where the next copy or writer sweeps it up if this process is killed (`scratch.py`)."""
    with scratch_dir(store.root) as tmp:
        copy = tmp / "store"
        os.mkdir(copy, DIR_MODE)  # the store's copy, its owner's alone (private.py)
        mirror(store.root, scan(store.root, shared_as_other=True), copy, {}, durable=False)
        work = Store(copy)
        work.safe.allowed = store.safe.allowed  # the store's allowlist holds in its copy
        yield work


class WorkCopy:
    """The copy of `store`'s root under its state folder, owned by `owner` (a uid) if given.

    Construct it inside the step that runs the command (the writer lock keeps the root still);
    it is brought up to date with the root at once.
    """

    def __init__(self, store: Store, owner: int | None = None) -> None:
        self.store = store
        self.owner = owner
        base = store.state_dir / "shell"
        base.mkdir(exist_ok=True)
        os.chmod(base, 0o711)
        for aside in base.glob(TMP_PREFIX + "*"):  # copies a reset could not remove at once
            with contextlib.suppress(OSError):
                _remove(aside)
        self.path = Path(os.path.realpath(base / "copy"))
        self.before = scan(store.root, shared_as_other=True)
        self.size_before = _size(store.root, exclude_state=True)
        try:
            stale = self.owner is not None and self.path.is_dir() and self.path.stat().st_uid != self.owner
            current: dict[Rel, Node] | None = None
            if self.path.is_dir() and not stale:
                deep: list[Rel] = []
                current = scan(self.path, strict=True, deep=deep)
                _prune(self.path, deep)
            self._sync(current)
        except (OSError, PathError):  # the copy is disposable: start it afresh
            self.reset()
            self._sync(None)

    def _sync(self, current: dict[Rel, Node] | None) -> None:
        if current is None:
            os.mkdir(self.path)
            current = {}
        os.chmod(self.path, 0o755)  # bwrap enters it before the uid drop, with no capabilities
        if self.owner is not None:
            os.lchown(self.path, self.owner, self.owner)
        if self.path.joinpath(STATE_DIR).exists() or self.path.joinpath(STATE_DIR).is_symlink():
            _remove(self.path.joinpath(STATE_DIR))
        mirror(self.store.root, self.before, self.path, current, owner=self.owner, durable=False)

    def reset(self) -> None:
        """Drop the copy (after a failure); the next call builds it afresh from the root. The
        removal is iterative (any depth); what cannot be removed is moved aside under a temp
        name, so the next copy starts empty all the same."""
        _discard(self.path)

    def carry_back(self, max_growth: int | None = None) -> Outcome:
        """Mirror the copy onto the root and record the memory-file changes in the current step.

        With `max_growth` (bytes), a copy that grew by more than that is dropped, not carried.
        """
        _open_up(self.path)
        if max_growth is not None:
            grown = _size(self.path) - self.size_before
            if grown > max_growth:
                self.reset()
                raise ToolError(
                    f"the command grew the store by {grown / 2**20:,.0f} MB, more than the "
                    f"{max_growth / 2**20:,.0f} MB one command may add; nothing it changed was kept"
                )
        deep: list[Rel] = []
        try:
            after = scan(self.path, strict=True, deep=deep)
            _prune(self.path, deep)
        except OSError as exc:
            self.reset()
            raise ToolError(
                f"the command left something memdir cannot read ({exc.strerror}: "
                f"{os.path.relpath(exc.filename or '', self.path)}); nothing it changed was kept. "
                "Do not remove read permissions from files or folders"
            ) from None
        out = Outcome()
        out.notes += [
            f"{_clipped(rel)}: deeper than {MAX_DEPTH} folder levels, the most memory holds; "
            "it and everything in it were not kept"
            for rel in deep
        ]
        state = self.path.joinpath(STATE_DIR)
        if state.exists() or state.is_symlink():
            out.notes.append(
                f"{STATE_DIR} is reserved for memdir's own state; what was written there was dropped"
            )
            _remove(state)
        after = self._redact(after, out)
        try:
            out.notes += mirror(self.path, after, self.store.root, self.before, keep_unseen_other=True)
        except BaseException:
            # Part of it landed: record what the root holds now, so derived views follow disk.
            self.reset()
            self._record(scan(self.store.root, shared_as_other=True), Outcome())
            raise
        self._record(after, out)
        return out

    def _redact(self, after: dict[Rel, Node], out: Outcome) -> dict[Rel, Node]:
        """The copy's files the command wrote, with their secrets written as `[redacted: kind]`
        in the copy before anything is carried back (the store's allowlist kept), so the shell
        is no way around the store's one writer (docs/secrets.md); the copy's tree after it."""
        safe = SafeRoot(self.path)
        safe.allowed = self.store.safe.allowed
        kinds: list[str] = []
        for rel, node in after.items():
            if node.kind != "file" or self.before.get(rel) == node:
                continue
            shown = _clipped(rel)
            try:
                data = safe.read(rel, shown)
                clean, hits = redact_bytes(data, safe.allowed)
                if hits:
                    st = safe.lstat(rel, shown)
                    safe.write(rel, shown, clean, must_exist=True)
                    if st is not None:  # the command's owner keeps the file it wrote
                        os.lchown(self.path.joinpath(*rel), st.st_uid, st.st_gid)
                    kinds += [h.kind for h in hits]
            except (MemdirError, OSError):
                continue  # unreadable now: the mirror reports it
        if not kinds:
            return after
        out.notes.append(
            f"redacted {said(kinds)} before keeping what the command wrote: the files hold "
            "[redacted: KIND] in their place; memory never stores secrets"
        )
        return scan(self.path, strict=True)

    def _record(self, after: dict[Rel, Node], out: Outcome) -> None:
        before = self.before
        changed = {r for r in before.keys() | after.keys() if before.get(r) != after.get(r)}
        before_mem = _memory_files({r: before[r] for r in changed if r in before})
        after_mem = _memory_files({r: after[r] for r in changed if r in after})
        self.store.record_external(before_mem, after_mem)  # unchanged files cannot matter to it
        out.changed_md = sorted(
            p for p, d in after_mem.items() if p.endswith(".md") and before_mem.get(p) != d
        )
        for rel in sorted(changed):
            node = after.get(rel)
            if node is not None and node.kind == "file" and not any(p.startswith(".") for p in rel):
                try:
                    parse_memory_path("/memories/" + "/".join(rel))
                except PathError as exc:
                    out.notes.append(
                        f"{'/'.join(rel)!r}: the memory tools cannot use this name ({exc}); rename it"
                    )


def _size(top: Path, exclude_state: bool = False) -> int:
    """Bytes in the regular files under `top` that a scan reads (MAX_DEPTH levels; deeper ones
    are dropped, not carried), by a stat walk that follows no link."""
    return sum(st.st_size for _, _, st in _walk(top, exclude_state) if stat.S_ISREG(st.st_mode))


def _walk(
    top: Path, exclude_state: bool = False, entering: Callable[[int, str, os.stat_result], None] | None = None
) -> Iterator[tuple[int, str, os.stat_result]]:
    """(folder descriptor, name, lstat) of each entry under `top`, depth first through
    descriptors (no path string, so no PATH_MAX), entering no folder below MAX_DEPTH levels,
    with at most MAX_DEPTH + 1 descriptors open; `entering` runs before a folder is opened.
    Entries that vanish or cannot be read are passed over."""
    try:
        first = os.open(top, _DIRS)
    except OSError:
        return
    stack: list[tuple[int, int, Iterator[os.DirEntry[str]]]] = [(first, 0, _listing(first))]
    try:
        while stack:
            fd, level, it = stack[-1]
            ent = next(it, None)
            if ent is None:
                stack.pop()
                os.close(fd)
                continue
            if exclude_state and level == 0 and ent.name == STATE_DIR:
                continue
            try:
                st = ent.stat(follow_symlinks=False)
            except OSError:
                continue
            yield fd, ent.name, st
            if stat.S_ISDIR(st.st_mode) and level < MAX_DEPTH:
                with contextlib.suppress(OSError):
                    if entering is not None:
                        entering(fd, ent.name, st)
                    cfd = os.open(ent.name, _DIRS, dir_fd=fd)
                    stack.append((cfd, level + 1, _listing(cfd)))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _listing(fd: int) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(fd) as it:
            return iter(list(it))
    except OSError:
        return iter(())


def _remove(path: Path) -> None:
    """Remove a file, link or folder (iteratively, at any depth) without following a link."""
    parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if stat.S_ISDIR(os.stat(path.name, dir_fd=parent, follow_symlinks=False).st_mode):
            remove_tree(parent, path.name)
        else:
            os.unlink(path.name, dir_fd=parent)
    finally:
        os.close(parent)


def _discard(path: Path) -> None:
    """Remove `path` if it can be; else move it aside under a temp name (the next WorkCopy
    tries again), so the copy's own name is free for a fresh copy either way."""
    try:
        _remove(path)
    except FileNotFoundError:
        return
    except OSError:
        with contextlib.suppress(OSError):
            path.rename(path.with_name(TMP_PREFIX + secrets.token_hex(8)))


def _prune(top: Path, deep: list[Rel]) -> None:
    """Remove the folders `scan` found below MAX_DEPTH levels in the copy at `top`."""
    safe = SafeRoot(top)
    for rel in deep:
        with safe.dir_fd(rel[:-1], _clipped(rel)) as d:
            remove_tree(d, rel[-1])


def _clipped(rel: Rel) -> str:
    """A deep path as a note shows it: its memory path, clipped in the middle past 200 characters."""
    shown = "/memories/" + "/".join(rel)
    return shown if len(shown) <= 200 else f"{shown[:120]}…{shown[-60:]}"


def _open_up(top: Path) -> None:
    """Give the owner read access to everything in the copy (a command may chmod 000 a folder)."""
    if os.geteuid() == 0:
        return  # root reads regardless
    with contextlib.suppress(OSError):
        os.chmod(top, stat.S_IMODE(os.lstat(top).st_mode) | 0o700)

    def readable(d: int, name: str, st: os.stat_result) -> None:
        os.chmod(name, stat.S_IMODE(st.st_mode) | 0o700, dir_fd=d)

    for d, name, st in _walk(top, entering=readable):
        if stat.S_ISREG(st.st_mode):
            with contextlib.suppress(OSError):
                os.chmod(name, stat.S_IMODE(st.st_mode) | 0o600, dir_fd=d)


def _memory_files(tree: dict[Rel, Node]) -> dict[str, str]:
    """{memory path: digest} of the regular files the memory tools can see."""
    files: dict[str, str] = {}
    for rel, node in tree.items():
        if node.kind != "file" or any(p.startswith(".") for p in rel):
            continue
        try:
            files[parse_memory_path("/memories/" + "/".join(rel)).text] = node.value
        except PathError:
            continue
    return files
