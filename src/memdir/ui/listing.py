"""One folder's children, for the lazy tree: what the page shows of each entry.

A folder is listed by one scan of its subtree through the store's link-safe walker
(`SafeRoot.scan`, the iterator under `Store.walk`: depth-bounded, no link followed, hidden
entries left out, as every tool sees it), which also gives each child folder its size and file
count; only the children's heads are read, for their descriptions. So opening a folder costs
its own subtree, never the whole store, and the root's listing also yields the core-memory
gauge (`spec.core_tokens` over the root's entries: the same count `memdir check` budgets),
with no second walk. The scan's entries are not made into `Entry` objects (a `Path` each):
at 10,000 files that alone took most of a second.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from memdir.errors import ToolError
from memdir.store import spec
from memdir.store.descriptions import read_description
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.paths import ROOT, MemoryPath
from memdir.store.safefs import Unread, unread
from memdir.store.store import Entry, Store
from memdir.tokens import count_tokens
from memdir.tools.text import human_size


@dataclass
class Child:
    """One entry of a folder: a file or a folder, with its size (a folder's: all it holds)."""

    path: MemoryPath
    is_dir: bool
    size: int = 0
    files: int = 0
    entries: int = 0  # a folder's own entries: over the fanout cap is a `check` problem
    description: str | None = None
    core: bool = False  # a markdown file directly in the root: always loaded
    tokens: int | None = None  # core files: their share of the core budget

    @property
    def shown_size(self) -> str:
        return human_size(self.size)

    @property
    def over_fanout(self) -> bool:
        return self.is_dir and self.entries > spec.DEFAULT_FANOUT_CAP


@dataclass
class Listing:
    folder: MemoryPath
    children: list[Child] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)  # the children as the store walks them


def list_folder(store: Store, folder: MemoryPath) -> Listing:
    """The children of `folder`, folders first, each group in name order."""
    out = Listing(folder)
    depth = len(folder.parts) + 1
    kids: dict[tuple[str, ...], Child] = {}
    if not store.is_dir(folder):
        return out
    for f in store.safe.scan(folder.parts, folder.text):
        parts = f.parts
        if f.kind not in ("dir", "file"):
            problem = unread(f)
            if problem is not None:
                out.unread.append(problem)
            continue
        is_dir = f.kind == "dir"
        if len(parts) == depth:
            mp = MemoryPath(parts)
            kids[parts] = Child(mp, is_dir, 0 if is_dir else f.size, 0 if is_dir else 1)
            out.entries.append(Entry(mp, store.root.joinpath(*parts), is_dir, f.size, f.mtime_ns))
        else:
            top = kids.get(parts[:depth])
            if top is None:
                continue
            if len(parts) == depth + 1:
                top.entries += 1
            if not is_dir:
                top.size += f.size
                top.files += 1
    for child in kids.values():
        if child.is_dir:
            index = child.path.child(MEMORY_INDEX)
            if store.exists(index):
                child.description = read_description(store, index)
        elif child.path.name.endswith(".md"):
            child.description = read_description(store, child.path)
            if folder.is_root:
                child.core = True
                child.tokens = _tokens(store, child.path)
    out.children = sorted(kids.values(), key=lambda c: (not c.is_dir, c.path.name))
    return out


def _tokens(store: Store, mp: MemoryPath) -> int | None:
    try:
        return count_tokens(store.read_bytes(mp).decode("utf-8", "replace"))
    except ToolError:
        return None


@dataclass(frozen=True)
class Budget:
    """The core-memory gauge: tokens of the root's markdown against the core budget."""

    tokens: int
    budget: int

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.tokens / self.budget)) if self.budget else 100

    @property
    def over(self) -> bool:
        return self.tokens > self.budget


def budget(store: Store, limit: int = spec.DEFAULT_CORE_BUDGET, root: Listing | None = None) -> Budget:
    """The same count `memdir check` holds to its budget (`spec.core_tokens`); given the root's
    listing, from its entries (core memory is the root's markdown), so no walk of the store."""
    if root is None or not root.folder.is_root:
        root = list_folder(store, ROOT)
    return Budget(spec.core_tokens(store, spec.Walk(root.entries, root.unread)), limit)


def child_folders(store: Store, folder: MemoryPath) -> list[str]:
    """Names of the visible folders directly in `folder`, through the store's link-safe
    descriptor chain, without walking below them (the run-folder finder's one level)."""
    with store.safe.dir_fd(folder.parts, folder.text) as fd, os.scandir(fd) as it:
        return sorted(e.name for e in it if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
