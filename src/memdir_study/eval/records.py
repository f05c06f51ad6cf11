"""The conversational study's records, typed: an answer row (a line of answers.jsonl), a cell
summary and a run summary (summary.json), the wall times (timings.json). Each file is read once,
where the run folder is read, and typed everywhere after: summary.py derives the summaries from
typed rows and report.py renders typed summaries.

Pydantic models rather than frozen dataclasses, as inspect_ai types its eval logs: the files are
read back from disk, from run folders older than today's fields, so reading needs validation that
names the field at fault and defaults for what older folders lack; a hand-written `from_json`
for each record would be both by hand.
Field order is the files' key order, and `to_json` writes exactly what the dicts before these
records wrote, so summary.json's bytes are the same for the same cells. Fields an older file
carried and today's leave out (`seconds` before timings.json) are read and never written.

What other rooms make and the summary carries as it is (a build's cost from `build_cost`, a
store's profile from `analytics.stats`, a variant's checks, the corpus's profile) stays a dict
here: its shape is its maker's, and older folders' markers hold older shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Self, TypedDict

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.sign_test import Sidedness
from memdir_study.eval.composite import composite
from memdir_study.runfolder import not_a_row

# summary.json and timings.json are derived from the folder's tables: a resumed run derives them again.
DERIVE_AGAIN = "derive it again: run `memdir study eval` with the run's settings and --out, which summarizes"


class Record(BaseModel):
    """A typed line or file of a run folder: immutable once read or made."""

    model_config = ConfigDict(frozen=True)

    def as_json(self) -> JsonObject:
        """The record as the dict the file holds."""
        return self.model_dump(mode="json")

    def to_json(self) -> bytes:
        """The file's bytes, indented as summary.json and timings.json have always been written."""
        return json.dumps(self.as_json(), indent=2).encode()

    @classmethod
    def from_json(cls, data: Any, where: str, fix: str = "") -> Self:
        """`data` (a parsed line or file) as this record; a clear error naming `where`, the field
        at fault and what to do (`fix`) when it is not one."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise not_a_row(exc, where, cls.__name__, fix) from None

    @classmethod
    def read(cls, path: Path) -> Self:
        """A JSON file as this record."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise MemdirError(f"{path} is not JSON ({exc}); {DERIVE_AGAIN}") from None
        return cls.from_json(data, str(path), DERIVE_AGAIN)


# -- an answer row --------------------------------------------------------------------------------


class CacheBounds(Record):
    """The intrinsic bounds of search prompts (the paper's Table 18): every prompt paid in full,
    uncached input as billed, each prompt token paid once; and the share of the saving a perfect
    cache allows that the run's cache made (None when there is nothing to save)."""

    no_cache: int
    measured: int
    perfect: int
    caching_efficiency: float | None = None


class SearchEffort(Record):
    """One question's search effort, from its record lines (`runner.search_metrics`). Rows written
    before a field existed lack it: None, and the cell's mean of that field is None too."""

    prompt_kb: float | None = None
    tool_calls: int | None = None
    rounds: int | None = None
    bytes_read: int | None = None
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    bounds: CacheBounds | None = None


class JudgeRecord(Record):
    """One question's judge: each judge's label (`unparsed` visible), its tokens and bill, and
    attribution's three scales when it scored them (the key is absent otherwise, as always)."""

    labels: dict[str, str] = Field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    seconds: float = 0.0
    scales: dict[str, float | int] | None = None

    @model_serializer(mode="wrap")
    def _scales_only_when_scored(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("scales") is None:
            out.pop("scales", None)
        return out


class AnswerRow(Record):
    """One line of answers.jsonl (docs/eval.md, The run folder): a question asked of one cell,
    its answer and every score; summary.json is computed from these alone."""

    benchmark: str = ""
    conversation: str
    variant: str
    question_id: str
    order: int
    category: str = ""
    question: str = ""
    gold: str = ""
    answer: str = ""
    citations: list[str] = Field(default_factory=list)
    correctness: float | None = None
    attribution: float | None = None
    f1: float | None = None
    lexical_support: float | None = None
    citations_not_found: list[str] = Field(default_factory=list)
    evidence_hit: float | None = None
    defective: bool = False
    search: SearchEffort = Field(default_factory=SearchEffort)
    judge: JudgeRecord | None = None

    @property
    def key(self) -> dict[str, str]:
        """The cell the row belongs to, as `ConversationCell.key` names it."""
        return {"benchmark": self.benchmark, "conversation": self.conversation, "variant": self.variant}

    @property
    def composite(self) -> float | None:
        """The study's run-to-run composite of this answer (`composite.py`), from its
        correctness and attribution's scales as recorded; None where a judge did not score."""
        return composite(self.correctness, self.judge.scales if self.judge else None)

    def score(self, name: str) -> float | None:
        """One of the row's scores by its column name (correctness, attribution, composite, f1,
        evidence_hit)."""
        value = getattr(self, name)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    @property
    def judged(self) -> bool:
        return self.judge is not None and bool(self.judge.labels)


# -- a cell's summary and the run's ---------------------------------------------------------------


class Score(Record):
    """One score over some items: its mean over those scored, how many were, how many were not."""

    mean: float | None
    n: int
    unscored: int


class ScoreColumn(Record):
    """One score column of one cell: overall, without defective golds, and per category."""

    all: Score
    clean: Score
    by_category: dict[str, Score]


class SearchMeans(Record):
    """A cell's search effort, means per question; None for a field some row lacks."""

    tool_calls: float | None = None
    rounds: float | None = None
    bytes_read: float | None = None
    input_tokens: float | None = None
    cached_tokens: float | None = None
    output_tokens: float | None = None
    reasoning_tokens: float | None = None
    cost_usd: float | None = None
    prompt_kb: float | None = None


class ScaleMeans(Record):
    """Attribution's three scales, each a mean over the answers the judge scored, and how many."""

    citation_correctness: float
    relevance: float
    coherent_aggregation: float
    n: int


class JudgeHealth(Record):
    """How far a cell's LLM judge can be trusted (summary.judge_summary says how it is measured)."""

    verdicts: int
    unparsed: int
    judge_f1_agreement: float | None = None
    agreement_n: int = 0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float = 0.0
    scales: ScaleMeans | None = None
    seconds: float | None = Field(default=None, exclude=True)  # summaries before timings.json


class CorpusProfile(TypedDict, total=False):
    """A conversation's size as its cells' markers and summary.json carry it."""

    turns: int
    sessions: int
    chunks: int
    kb: float
    questions: int


class CellSummary(Record):
    """One cell of summary.json: who played which role, its status, its scores, its search and
    build cost, its store's profile and its checks."""

    benchmark: str = ""
    conversation: str
    variant: str
    model: str | None = None
    builder_model: str | None = None
    judge: str | None = None
    tool_set: str | None = None
    price_card: str | None = None
    status: str
    reason: str | None = None
    n_questions: int = 0
    defective: list[str] = Field(default_factory=list)
    correctness: ScoreColumn | None = None
    attribution: ScoreColumn | None = None
    f1: ScoreColumn | None = None
    evidence_hit: ScoreColumn | None = None
    composite: ScoreColumn | None = None
    search: SearchMeans = Field(default_factory=SearchMeans)
    judge_health: JudgeHealth | None = None
    caching: CacheBounds | None = None
    build: JsonObject = Field(default_factory=dict)
    store: JsonObject | None = None
    checks: JsonObject = Field(default_factory=dict)
    corpus: JsonObject = Field(default_factory=dict)

    @property
    def cell(self) -> tuple[str, str, str]:
        return (self.benchmark, self.conversation, self.variant)


class Comparison(Record):
    """One paired comparison (stats.COMPARISONS): a variant against a baseline on the items both
    scored on one conversation, with the sidedness it was tested at."""

    benchmark: str
    conversation: str
    variant: str
    against: str
    score: str
    wins: int
    losses: int
    ties: int
    p_value: float
    sidedness: Sidedness


class RunSummary(Record):
    """summary.json: every cell's summary and the paired comparisons (none in older summaries)."""

    cells: list[CellSummary]
    paired: list[Comparison] = Field(default_factory=list)


class CellTimings(Record):
    """A cell's wall times, which differ from one run of the same cells to the next."""

    benchmark: str = ""
    conversation: str
    variant: str
    build_seconds: float | None = None
    judge_seconds: float | None = None

    @property
    def cell(self) -> tuple[str, str, str]:
        return (self.benchmark, self.conversation, self.variant)


class RunTimings(Record):
    """timings.json: each cell's build and judge wall times."""

    cells: list[CellTimings] = Field(default_factory=list)
