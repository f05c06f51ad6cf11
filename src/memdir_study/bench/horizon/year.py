"""A year of sessions: the simulated life's and real ones, on daily-ish days, with its truth.

Each month has `sessions_per_month` sessions on days spread evenly through it; every
`REAL_EVERY`-th is a real session (`weave.py`), the others are the life's (`life.py`). A life
session opens with a greeting, then says what the life has due that day (each statement followed
by the other's reply) among chit-chat, in a seeded order. Every turn is numbered as the year's
session (`S<n>T<m>`), so a locator names one turn of the whole year.

The truth the bench scores against:
- `facts`: each key's values over time (`bench.types.Fact`: value, since, until, the turn that
  said it), the spans of `life.Life`, dated as said;
- `observations`: the reference facts (`locomo.Observation`): the life's statements of a value
  (its `Kind.reference` sentence, citing the turn) and the real sessions' carried facts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from memdir.stream import Turn
from memdir_study.bench.generated import REPLIES
from memdir_study.bench.horizon.kinds import CHITCHAT, KINDS
from memdir_study.bench.horizon.life import Life, plan_life
from memdir_study.bench.horizon.weave import real_sessions
from memdir_study.bench.locomo import Observation
from memdir_study.bench.types import Fact

START = date(2025, 1, 1)
REAL_EVERY = 3  # one session in three is a real conversation's
FILLER = 3  # chit-chat lines per life session, besides what the day is due


@dataclass(frozen=True)
class Session:
    number: int
    day: date
    month: int
    source: str  # "life", or the real session's ("locomo conv-26 S3")
    turns: tuple[Turn, ...]


@dataclass
class Year:
    seed: int
    months: int
    sessions_per_month: int
    people: tuple[str, str]
    sessions: list[Session]
    facts: list[Fact]
    observations: list[Observation]

    def through(self, month: int) -> list[Session]:
        return [s for s in self.sessions if s.month <= month]

    def month_sessions(self, month: int) -> list[Session]:
        return [s for s in self.sessions if s.month == month]

    def turns(self, month: int | None = None) -> list[Turn]:
        chosen = self.sessions if month is None else self.through(month)
        return [t for s in chosen for t in s.turns]

    def dates(self) -> dict[str, str | None]:
        return {t.locator: t.date for s in self.sessions for t in s.turns}

    def speakers(self) -> list[str]:
        return sorted({t.speaker for s in self.sessions for t in s.turns})


def month_days(month: int, n: int) -> list[date]:
    """`n` days spread evenly through calendar month `month` of the year (1-based)."""
    first = _month_start(month)
    length = (_month_start(month + 1) - first).days
    picked = sorted({first + timedelta(days=(i * length) // n) for i in range(n)})
    return picked


def _month_start(month: int) -> date:
    y, m = divmod(month - 1, 12)
    return date(START.year + y, m + 1, 1)


def build_year(seed: int, months: int = 12, sessions_per_month: int = 20) -> Year:
    """The year for `seed`; deterministic for its arguments (and the data folder's files)."""
    if months < 1 or not 1 <= sessions_per_month <= 28:
        raise ValueError("months must be at least 1 and sessions_per_month between 1 and 28")
    slots = [(m, d) for m in range(1, months + 1) for d in month_days(m, sessions_per_month)]
    real_at = {i for i in range(len(slots)) if i % REAL_EVERY == REAL_EVERY - 1}
    life_days = [d for i, (_, d) in enumerate(slots) if i not in real_at]
    first = sum(1 for i, (m, _) in enumerate(slots) if m == 1 and i not in real_at)
    life = plan_life(seed, life_days, first)
    real = iter(real_sessions(len(real_at), seed))
    rng = random.Random(seed * 7919 + 1)
    sessions: list[Session] = []
    observations: list[Observation] = []
    said_at: dict[tuple[str, str, date], str] = {}  # (subject, attribute, day) -> locator
    for i, (month, day) in enumerate(slots):
        n = i + 1
        got = next(real, None) if i in real_at else None
        if got is not None:
            turns, carried = got.placed(n, day.isoformat())
            sessions.append(Session(n, day, month, got.source, tuple(turns)))
            observations.extend(carried)
            continue
        turns, said = _life_session(rng, life, n, day)
        sessions.append(Session(n, day, month, "life", tuple(turns)))
        for (subject, attribute, act), loc, text in said:
            if act != "repeat":
                said_at[(subject, attribute, day)] = loc
                observations.append(Observation(n, subject, text, (loc,)))
    facts = [
        Fact(sp.subject, sp.attribute, sp.value, sp.since.isoformat(),
             sp.until.isoformat() if sp.until else None, said_at[(sp.subject, sp.attribute, sp.since)])
        for sp in life.spans
    ]  # fmt: skip
    facts.sort(key=lambda f: (f.subject, f.attribute, f.since))
    return Year(seed, months, sessions_per_month, life.people, sessions, facts, observations)


def _life_session(
    rng: random.Random, life: Life, n: int, day: date
) -> tuple[list[Turn], list[tuple[tuple[str, str, str], str, str]]]:
    """A life session's turns, and for each statement said: (subject, attribute, act), its
    locator and its reference sentence."""
    a, b = life.people
    due = [s for s in life.statements if s.day == day]
    blocks: list[list[tuple[str, str, int | None]]] = []
    for k, s in enumerate(due):
        other = b if s.speaker == a else a
        blocks.append([(s.speaker, s.text, k), (other, rng.choice(REPLIES), None)])
    for line in rng.sample(CHITCHAT, FILLER):
        blocks.append([(rng.choice((a, b)), line, None)])
    rng.shuffle(blocks)
    opener = rng.choice((a, b))
    lines: list[tuple[str, str, int | None]] = [
        (opener, f"Hi {b if opener == a else a}, good to talk again!", None)
    ]
    lines += [t for blk in blocks for t in blk]
    turns: list[Turn] = []
    said: list[tuple[tuple[str, str, str], str, str]] = []
    kinds = {k.attribute: k for k in KINDS}
    for m, (speaker, text, j) in enumerate(lines, 1):
        loc = f"S{n}T{m}"
        turns.append(Turn(loc, speaker, text, day.isoformat()))
        if j is not None:
            st = due[j]
            ref = kinds[st.attribute].reference.format(name=st.speaker, v=st.value)
            said.append(((st.speaker, st.attribute, st.act), loc, ref))
    return turns, said
