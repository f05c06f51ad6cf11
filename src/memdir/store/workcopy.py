"""A private working copy of a store, kept in step with it, and carrying changes back.

The shell tool runs commands on a copy, not on the root itself: the copy leaves out the store's
derived state (`.memdir`: index, journal, writer lock), so no command can see or touch it, and
comparing the copy with the root after a command tells exactly what changed, by content, not
by timestamps. The copy persists between calls (under the state folder) and is brought up to
date from the root before each command, so a call costs a few stat walks, not a full copy.

Both directions use :func:`memdir.store.mirror.mirror`, which never follows a link; so does
:func:`scratch_copy`, the throwaway copy a search role with a shell works in.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import PathError, ToolError
from memdir.store.mirror import Node, Rel, mirror, scan
from memdir.store.paths import STATE_DIR, parse_memory_path
from memdir.store.scratch import scratch_dir
from memdir.store.store import Store


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
        copy.mkdir()
        mirror(store.root, scan(store.root, shared_as_other=True), copy, {}, durable=False)
        yield Store(copy)


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
        self.path = Path(os.path.realpath(base / "copy"))
        self.before = scan(store.root, shared_as_other=True)
        self.size_before = _size(store.root, exclude_state=True)
        try:
            stale = self.owner is not None and self.path.is_dir() and self.path.stat().st_uid != self.owner
            current = scan(self.path, strict=True) if self.path.is_dir() and not stale else None
            self._sync(current)
        except (OSError, PathError):  # the copy is disposable: start it afresh
            shutil.rmtree(self.path, ignore_errors=True)
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
        """Drop the copy (after a failure); the next call builds it afresh from the root."""
        shutil.rmtree(self.path, ignore_errors=True)

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
        try:
            after = scan(self.path, strict=True)
        except OSError as exc:
            self.reset()
            raise ToolError(
                f"the command left something memdir cannot read ({exc.strerror}: "
                f"{os.path.relpath(exc.filename or '', self.path)}); nothing it changed was kept. "
                "Do not remove read permissions from files or folders"
            ) from None
        out = Outcome()
        state = self.path.joinpath(STATE_DIR)
        if state.exists() or state.is_symlink():
            out.notes.append(
                f"{STATE_DIR} is reserved for memdir's own state; what was written there was dropped"
            )
            _remove(state)
        try:
            out.notes += mirror(self.path, after, self.store.root, self.before, keep_unseen_other=True)
        except BaseException:
            # Part of it landed: record what the root holds now, so derived views follow disk.
            self.reset()
            self._record(scan(self.store.root, shared_as_other=True), Outcome())
            raise
        self._record(after, out)
        return out

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
    """Bytes in the regular files under `top`, by a stat walk that follows no link."""
    total, stack = 0, [top]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as it:
            for ent in it:
                if exclude_state and ent.name == STATE_DIR and Path(ent.path).parent == top:
                    continue
                st = ent.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    stack.append(Path(ent.path))
                elif stat.S_ISREG(st.st_mode):
                    total += st.st_size
    return total


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _open_up(top: Path) -> None:
    """Give the owner read access to everything in the copy (a command may chmod 000 a folder)."""
    if os.geteuid() == 0:
        return  # root reads regardless
    stack = [top]
    while stack:
        d = stack.pop()
        with contextlib.suppress(OSError):
            os.chmod(d, stat.S_IMODE(os.lstat(d).st_mode) | 0o700)
        with contextlib.suppress(OSError):
            for ent in os.scandir(d):
                if ent.is_dir(follow_symlinks=False):
                    stack.append(Path(ent.path))
                elif ent.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.chmod(ent.path, stat.S_IMODE(ent.stat(follow_symlinks=False).st_mode) | 0o600)


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
