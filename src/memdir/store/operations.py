"""Operations: what a person did, as opposed to the steps it took.

One `memdir ingest` of a 10-turn file makes about 50 journaled steps and one chat about 1,100;
undoing it by step means finding its first step by hand. So every step carries the operation it
belongs to: an id, a kind (`ingest`, `add`, `consolidate`, `adopt`, `episode`, `revert`, or
`call` for a tool call made outside any operation) and a short label (`ingest chat.jsonl`,
`add 3 turns`). `Store.step` stamps it into the step's meta, the journal writes it as trailers
(`journal/format.py`) and `journal/operations.py` groups the steps back (docs/metrics.md,
"History").

The operation in force is a context variable keyed by memory root, so it follows the work into
the threads `asyncio.to_thread` runs tool calls on (they copy the context), stays out of another
store's steps, and is never shared by a concurrent caller in another context (an MCP call made
while an ingest runs is its own operation). The outermost operation wins: an agentic episode
inside an ingest is part of the ingest.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.store.landing_intent import StepMeta

ID_KEY, KIND_KEY, LABEL_KEY = "operation", "operation_kind", "operation_label"  # the step meta keys
CALL = "call"  # the kind of a tool call made outside any operation
EPISODE = "episode"  # one management episode (a chunk) outside an ingest or an add
LABEL_MAX = 120
ID_HEX = 12  # 48 bits: two ids of a store's thousands of operations collide about once in 10^7


@dataclass(frozen=True)
class OperationTag:
    """The operation a step belongs to, as its meta carries it (id, kind, label); the API's
    `Operation` is one grouped with its steps, time and files."""

    id: str
    kind: str
    label: str

    def stamp(self, meta: StepMeta) -> None:
        """Put this operation in a step's meta, unless the step already names one (a landing
        rolled forward keeps the operation of the step a kill stopped)."""
        if ID_KEY not in meta:
            meta.update({ID_KEY: self.id, KIND_KEY: self.kind, LABEL_KEY: self.label})


# {memory root: operation in force}, immutable so a copied context never sees a later change
_ACTIVE: contextvars.ContextVar[tuple[tuple[str, OperationTag], ...]] = contextvars.ContextVar(
    "memdir_operations", default=()
)


def _key(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(Path(root))


def new_id() -> str:
    return secrets.token_hex(ID_HEX // 2)


def label_of(text: str) -> str:
    """A label on one line, at most LABEL_MAX characters (a trailer is one line)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= LABEL_MAX else flat[: LABEL_MAX - 3] + "..."


def current(root: str | os.PathLike[str]) -> OperationTag | None:
    """The operation in force for the store at `root` in this context, if any."""
    active = _ACTIVE.get()
    return dict(active).get(_key(root)) if active else None  # no path resolved on the common path


@contextlib.contextmanager
def operation(root: str | os.PathLike[str], kind: str, label: str) -> Iterator[OperationTag]:
    """Every step on the store at `root` made inside this block, in this context and the threads
    it hands work to, belongs to one operation. Inside another operation on the same store the
    outer one goes on (its id is yielded)."""
    key = _key(root)
    active = _ACTIVE.get()
    outer = dict(active).get(key)
    if outer is not None:
        yield outer
        return
    op = OperationTag(new_id(), kind, label_of(label))
    token = _ACTIVE.set((*active, (key, op)))
    try:
        yield op
    finally:
        _ACTIVE.reset(token)


def for_step(root: str | os.PathLike[str], tool: str) -> OperationTag:
    """The operation a step at `root` belongs to: the one in force, or one of its own."""
    return current(root) or OperationTag(new_id(), CALL, label_of(tool))
