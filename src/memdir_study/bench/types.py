"""What every loader returns: one sample (a dialogue stream and its question battery)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from memdir.errors import MemdirError
from memdir.stream import Chunk, Turn, chunk_stream

_SESSIONS = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", re.ASCII)


def parse_sessions(text: str) -> tuple[int, int]:
    """`"3-7"` -> (3, 7), `"4"` -> (4, 4): a slice of sessions, both ends inclusive, counted
    from 1. Anything else is a MemdirError saying what to write."""
    m = _SESSIONS.fullmatch(text)
    if not m:
        raise MemdirError(f"{text!r} is not A-B or N; write e.g. 1-2 (sessions 1 to 2) or 3 (session 3 only)")
    first = int(m.group(1))
    last = int(m.group(2) or first)
    if min(first, last) < 1:
        raise MemdirError(f"{text!r} names session 0; sessions count from 1, e.g. 1-{max(first, last, 1)}")
    if last < first:
        raise MemdirError(f"{text!r} ends before it starts; write the lower session first: {last}-{first}")
    return first, last


def _spans(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> "1-3, 5"."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


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
    date: str | None = None  # when the question is asked (ISO), where the source says (LongMemEval)


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
    session (or block) number to its ISO date (None when the source has none). `session_ids`
    maps a session number to the source's own session id where it has one (LongMemEval, whose
    session-level recall is scored against those ids); empty otherwise."""

    benchmark: str
    id: str
    turns: list[Turn]
    questions: list[Question]
    session_dates: dict[int, str | None]
    speakers: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    session_ids: dict[int, str] = field(default_factory=dict)

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

    def sliced(self, first: int, last: int) -> Sample:
        """The sample cut to sessions `first`..`last` (inclusive): their turns, their dates, the
        facts stated in them, and the questions whose every evidence locator names a kept turn.

        Questions without evidence are dropped (nothing says which sessions answer them), and so
        is every question citing a turn outside the slice. Kept questions keep their ids and
        their `order` in the whole sample, so defective golds stay named and a sliced run's
        rows are the full run's rows. A multiple-choice sample without evidence (PersonaMem) is
        refused, since a slice would keep none of its questions; so is a range naming no
        session of the sample. Ids, speakers and the benchmark stay as they are.
        """
        if first < 1 or last < first:
            raise MemdirError(f"sessions {first}-{last} is an empty range; write A-B with 1 <= A <= B")
        choice = [q for q in self.questions if q.options is not None]
        if choice and not any(q.evidence for q in choice):
            raise MemdirError(
                f"{self.benchmark} {self.id} cannot be sliced by sessions: its multiple-choice questions "
                "carry no evidence locators, so nothing says which sessions answer them; run it whole "
                "(without --sessions) and use --questions N for a short run"
            )
        turns = [t for t in self.turns if first <= t.session <= last]
        if not turns:
            have = _spans(list(self.session_turns())) or "none"
            raise MemdirError(
                f"{self.benchmark} {self.id} has no session in {first}-{last}; its sessions are {have}, "
                "choose --sessions within them"
            )
        kept = {t.locator for t in turns}
        return replace(
            self,
            turns=turns,
            questions=[q for q in self.questions if q.evidence and all(e in kept for e in q.evidence)],
            session_dates={n: d for n, d in self.session_dates.items() if first <= n <= last},
            session_ids={n: s for n, s in self.session_ids.items() if first <= n <= last},
            facts=[f for f in self.facts if f.locator in kept],
            speakers=list(self.speakers),
        )

    def categories(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for q in self.questions:
            counts[q.category] = counts.get(q.category, 0) + 1
        return counts
