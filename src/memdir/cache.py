"""Where memdir keeps what it installs for the user (model weights, distilled embeddings): one
folder, outside every repository and store. A leaf: it imports nothing of memdir."""

from __future__ import annotations

import os
from pathlib import Path


def models_dir() -> Path:
    """`MEMDIR_MODELS`, else `$XDG_CACHE_HOME/memdir/models`, else `~/.cache/memdir/models`."""
    if os.environ.get("MEMDIR_MODELS"):
        return Path(os.environ["MEMDIR_MODELS"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "memdir" / "models"
