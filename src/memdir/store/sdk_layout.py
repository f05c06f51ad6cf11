"""Where a store keeps its files when its folder is the Anthropic SDK helper's.

The SDK's `BetaLocalFilesystemMemoryTool(base_path)` keeps what Claude writes in
`base_path/memories/` and nothing else in `base_path`; memdir keeps a store's files in the root
it is given. So the documented swap, `Memory("./memory")` for
`BetaLocalFilesystemMemoryTool("./memory")`, would show the old files under
`/memories/memories/...` and Claude's own paths would reach nothing. One rule, used wherever a
folder is opened as a store (`Memory`, the Anthropic adapter, the command line): a folder that is
not a memory (no `MEMORY.md`) and holds a real folder named `memories` is the SDK's base, and
the store is that `memories` folder, so every file keeps the path Claude knows it by
(docs/serving.md, "Moving from the SDK helper").
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memdir.store.frontmatter import MEMORY_INDEX

SDK_FOLDER = "memories"


def store_root(base: str | os.PathLike[str]) -> Path:
    """`base/memories` when `base` is laid out as the SDK helper keeps its folder; else `base`."""
    base = Path(base)
    try:
        if (base / MEMORY_INDEX).exists():
            return base
        if stat.S_ISDIR(os.lstat(base / SDK_FOLDER).st_mode):  # a link to one is not followed
            return base / SDK_FOLDER
    except OSError:  # no such folder yet, or not readable: the folder itself, as before
        pass
    return base


def is_sdk_base(base: str | os.PathLike[str]) -> bool:
    return store_root(base) != Path(base)


def unconverted(root: str | os.PathLike[str]) -> bool:
    """Whether `root` is the store inside an SDK helper's folder that no memdir has opened yet
    (no `MEMORY.md`: memdir makes it last, once the folder is converted, agents/sdk_folder.py)."""
    root = Path(root)
    return root.name == SDK_FOLDER and store_root(root.parent) == root and not (root / MEMORY_INDEX).exists()
