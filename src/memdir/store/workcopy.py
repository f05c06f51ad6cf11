"""A private working copy of a store, and carrying its changes back.

The shell tool runs commands on a copy, not on the root itself: the copy leaves out the store's
derived state (`.memdir`: index, journal, writer lock), so no command can see or touch it, and
comparing the copy with the root after a command tells exactly what changed, by content, not
by timestamps. Carrying back mirrors the copy onto the root without ever following a link: a
type that changed (file <-> folder <-> link) is removed first, folders are made top-down, and
changed files are moved into place atomically (the copy sits in the state folder, on the same
filesystem).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import PathError, ToolError
from memdir.store.atomic import fsync_dir
from memdir.store.paths import STATE_DIR, parse_memory_path
from memdir.store.store import Store

Rel = tuple[str, ...]


@dataclass(frozen=True)
class Node:
    """One entry of a tree: kind 'dir', 'file', 'link' or 'other'; digest of a file, target of a link."""

    kind: str
    mode: int = 0
    value: str = ""


@dataclass
class Outcome:
    """What carrying back did: memory files changed, and notes for the model."""

    changed_md: list[str] = field(default_factory=list)  # created or modified .md memory paths
    notes: list[str] = field(default_factory=list)


def _digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=20)
    with open(path, "rb", buffering=0) as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def scan(top: Path, *, shared_as_other: bool = False, strict: bool = False) -> dict[Rel, Node]:
    """Every entry under `top` except the state folder, never following links.

    With `shared_as_other`, a file with several hard links counts as 'other' (not copied, never
    touched): it may be linked from outside the store, so its content must not reach the sandbox.
    """
    tree: dict[Rel, Node] = {}
    stack: list[Rel] = [()]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(top.joinpath(*rel)))
        except OSError:
            if strict:
                raise
            continue
        for ent in entries:
            if not rel and ent.name == STATE_DIR:
                continue
            child = (*rel, ent.name)
            st = ent.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                tree[child] = Node("dir", stat.S_IMODE(st.st_mode))
                stack.append(child)
            elif stat.S_ISREG(st.st_mode) and not (shared_as_other and st.st_nlink > 1):
                try:
                    tree[child] = Node("file", stat.S_IMODE(st.st_mode), _digest(Path(ent.path)))
                except OSError:
                    if strict:
                        raise
                    tree[child] = Node("other")
            elif stat.S_ISLNK(st.st_mode):
                tree[child] = Node("link", 0, os.readlink(ent.path))
            else:
                tree[child] = Node("other")
    return tree


class WorkCopy:
    """A copy of `store`'s root under its state folder, owned by `owner` (a uid) if given."""

    def __init__(self, store: Store, owner: int | None = None) -> None:
        self.store = store
        base = store.state_dir / "shell"
        base.mkdir(exist_ok=True)
        os.chmod(base, 0o711)
        for stale in base.iterdir():  # left by a process that died mid-command
            shutil.rmtree(stale, ignore_errors=True)
        self.path = base / uuid.uuid4().hex
        self.owner = owner
        self.before = scan(store.root, shared_as_other=True)
        os.mkdir(self.path, 0o755)
        self._fill()

    def _fill(self) -> None:
        root = self.store.root
        for rel in sorted(self.before, key=len):
            node, src, dst = self.before[rel], root.joinpath(*rel), self.path.joinpath(*rel)
            if node.kind == "dir":
                os.mkdir(dst, node.mode | 0o700)
            elif node.kind == "file":
                shutil.copyfile(src, dst, follow_symlinks=False)
                shutil.copystat(src, dst, follow_symlinks=False)
            elif node.kind == "link":
                os.symlink(node.value, dst)
        if self.owner is not None:
            for rel in [(), *self.before]:
                if rel == () or self.before[rel].kind != "other":
                    os.lchown(self.path.joinpath(*rel), self.owner, self.owner)

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def carry_back(self) -> Outcome:
        """Mirror the copy onto the root and record the memory-file changes in the current step."""
        _open_up(self.path)
        try:
            after = scan(self.path, strict=True)
        except OSError as exc:
            raise ToolError(
                f"the command left something memdir cannot read ({exc.strerror}: "
                f"{os.path.relpath(exc.filename or '', self.path)}); nothing it changed was kept. "
                "Do not remove read permissions from files or folders"
            ) from None
        out = Outcome()
        if self.path.joinpath(STATE_DIR).exists():
            out.notes.append(
                f"{STATE_DIR} is reserved for memdir's own state; what was written there was dropped"
            )
        root = self.store.root
        removed: list[Rel] = []
        for rel in sorted(self.before, key=len):
            old, new = self.before[rel], after.get(rel)
            if (new is not None and new.kind == old.kind) or (old.kind == "other" and new is None):
                continue  # same kind (content is handled below), or never copied
            if any(rel[: len(r)] == r for r in removed):
                continue  # went with its folder
            target = root.joinpath(*rel)
            if old.kind == "dir":
                shutil.rmtree(target)
            else:
                target.unlink()
            removed.append(rel)
        touched: set[Path] = {root.joinpath(*r[:-1]) for r in removed}
        for rel in sorted(after, key=len):
            was, new = self.before.get(rel), after[rel]
            target = root.joinpath(*rel)
            if new.kind == "other":
                out.notes.append(f"{'/'.join(rel)}: not a file, folder or link; it was not kept")
                continue
            if was is not None and was.kind == new.kind and was.value == new.value:
                if was.mode != new.mode and new.kind != "link":
                    os.chmod(target, new.mode | (0o700 if new.kind == "dir" else 0o600))
                continue
            self._check_inside(target.parent)
            if new.kind == "dir":
                os.mkdir(target, new.mode | 0o700)
            elif new.kind == "file":  # copied, never moved: a hard link made inside stays inside
                tmp = target.with_name(f".memdir-tmp-{uuid.uuid4().hex}")
                shutil.copyfile(self.path.joinpath(*rel), tmp, follow_symlinks=False)
                os.chmod(tmp, new.mode | 0o600)
                with open(tmp, "rb") as fh:
                    os.fsync(fh.fileno())
                os.replace(tmp, target)
            else:
                tmp = target.with_name(f".memdir-tmp-{uuid.uuid4().hex}")
                os.symlink(new.value, tmp)
                os.replace(tmp, target)
            touched.add(target.parent)
        for parent in touched:
            with contextlib.suppress(OSError):
                fsync_dir(parent)
        self._record(after, out)
        return out

    def _check_inside(self, parent: Path) -> None:
        """Defence in depth: every folder written into resolves to itself, inside the root."""
        real = os.path.realpath(parent)
        root = str(self.store.root)
        if real != str(parent) or not (real == root or real.startswith(root + os.sep)):
            raise PathError(f"refusing to write through {parent}: it leads out of the memory root")

    def _record(self, after: dict[Rel, Node], out: Outcome) -> None:
        before_mem, after_mem = _memory_files(self.before), _memory_files(after)
        self.store.record_external(before_mem, after_mem)
        out.changed_md = sorted(
            p for p, d in after_mem.items() if p.endswith(".md") and before_mem.get(p) != d
        )
        for rel, node in sorted(after.items()):
            if (
                node.kind == "file"
                and self.before.get(rel) != node
                and not any(p.startswith(".") for p in rel)
            ):
                try:
                    parse_memory_path("/memories/" + "/".join(rel))
                except PathError as exc:
                    out.notes.append(
                        f"{'/'.join(rel)!r}: the memory tools cannot use this name ({exc}); rename it"
                    )


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
