"""Folder indexes after a merge: regenerated from the merged files, never merged line by line.

A folder's `MEMORY.md` lists what the folder holds; each side's tools kept it for that side's
writes, so merging two of them line by line would only guess. Instead the index starts as
this store's (or the remote's, when only the remote changed it), and the merged files are laid
out in a scratch folder (`store/scratch.py`: the folders of the changed paths whole, their
other children folders by their index alone, all the plan reads) where the folder index plan for writes made
outside the file tools (`store/folder_index_plan.after`) runs over every file the merge
changed here: an entry for each file that came, none for one that went, an index for a new
memory folder. An index the remote removed stays while its folder still holds files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from memdir.conventions import ROOT
from memdir.store.folder_index_plan import after
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.scratch import scratch_dir
from memdir.store.store import Store


def is_index(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == MEMORY_INDEX


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0]


def _ancestors(path: str) -> list[str]:
    """Every folder above `path`, up to the root."""
    out = []
    while path != ROOT and "/" in path:
        path = _folder(path)
        out.append(path)
    return out


def regenerate(
    root: Path,
    ours: Mapping[str, str],
    merged: dict[str, str],
    read: Callable[[str], bytes],
    write: Callable[[bytes], str],
    *,
    both: bool,
) -> None:
    """Bring the indexes of `merged` in line with its files, given this store's files `ours`
    (both {path: blob id}; `read` gives a blob's bytes, `write` stores new bytes as a blob).
    Without `both` (only one side changed files) only a removed index is put back."""
    folders = {_folder(p) for p in merged if not is_index(p)}
    for path in [p for p in ours if is_index(p) and p not in merged]:
        if _folder(path) in folders:  # the remote removed it, but the folder still holds files
            merged[path] = ours[path]
    if not both:
        return
    changes: list[tuple[str, str, str | None]] = []
    for path in sorted(ours.keys() | merged.keys()):
        if is_index(path) or ours.get(path) == merged.get(path):
            continue
        kind = "create" if path not in ours else "delete" if path not in merged else "modify"
        changes.append((kind, path, None))
    if not changes:
        return
    chain = {a for _, path, _ in changes for a in _ancestors(path)}
    shown: set[str] = set()  # a child folder of the chain: present, with its index or one file
    with scratch_dir(root) as tmp:
        for path, held in sorted(merged.items(), key=lambda item: not is_index(item[0])):
            folder = _folder(path)
            if folder not in chain:
                if _folder(folder) not in chain or folder in shown:
                    continue  # the plan reads the changed paths' folders, and only sees their children
                shown.add(folder)
            disk = tmp / path.removeprefix(ROOT + "/")
            os.makedirs(disk.parent, exist_ok=True)
            disk.write_bytes(read(held))
        upkeep = after(Store(tmp), changes)
    for path, text in upkeep.writes.items():
        if text is None:
            merged.pop(path, None)
        else:
            merged[path] = write(text.encode("utf-8"))
