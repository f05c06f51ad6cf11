"""What one role call returns, model or baseline: its text, answer and citations, its episode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from memdir.agents.loop import Episode
from memdir.models.usage import UsageRecord


class RoleExtra(TypedDict, total=False):
    """What a role's output carries besides its text and answer, by the role that sets it: any
    write (`writes`, an undone chunk's reasons), search (`files_opened`, the read search's
    `sections` and `dropped_citations`), multiple choice (`choice`, the offline chooser's
    `scores`), foldering (`moves`, old path -> new), split curation (its counts)."""

    writes: int
    undone: bool
    undo_reasons: list[str]
    episode_writes: int
    parsed: str
    files_opened: int
    sections: int
    dropped_citations: int
    search: str
    choice: int | None
    scores: list[float]
    moves: dict[str, str]
    curation: str
    facts_proposed: int
    facts_kept: int
    facts_dropped: dict[str, int]
    subjects_rewritten: int
    values_trimmed: int
    evidence_recited: int
    dates_cleared: int
    values_respanned: int
    denials_kept: int
    kinds_fixed: int
    malformed: int
    keyed_written: int
    keyed_withheld: int
    keyed_by_rule: int
    distilled_written: int
    superseded: int
    verbatim_written: int
    assistant_facts_dropped: int
    model_calls: int
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    model_seconds: float
    seconds: float
    tool_calls: int


class RoleRecord(RoleExtra, total=False):
    """A role's output as `memdir` prints it (JSON): who answered, the answer or text, the
    episode's figures, then the extra."""

    role: str
    model: str
    baseline: bool
    answer: str
    citations: list[str]
    text: str
    rounds: int
    stop: str
    usage: UsageRecord
    stop_reason: str


@dataclass
class RoleOutput:
    role: str
    model: str
    text: str
    answer: str | None = None
    citations: list[str] = field(default_factory=list)
    episode: Episode | None = None
    baseline: bool = False
    extra: RoleExtra = field(default_factory=lambda: RoleExtra())

    def as_dict(self) -> RoleRecord:
        d = RoleRecord(role=self.role, model=self.model, baseline=self.baseline)
        if self.answer is not None:
            d |= {"answer": self.answer, "citations": self.citations}
        else:
            d["text"] = self.text
        if self.episode is not None:
            ep = self.episode
            d |= {
                "rounds": ep.rounds,
                "tool_calls": ep.tool_calls,
                "stop": ep.stop,
                "usage": ep.usage.as_dict(),
            }
            if ep.stop_reason:
                d["stop_reason"] = ep.stop_reason
        return {**d, **self.extra}
