"""What every loader returns: one sample (a dialogue stream and its question battery)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.stream import Chunk, Turn, chunk_stream


@dataclass(frozen=True)
class Question:
    """One evaluation item.

    `order` is the 1-based evaluation order within its sample (LoCoMo's defective golds are
    named by it). `category_code` keeps the source's numeric category where it has one, since
    LoCoMo's scorer switches on it. `options` is set for multiple choice (PersonaMem), whose
    `gold` is then an option letter such as `(c)`. `evidence` holds locators (`S6T5`).
    """

    id: str
    category: str
    question: str
    gold: str
    evidence: tuple[str, ...] = ()
    options: tuple[str, ...] | None = None
    category_code: int | None = None
    order: int = 0
    defective: bool = False


@dataclass(frozen=True)
class Fact:
    """Ground truth of a keyed fact over time (generated benchmark): one value of
    (subject, attribute), the dates it held (ISO, `until` None while current) and where it
    was stated."""

    subject: str
    attribute: str
    value: str
    since: str
    until: str | None
    locator: str


@dataclass
class Sample:
    """A conversation of one benchmark: `turns` in stream order, `session_dates` maps a
    session (or block) number to its ISO date (None when the source has none)."""

    benchmark: str
    id: str
    turns: list[Turn]
    questions: list[Question]
    session_dates: dict[int, str | None]
    speakers: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    def chunks(self) -> list[Chunk]:
        return chunk_stream(self.turns)

    def session_turns(self) -> dict[int, list[Turn]]:
        """Turns grouped by session, in order: what a verbatim dump writes one file per."""
        out: dict[int, list[Turn]] = {}
        for t in self.turns:
            out.setdefault(t.session, []).append(t)
        return out

    def locators(self) -> set[str]:
        return {t.locator for t in self.turns}

    def unresolved_evidence(self) -> dict[str, list[str]]:
        """Question id -> evidence locators that name no turn of this sample."""
        known = self.locators()
        out: dict[str, list[str]] = {}
        for q in self.questions:
            bad = [e for e in q.evidence if e not in known]
            if bad:
                out[q.id] = bad
        return out

    def defective_ids(self) -> list[str]:
        """Ids of questions whose gold contradicts the source: scored, and reported apart."""
        return [q.id for q in self.questions if q.defective]

    def categories(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for q in self.questions:
            counts[q.category] = counts.get(q.category, 0) + 1
        return counts
