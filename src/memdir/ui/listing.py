"""One folder's children, for the lazy tree: what the page shows of each entry.

A folder is listed by one scan of its subtree through the store's link-safe walker
(`SafeRoot.scan`, the iterator under `Store.walk`: depth-bounded, no link followed, hidden
entries left out, as every tool sees it), which also gives each child folder its size and file
count. A folder is shown `PAGE_ENTRIES` children a page, and only the page's children's
heads are read, for their descriptions. So opening a folder costs its own subtree, never the
whole store, and the root's listing also yields the core-memory gauge (`ui/core.py`: the
count `memdir check` budgets, read in bounded time), with no second walk. The scan's entries
are not made into `Entry` objects (a `Path` each): at 10,000 files that alone took most of a
second.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from memdir.errors import NotFoundError
from memdir.store import spec
from memdir.store.descriptions import read_description
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.paths import MemoryPath
from memdir.store.safefs import Unread, unread
from memdir.store.store import Store
from memdir.tools.text import human_size
from memdir.ui import core
from memdir.ui.core import Budget

PAGE_ENTRIES = 500  # a folder's entries per page: a 20,000-entry folder was a 3.8 MB page


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
    tokens: int | None = None  # core files: their share of the core budget (None: not counted)
    tokens_at_least: bool = False  # `tokens` is a lower bound (ui/core.py)

    @property
    def shown_size(self) -> str:
        return human_size(self.size)

    @property
    def over_fanout(self) -> bool:
        return self.is_dir and self.entries > spec.DEFAULT_FANOUT_CAP


@dataclass
class Listing:
    """A page of a folder's children: `children` are entries `start`.. of its `total`."""

    folder: MemoryPath
    children: list[Child] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)
    total: int = 0
    start: int = 0
    budget: Budget | None = None  # the root's: the core-memory gauge

    @property
    def next_start(self) -> int | None:
        end = self.start + len(self.children)
        return end if end < self.total else None

    @property
    def previous_start(self) -> int | None:
        return max(0, self.start - PAGE_ENTRIES) if self.start > 0 else None


def list_folder(store: Store, folder: MemoryPath, start: int = 0, count: int = PAGE_ENTRIES) -> Listing:
    """The children `start`..`start + count` of `folder`, folders first, each group in name
    order; only theirs are read (descriptions, core tokens), so a page of a 20,000-entry
    folder reads 500 heads, not 20,000. The root's listing also holds the core gauge."""
    out = Listing(folder, start=start)
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
        else:
            top = kids.get(parts[:depth])
            if top is None:
                continue
            if len(parts) == depth + 1:
                top.entries += 1
            if not is_dir:
                top.size += f.size
                top.files += 1
    ordered = sorted(kids.values(), key=lambda c: (not c.is_dir, c.path.name))
    out.total = len(ordered)
    if start and start >= out.total:
        raise NotFoundError(f"{folder.text} has {out.total} entries; its listing starts at entry 0")
    out.children = ordered[start : start + count]
    if folder.is_root:
        out.budget = core.gauge(store, [c.path for c in ordered if _is_core(c)])
    for child in out.children:
        if child.is_dir:
            index = child.path.child(MEMORY_INDEX)
            if store.exists(index):
                child.description = read_description(store, index)
        elif child.path.name.endswith(".md"):
            child.description = read_description(store, child.path)
            if out.budget is not None and _is_core(child):
                child.core = True
                share = out.budget.shares.get(child.path.text)
                if share is not None:
                    child.tokens, child.tokens_at_least = share.tokens, share.at_least
    return out


def _is_core(child: Child) -> bool:
    return not child.is_dir and child.path.name.endswith(".md") and len(child.path.parts) == 1


def budget(store: Store, root: Listing | None = None) -> Budget:
    """The core gauge (`ui/core.py`: `memdir check`'s count, bounded); given the root's
    listing, from it; else from one listing of the root's own entries, never a walk."""
    if root is not None and root.budget is not None:
        return root.budget
    return core.gauge(store, core.core_files(store))


def child_folders(store: Store, folder: MemoryPath) -> list[str]:
    """Names of the visible folders directly in `folder`, through the store's link-safe
    descriptor chain, without walking below them (the run-folder finder's one level)."""
    with store.safe.dir_fd(folder.parts, folder.text) as fd, os.scandir(fd) as it:
        return sorted(e.name for e in it if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
