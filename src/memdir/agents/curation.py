"""How a chunk gets curated: the agentic episode, or memdir's split curation.

The management role is one agentic episode per chunk (the paper's protocol): the model reads the
store and writes with tools. A 1.5B local model does that badly (issue 32: it rewrote the root
index with raw turns and wrote no memory file), but it extracts facts well when its output is
constrained to a schema. Split curation (`agents/split/`, docs/curation.md) therefore separates
*what to write* (one constrained call per chunk) from *where to file it* (the offline curator's
filing, by rule). `auto` picks split for the local model and the agentic episode for every other
one.

The offline model has no extraction call to make: it plays management with the offline curator
for `auto` and `agentic`, and an explicit `split` is refused with the reason rather than
quietly doing something else (the curator's own rules already *are* its split: pattern
extraction, then the same filing).
"""

from __future__ import annotations

from typing import Literal, get_args

from memdir.errors import MemdirError
from memdir.models import Model

Curation = Literal["auto", "agentic", "split"]
CURATIONS: tuple[str, ...] = get_args(Curation)

Resolved = Literal["agentic", "split", "offline"]


def is_local(model: Model) -> bool:
    """The local model, whatever alias it runs under (models/registry.py names it `local/<alias>`)."""
    return model.name == "local" or model.name.startswith("local/")


def resolve(curation: str, model: Model) -> Resolved:
    """What `curation` means for `model`; a bad value or `split` for the offline model is refused."""
    if curation not in CURATIONS:
        raise MemdirError(f"unknown curation {curation!r}; choose one of {', '.join(CURATIONS)}")
    if model.is_offline:
        if curation == "split":
            raise MemdirError(
                "split curation needs a model for its extraction call; the offline model curates "
                "by rule (use --curation auto or agentic with it), or name a model (e.g. --model local)"
            )
        return "offline"
    if curation == "auto":
        return "split" if is_local(model) else "agentic"
    return "split" if curation == "split" else "agentic"
