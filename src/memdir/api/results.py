"""What the Python API returns: typed, frozen records, so an app reads fields, not dict keys.

Each is built from the one record the rest of memdir already keeps (a section hit of
`search/hybrid.py`, a resolved citation of `store/citations.py`, a role's `RoleOutput`, an
ingest's `IngestResult`), by a named constructor or by keywords: every field is keyword-only,
so no caller can fill eleven fields in the wrong order. Nothing here is measured twice. A past
step and its changes are the store's own records (`JournalStep`, `Change`), not copies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memdir.models import Usage
from memdir.search.hybrid import Mode
from memdir.search.live_first import past_shown, superseded

if TYPE_CHECKING:
    from memdir.agents.ingest import IngestResult
    from memdir.search.hybrid import SectionHit
    from memdir.store.citations import Resolved
    from memdir.store.journal import JournalStep

# The tools one role gets: a name in tools/profiles.PROFILES, the one table of them (no copy
# here to keep in step), checked where the API takes one (`require_profile`).
Profile = str
# Search by section: keywords (BM25), meaning (embeddings) or both fused (docs/retrieval.md);
# the store's own type, under the API's name.
SearchMode = Mode


@dataclass(frozen=True, kw_only=True)
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
    # The shown lines that are struck-through past values of a keyed fact, and whether the hit
    # shows past values only, no live one (docs/retrieval.md, "Live values first").
    past_lines: tuple[int, ...] = ()
    superseded: bool = False

    @classmethod
    def from_section(cls, hit: SectionHit, snippet: Iterable[tuple[int, str]], text: str = "") -> SearchHit:
        """The hit `search/hybrid.search_sections` ranked, with the lines shown for it; `text`,
        its file's, marks the past values among them."""
        shown = tuple(snippet)
        lines = text.split("\n") if text else []
        numbers = [n for n, _ in shown]
        return cls(
            path=hit.path,
            heading=hit.heading,
            start_line=hit.start,
            end_line=hit.end,
            score=hit.score,
            snippet=shown,
            ranks=dict(hit.ranks),
            navigation=hit.navigation,
            past_lines=past_shown(lines, numbers),
            superseded=superseded(lines, numbers),
        )


@dataclass(frozen=True, kw_only=True)
class Citation:
    """A citation of an answer, resolved against the store: does the file (and range) exist?"""

    text: str  # as the answer wrote it
    path: str
    start_line: int | None
    end_line: int | None
    section: str | None
    found: bool

    @classmethod
    def from_resolved(cls, text: str, resolved: Resolved) -> Citation:
        """`text` as `store/citations.resolve` resolved it (the evaluation's one resolver)."""
        r = resolved
        return cls(
            text=text, path=r.path or "", start_line=r.start, end_line=r.end, section=r.section, found=r.ok
        )


@dataclass(frozen=True, kw_only=True)
class Answer:
    """The answering role's answer to one question."""

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


@dataclass(frozen=True, kw_only=True)
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
    # where the batch went: curate, dump, or switch (docs/eval.md, Ingest strategy); none: every
    # turn was already in the store
    went: str = "curate"
    switch_kb: float | None = None  # the dump's size when this batch switched it to curation
    already: int = 0  # turns left out: the store holds them already (store/ingest_ledger.py)
    operation: str | None = None  # the journal's id for this add: `memdir revert ROOT --operation ID`

    @classmethod
    def nothing_new(cls, *, model: str, source: str, summary: str, skipped: int, already: int) -> AddResult:
        """A batch whose every turn the store already held: nothing added, no model called."""
        return cls(
            turns=0, chunks=(), unchanged=(), writes=0, usage=Usage(), model=model, baseline=True,
            source=source, summary=summary, skipped=skipped, went="none", already=already,
        )  # fmt: skip

    @classmethod
    def from_dump(
        cls, *, turns: int, writes: int, model: str, source: str, summary: str, skipped: int,
        already: int, operation: str,
    ) -> AddResult:  # fmt: skip
        """A batch the ingest strategy dumped verbatim: files written, no model called."""
        return cls(
            turns=turns, chunks=(), unchanged=(), writes=writes, usage=Usage(), model=model,
            baseline=True, source=source, summary=summary, skipped=skipped, went="dump",
            already=already, operation=operation if writes else None,
        )  # fmt: skip

    @classmethod
    def from_ingest(
        cls, result: IngestResult, *, went: str, switch_kb: float | None, model: str, source: str,
        summary: str, skipped: int, already: int, operation: str,
    ) -> AddResult:  # fmt: skip
        """A batch the management role integrated (curated, or at the switch from a dump): its
        chunks, their writes and what the episodes cost, read off the ingest's own record."""
        return cls(
            turns=result.turns,
            chunks=tuple(result.chunks),
            unchanged=tuple(result.unchanged),
            writes=sum(result.writes.values()),
            usage=sum((o.episode.usage for o in result.outputs if o.episode is not None), Usage()),
            model=model,
            baseline=any(o.baseline for o in result.outputs),
            source=source,
            summary=summary,
            skipped=skipped,
            went=went,
            switch_kb=switch_kb,
            already=already,
            operation=None if result.changed_nothing else operation,  # nothing to revert
        )

    @property
    def changed_nothing(self) -> bool:
        if self.went == "none":
            return True
        if self.went == "dump":
            return self.writes == 0
        return bool(self.chunks) and len(self.unchanged) == len(self.chunks)


@dataclass(frozen=True, kw_only=True)
class Operation:
    """What one call did, as the history groups it (store/operations.py): one ingest, one `add`,
    one consolidate, one adopt, one revert, or one tool call made outside any of them."""

    id: str
    kind: str
    label: str
    time: datetime  # when its first step was journaled
    steps: tuple[JournalStep, ...]
    files: tuple[str, ...]  # every path its steps changed, sorted
