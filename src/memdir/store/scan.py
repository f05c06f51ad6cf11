"""A fast stat walk of a store's memory files: the freshness check the index runs per search."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memdir.store.paths import PREFIX

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def scan(root: Path) -> dict[str, tuple[int, int]]:
    """{memory path: (size, mtime_ns)} of every visible .md file: the files `Store.walk` shows
    (hidden names skipped, links not followed), with one lstat per file and no path objects,
    because this runs before every search (a fifth of the time of `Store.snapshot`).

    Folders are opened relative to their parent's descriptor with O_NOFOLLOW, like
    `safefs`: a folder swapped for a symlink between the listing and the descent is skipped,
    never listed through (a path-based walk would list the link's target)."""
    out: dict[str, tuple[int, int]] = {}
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return out
    _scan_fd(top, PREFIX, out)
    return out


def _scan_fd(fd: int, mem: str, out: dict[str, tuple[int, int]]) -> None:
    """List the folder open at `fd` (closed here), then descend into its subfolders."""
    subdirs: list[str] = []
    try:
        with os.scandir(fd) as it:
            for ent in it:
                name = ent.name
                if name[0] == ".":
                    continue
                try:
                    if ent.is_dir(follow_symlinks=False):
                        subdirs.append(name)
                    elif name.endswith(".md"):
                        st = ent.stat(follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode):
                            out[f"{mem}/{name}"] = (st.st_size, st.st_mtime_ns)
                except OSError:
                    continue
        for name in subdirs:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue  # swapped for a link or removed meanwhile: not ours to follow
            _scan_fd(child, f"{mem}/{name}", out)
    except OSError:
        pass
    finally:
        os.close(fd)
