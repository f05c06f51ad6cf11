"""Update accuracy (HaluMem's update split): after a session, does the store serve each changed
key's true current value? Scored with no model against the generated benchmark's ground truth
(`Sample.facts`: every keyed fact's value over time); the definitions are docs/metrics.md,
"Update accuracy".

Why a figure of its own: precision and recall (`writes.py`) read each line alone, so a store
that wrote "Ana | home: Lisbon" and never struck it when Ana moved to Porto scores a supported,
true-when-said line. What an agent is served is the *live* value, and a superseded value still
live is a false memory that cites a real turn. HaluMem names the three outcomes of an update,
and so do the keys here:

- **correct**: the store's live value of the key is its true current value;
- **hallucinated**: a live value never said for the key (a wrong value filed as current);
- **omitted**: an earlier value still live, or no live value at all (the change was lost).

`update_accuracy` is correct / scored. Only keys whose value changed at least once by the session
are scored: a key stated once tests extraction, not updating.

What "the store's live value" is, is stated once here:
- the live keyed lines (`conventions.parse_keyed`) of the key's subject whose attribute names the
  key's (`names`: the content words of one are among the other's, "home" for "home city"), each
  value as it is; and the subject's live keyed lines under any other attribute whose value is a
  value said for the key ("favorite food: Ethiopian" for the favorite cuisine), only then;
- with none of those, the distilled lines (`conventions.parse_distilled`: no attribute, no
  supersede) of the subject: the key's value is the current one when a line states it with a
  later date than every line stating an earlier value, and there is none (omitted) otherwise.

Values are compared as the rest of the bench compares text: content F1 (`fact_quality.
content_f1`, over `words.terms`) of at least `MATCH` against a value said for the key, the best
match winning and a tie going to the earlier value (a line naming both old and new is not an
update).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from memdir.analytics.facts import FactLine
from memdir.conventions import parse_distilled, parse_keyed
from memdir.fact_quality import content_f1
from memdir.jsontypes import JsonObject, JsonValue, array, count
from memdir.words import terms
from memdir_study.bench.types import Fact

MATCH = 0.5
"""Content F1 at which a stored value is a value said for the key ("a Subaru" is "Subaru
Outback": .67; "Thai is my favorite cuisine now" is "Thai": .5)."""
VERDICTS = ("correct", "hallucinated", "omitted")
EXAMPLES = 5  # keys not scored correct, shown per score to read what went wrong

Verdict = Literal["correct", "hallucinated", "omitted"]
_NAME_WORDS = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class ChangedKey:
    """A key whose value changed at least once by a session: its current value and the earlier
    ones, oldest first."""

    subject: str
    attribute: str
    current: str
    past: tuple[str, ...]
    locator: str  # the turn that stated the current value

    @property
    def said(self) -> tuple[str, ...]:
        return (*self.past, self.current)

    def shown(self) -> str:
        return f"{self.subject} | {self.attribute}: {' -> '.join(self.said)}"


def session_of(locator: str) -> int:
    """The session of an `S6T5` locator (the generated benchmark's)."""
    m = re.fullmatch(r"S(\d+)T\d+", locator)
    if m is None:
        raise ValueError(f"{locator!r} is not a session-turn locator (S<n>T<m>)")
    return int(m.group(1))


def changed_keys(facts: Iterable[Fact], through: int) -> list[ChangedKey]:
    """The keys whose value changed at least once in sessions 1..`through`, in order of first
    statement; `facts` are the benchmark's ground truth (one per value a key held)."""
    history: dict[tuple[str, str], list[Fact]] = {}
    for f in facts:
        if session_of(f.locator) <= through:
            history.setdefault((f.subject, f.attribute), []).append(f)
    out = []
    for (subject, attribute), held in history.items():
        held.sort(key=lambda f: (session_of(f.locator), f.since))
        if len(held) >= 2:
            past = tuple(f.value for f in held[:-1])
            out.append(ChangedKey(subject, attribute, held[-1].value, past, held[-1].locator))
    return out


def said_value(value: str, key: ChangedKey) -> str | None:
    """The value said for `key` that `value` states (content F1 >= MATCH, best first, a tie
    going to the earlier value), or None: a value never said for the key."""
    best, found = 0.0, None
    for said in key.said:  # oldest first: a later value must match strictly better
        f1 = content_f1(value, said)
        if f1 >= MATCH and f1 > best:
            best, found = f1, said
    return found


def _person(name: str) -> tuple[str, ...]:
    """A subject as its words ("Mary-Ann" and "mary ann" are one person)."""
    return tuple(_NAME_WORDS.findall(name.casefold()))


def names(stored: str, attribute: str) -> bool:
    """A stored attribute names a true one: the content words of one are all among the other's
    ("home" for "home city"; "favorite food" is not "favorite cuisine")."""
    a, b = set(terms(stored)), set(terms(attribute))
    return bool(a and b) and (a <= b or b <= a)


@dataclass(frozen=True)
class Live:
    """What the store serves for a key: the said values its live lines state (None for a value
    never said for the key), where they were read ("keyed", "distilled", or "none"), and the
    lines."""

    values: tuple[str | None, ...]
    source: str
    lines: tuple[str, ...] = ()


def live_value(lines: Sequence[FactLine], key: ChangedKey, dates: Mapping[str, str | None]) -> Live:
    """The store's live value of `key` by the rule of the module docstring. `dates`: each turn's
    date by locator, for distilled lines that carry none of their own."""
    person = _person(key.subject)
    values: list[str | None] = []
    shown: list[str] = []
    for line in lines:
        kf = parse_keyed(line.path, line.lineno, line.text)
        if kf is None or not kf.live or _person(kf.subject) != person:
            continue
        said = said_value(kf.value, key)
        if names(kf.attribute, key.attribute) or said is not None:
            values.append(said)
            shown.append(line.text.strip())
    if values:
        return Live(tuple(values), "keyed", tuple(shown))
    newest: dict[str, str] = {}  # said value -> the latest date a distilled line states it
    for line in lines:
        df = parse_distilled(line.text)
        if df is None or _person(df.subject) != person:
            continue
        said = said_value(df.value, key)
        day = df.date or max((dates.get(loc) or "" for loc in df.locators), default="")
        if said is not None and day:
            newest[said] = max(newest.get(said, ""), day)
            shown.append(line.text.strip())
    old = max((newest[v] for v in key.past if v in newest), default="")
    if key.current in newest and newest[key.current] > old:
        return Live((key.current,), "distilled", tuple(shown))
    return Live((), "none", tuple(shown))


def store_keys(lines: Sequence[FactLine], key: ChangedKey) -> list[tuple[str, str]]:
    """The store's own keys (subject, attribute as written) for `key`, live lines' first: those of
    its subject's keyed lines, live or struck through, tied to it by the rule of `live_value`."""
    person = _person(key.subject)
    found: dict[tuple[str, str], bool] = {}
    for line in lines:
        kf = parse_keyed(line.path, line.lineno, line.text)
        if kf is None or _person(kf.subject) != person:
            continue
        if names(kf.attribute, key.attribute) or said_value(kf.value, key) is not None:
            found[(kf.subject, kf.attribute)] = found.get((kf.subject, kf.attribute), False) or kf.live
    return sorted(found, key=lambda k: not found[k])


def verdict(key: ChangedKey, live: Live) -> Verdict:
    """hallucinated when any live value was never said for the key; correct when every live value
    is the current one; omitted otherwise (an earlier value live, or none)."""
    if any(v is None for v in live.values):
        return "hallucinated"
    if live.values and all(v == key.current for v in live.values):
        return "correct"
    return "omitted"


@dataclass
class UpdateScore:
    """Counts, so sessions and conversations add up (pooled figures are ratios of sums)."""

    correct: int = 0
    hallucinated: int = 0
    omitted: int = 0
    examples: list[str] = field(default_factory=list)  # keys not correct: the truth and the lines

    @property
    def scored(self) -> int:
        return self.correct + self.hallucinated + self.omitted

    def rate(self, n: int) -> float | None:
        return round(n / self.scored, 4) if self.scored else None

    def __add__(self, other: UpdateScore) -> UpdateScore:
        return UpdateScore(
            self.correct + other.correct,
            self.hallucinated + other.hallucinated,
            self.omitted + other.omitted,
            (self.examples + other.examples)[:EXAMPLES],
        )

    def as_json(self) -> JsonObject:
        return {
            "scored": self.scored,
            "correct": self.correct,
            "hallucinated": self.hallucinated,
            "omitted": self.omitted,
            "update_accuracy": self.rate(self.correct),
            "hallucination_rate": self.rate(self.hallucinated),
            "omission_rate": self.rate(self.omitted),
            "examples": self.examples,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> UpdateScore:
        """`as_json` read back."""
        examples = [str(x) for x in array(d.get("examples"))]
        return cls(count(d.get("correct")), count(d.get("hallucinated")), count(d.get("omitted")), examples)


def score_updates(
    lines: Sequence[FactLine], facts: Iterable[Fact], through: int, dates: Mapping[str, str | None]
) -> UpdateScore:
    """Every key changed by session `through`, judged on the store's fact `lines` as they are
    after that session."""
    out = UpdateScore()
    for key in changed_keys(facts, through):
        live = live_value(lines, key, dates)
        found = verdict(key, live)
        setattr(out, found, getattr(out, found) + 1)
        if found != "correct" and len(out.examples) < EXAMPLES:
            held = "; ".join(live.lines) or "no line"
            out.examples.append(f"{found}: {key.shown()} | store ({live.source}): {held}")
    return out
