"""What the Python API returns: typed, frozen records, so an app reads fields, not dict keys.

Each is built from the one record the rest of memdir already keeps (a section hit of
`store/hybrid.py`, a role's `RoleOutput`, an ingest's `IngestResult`); nothing here is measured
twice. A past step and its changes are the store's own records (`JournalStep`, `Change`), not
copies.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from memdir.models import Usage

if TYPE_CHECKING:
    from memdir.store.journal import JournalStep

# The tools one role gets: a name in tools/profiles.PROFILES, the one table of them (no copy
# here to keep in step), checked where the API takes one (`require_profile`).
Profile = str
# Search by section: keywords (BM25), meaning (embeddings) or both fused (docs/retrieval.md).
SearchMode = Literal["bm25", "dense", "hybrid"]


@dataclass(frozen=True)
class SearchHit:
    """One ranked section: lines `start_line`..`end_line` of `path` (as `view` numbers them),
    under the heading path `heading` ("" before the file's first heading)."""

    path: str
    heading: str
    start_line: int
    end_line: int
    score: float
    snippet: tuple[tuple[int, str], ...]  # (line number, line) of the lines that matched best
    ranks: dict[str, int]  # its 1-based rank in each ranking that holds it ("bm25", "dense")
    # A folder index's section (`MEMORY.md`): navigation, ranked after every content hit
    # (docs/retrieval.md, "Content before navigation").
    navigation: bool = False


@dataclass(frozen=True)
class Citation:
    """A citation of an answer, resolved against the store: does the file (and range) exist?"""

    text: str  # as the answer wrote it
    path: str
    start_line: int | None
    end_line: int | None
    section: str | None
    found: bool


@dataclass(frozen=True)
class Answer:
    """The search role's answer to one question."""

    question: str
    answer: str  # "" when the model gave none it could parse
    citations: tuple[Citation, ...]
    usage: Usage
    model: str
    baseline: bool  # played by an offline baseline, not a model
    tool_calls: int
    rounds: int
    files_opened: int  # distinct files whose content a tool call returned
    reply: str  # the reply text the answer was parsed from

    @property
    def opened_nothing(self) -> bool:
        """An answer given without reading the store (its record marks it too)."""
        return self.files_opened == 0


@dataclass(frozen=True)
class AddResult:
    """What `add` integrated: the turns, their chunks, and which chunks changed the store."""

    turns: int
    chunks: tuple[int, ...]
    unchanged: tuple[int, ...]  # chunks whose management episode wrote nothing
    writes: int  # file-level changes over all chunks
    usage: Usage
    model: str
    baseline: bool
    source: str  # what the input was read as ("text", "openai-messages", a file's format...)
    summary: str  # the line `memdir ingest` prints for the same batch
    skipped: int = 0  # input records that hold no turn (system or tool messages, empty text)
    # where the batch went: curate, dump, or switch (docs/eval.md, Adaptive shape); none: every
    # turn was already in the store
    went: str = "curate"
    switch_kb: float | None = None  # the dump's size when this batch switched it to curation
    already: int = 0  # turns left out: the store holds them already (store/ingest_ledger.py)
    operation: str | None = None  # the journal's id for this add: `memdir revert ROOT --operation ID`

    @property
    def changed_nothing(self) -> bool:
        if self.went == "none":
            return True
        if self.went == "dump":
            return self.writes == 0
        return bool(self.chunks) and len(self.unchanged) == len(self.chunks)


@dataclass(frozen=True)
class Operation:
    """What one call did, as the history groups it (store/operations.py): one ingest, one `add`,
    one consolidate, one adopt, one revert, or one tool call made outside any of them."""

    id: str
    kind: str
    label: str
    time: datetime  # when its first step was journaled
    steps: tuple[JournalStep, ...]
    files: tuple[str, ...]  # every path its steps changed, sorted
