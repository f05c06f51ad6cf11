"""One simulated life over a year: who, what each of their facts is on every day, and when they
say so.

Two people talk (the one whose year it is, and a friend who tells of their own life too). Each
person holds a set of keys (`kinds.KINDS`); each key is stated in the first month, then changes
0 to 3 times over the year, on days drawn at least `GAP` days apart, and is restated unchanged
in passing now and then. What is said when is a list of `Statement`s; the truth of each key is
a list of spans (value, valid from, valid until), so no two values of a key ever hold on the
same day. Deterministic per seed: one `random.Random(seed)` draws everything, in a fixed order.
The days are the days the two talk (`year.py` chooses them), so a value holds from the day it
is said.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from memdir_study.bench.horizon.kinds import KINDS, Kind

NAMES = (
    "Maya", "Tomas", "Ines", "Rafael", "Noor", "Elias", "Sofia", "Kenji", "Amara", "Lukas",
    "Zara", "Mateus", "Ada", "Oskar", "Leila", "Bram",
)  # fmt: skip
GAP = 21  # days between two changes of one key: a life changes, it does not flicker
MAX_CHANGES = 3
REPEATS = (1, 3)  # restatements of a key over the year, drawn in this range


@dataclass(frozen=True)
class Statement:
    """One thing said: on `day`, `speaker` says `text` about their own `attribute`; `act` is
    state, change, implied or repeat."""

    day: date
    speaker: str
    attribute: str
    value: str
    act: str
    text: str


@dataclass(frozen=True)
class Span:
    """One value of a key and the days it held: from `since` to `until` (exclusive; None while
    current)."""

    subject: str
    attribute: str
    value: str
    since: date
    until: date | None


@dataclass(frozen=True)
class Life:
    people: tuple[str, str]  # the one whose year it is, the friend
    statements: tuple[Statement, ...]
    spans: tuple[Span, ...]


def plan_life(seed: int, days: Sequence[date], first: int, keys_each: int = 8) -> Life:
    """The life for `seed` told on `days` (the days the two talk, ascending; the first `first`
    of them are the first month): both people's keys, stated on one of the first month's days,
    changed on later days at least GAP apart, restated on others (statements sorted by day,
    then speaker, then attribute). Facts are said only on the days given, so a value's span
    starts on the day it is said."""
    if not days or first < 1:
        raise ValueError("a life needs at least one day to talk on in its first month")
    rng = random.Random(seed)
    people = tuple(rng.sample(NAMES, 2))
    statements: list[Statement] = []
    spans: list[Span] = []
    for person in people:
        for kind in rng.sample(KINDS, min(keys_each, len(KINDS))):
            values = list(kind.values)
            rng.shuffle(values)
            opened = rng.randrange(min(first, len(days)))
            held = [(days[opened], values.pop())]
            for d in _change_days(rng, days[first:], rng.randint(0, MAX_CHANGES)):
                held.append((d, values.pop()))
            for i, (since, value) in enumerate(held):
                until = held[i + 1][0] if i + 1 < len(held) else None
                spans.append(Span(person, kind.attribute, value, since, until))
                act = "state" if i == 0 else rng.choice(("change", "change", "implied"))
                statements.append(_say(rng, kind, person, since, value, act))
            taken = {s for s, _ in held}
            later = [d for d in days[opened + 1 :] if d not in taken]
            for day in rng.sample(later, min(len(later), rng.randint(*REPEATS))):
                value = next(v for s, v in reversed(held) if s <= day)
                statements.append(_say(rng, kind, person, day, value, "repeat"))
    statements.sort(key=lambda s: (s.day, people.index(s.speaker), s.attribute))
    return Life((people[0], people[1]), tuple(statements), tuple(spans))


def _change_days(rng: random.Random, days: Sequence[date], n: int) -> list[date]:
    """Up to `n` of `days` at least GAP apart, ascending (fewer when they don't fit)."""
    found: list[date] = []
    for _ in range(n):
        free = [d for d in days if all(abs((d - f).days) >= GAP for f in found)]
        if not free:
            break
        found.append(rng.choice(free))
    return sorted(found)


def _say(rng: random.Random, kind: Kind, person: str, day: date, value: str, act: str) -> Statement:
    forms: tuple[str, ...] = getattr(kind, act)
    return Statement(day, person, kind.attribute, value, act, rng.choice(forms).format(v=value))
