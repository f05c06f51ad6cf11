"""A store scored against the hand-checked truth key (`memdir_study.bench.truthkey`): extraction
recall and key precision, with no model (docs/metrics.md, "The truth key").

`writes.score` asks whether a line's words occur in the turn it cites and, by rule, whether it
says them of the right person and day. The key says what a careful reader filed from each
turn, so here a line is checked against facts, not only against words:

- a key fact is **kept** when a distilled line citing its turn has the fact's subject (`SUBJECT`
  below), content F1 >= `writes.KEPT` between the line's value and the fact's value, and the
  fact's polarity: a line stating the positive of a denial ("Joanna | diet: dairy" for "can't
  have dairy") keeps nothing, nor does a negated line keep a positive fact. Recall is kept
  facts over key facts; dates are not asked for it;
- **key precision** is the share of distilled lines citing key turns that match a key fact of a
  turn they cite on subject, value, polarity and date. A line that matches none is false, for
  the first reason of: `wrong subject` (the value matches a fact of the turn, the subject
  does not), `negated` (subject and value match, the polarity is flipped), `wrong date` (all
  match but the day), `no fact in turn` (the cited turns state nothing: a question, small
  talk), `not in key` (no fact of the turn has the line's value: junk, an unsupported value,
  or a fact the key missed: the key is one reader's, so this is a lower bound).

SUBJECT: a subject is read as names and relations ("James's mother's friend": the name james,
the relations mother and friend; "mom" is mother, "pup" is dog). A named person is matched by a
line naming them with no relation; a relation by a line with the same relations naming no one
else ("mother", "Deborah's mom"), or by a line filed under the owner whose value names the
relation ("Deborah | event: her mother passed away"). Names are the speakers' and those the key
uses for the conversation; other words of a subject ("younger", "army") are descriptions.

A line's day agrees when it is the cited turn's day (its session's, or the REALTALK message's:
when it was said), or the fact's day (an approximate day within `APPROX_DAYS`, a month or year
by prefix). Verbatim turn lines (`writes.judge`) are not extractions and are left out.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memdir.analytics.facts import FactLine
from memdir.conventions import normalize, parse_distilled, parse_keyed, turn_numbers
from memdir.fact_quality import content_f1
from memdir.jsontypes import JsonObject, JsonValue, array, count, counts, obj
from memdir.stream import Turn
from memdir_study.bench.truthkey import KeyFact, KeyTurn
from memdir_study.eval.writes import KEPT, judge

REASONS = ("wrong subject", "negated", "wrong date", "no fact in turn", "not in key")
APPROX_DAYS = 15  # how far a line's day may be from an approximate key day ("last week", "last month")
EXAMPLES = 8

_GROUPS = {
    "mother": "mother mom mum mommy mama",
    "father": "father dad daddy papa",
    "parents": "parents parent folks",
    "sister": "sister sisters sis",
    "brother": "brother brothers bro",
    "sibling": "sibling siblings",
    "son": "son sons",
    "daughter": "daughter daughters",
    "child": "child children kid kids",
    "husband": "husband",
    "wife": "wife",
    "partner": "partner spouse",
    "boyfriend": "boyfriend",
    "girlfriend": "girlfriend",
    "friend": "friend friends pal bestie",
    "cousin": "cousin cousins",
    "aunt": "aunt auntie",
    "uncle": "uncle",
    "grandmother": "grandma grandmother granny",
    "grandfather": "grandpa grandfather",
    "niece": "niece",
    "nephew": "nephew",
    "neighbor": "neighbor neighbour neighbors neighbours",
    "roommate": "roommate roommates",
    "boss": "boss",
    "colleague": "colleague colleagues coworker coworkers",
    "dog": "dog dogs pup pups puppy doggo",
    "cat": "cat cats kitten",
}
RELATION = {w: canon for canon, words in _GROUPS.items() for w in words.split()}
"""A relation word -> its canonical form ("mom" -> "mother")."""

_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
_POSSESSIVE = re.compile(r"['’]s?$")
_NEGATION = frozenset("not no never nobody nothing none nor neither cannot".split())  # noqa: SIM905
_NEGATION_PHRASE = re.compile(r"\bno longer\b|\bany ?more\b", re.I)
_OWNER = frozenset("my his her their our your".split())  # noqa: SIM905
_ISO = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_LEADING_DATE = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*:?\s*")


def _words(text: str) -> list[str]:
    return [_POSSESSIVE.sub("", w.casefold()) for w in _WORD.findall(text)]


def negated(text: str) -> bool:
    """Whether a value states a denial: a negation word ("not", "never", "no", "cannot", a
    word ending in n't) or phrase ("no longer", "anymore")."""
    if _NEGATION_PHRASE.search(text):
        return True
    return any(w in _NEGATION or w.endswith("n't") or w.endswith("n’t") for w in _words(text))


@dataclass(frozen=True)
class Form:
    """A subject read as the people it names and the relations it goes through."""

    names: frozenset[str]
    relations: frozenset[str]


def form(subject: str, people: frozenset[str]) -> Form:
    words = _words(subject)
    return Form(
        frozenset(w for w in words if w in people and w not in RELATION),
        frozenset(RELATION[w] for w in words if w in RELATION),
    )


def same_subject(subject: str | None, value: str, fact: KeyFact, people: frozenset[str]) -> bool:
    """Whether a line filed under `subject`, saying `value`, is about the fact's subject (or
    one of its aliases): the rule is SUBJECT in the module docstring."""
    if not subject:
        return False
    line = form(subject, people)
    told = {RELATION[w] for w in _words(value) if w in RELATION}
    for name in fact.subjects:
        key = form(name, people)
        if not key.relations:
            found = not line.relations and bool(key.names & line.names)
        else:
            same = line.relations == key.relations and line.names <= key.names
            found = same or (not line.relations and bool(key.names & line.names) and key.relations <= told)
        if found:
            return True
    return False


def date_fits(day: str | None, fact: KeyFact, said: Iterable[str | None]) -> bool:
    """A line's day agrees with a key fact: no day, the day the turn was said, or the fact's own
    day (within `APPROX_DAYS` of an approximate one; a month or a year by prefix)."""
    if not day or day == "unknown" or day in set(said):
        return True
    if not fact.date:
        return False
    if len(fact.date) < 10:
        return day.startswith(fact.date)
    if not fact.approx:
        return day == fact.date
    try:
        gap = abs((datetime.date.fromisoformat(day) - datetime.date.fromisoformat(fact.date)).days)
    except ValueError:
        return False
    return gap <= APPROX_DAYS


@dataclass(frozen=True)
class Said:
    """What a distilled line says: about whom, what, and on which day."""

    subject: str | None
    value: str
    day: str | None


def said(line: FactLine, people: frozenset[str]) -> Said:
    """A keyed or `KIND` line by its grammar; a free-text line by its words: its day is its
    first ISO day, its subject the names, relations and possessives it opens with."""
    kf = parse_keyed(line.path, line.lineno, line.text)
    if kf is not None:
        return Said(kf.subject, kf.value, None if kf.since == "unknown" else kf.since)
    df = parse_distilled(line.text)
    if df is not None:
        return Said(df.subject, df.value, df.date)
    text = normalize(line.text)
    found = _ISO.search(text)
    text = _LEADING_DATE.sub("", text)
    words = text.split()
    opening = 0
    for w in words:
        plain = _POSSESSIVE.sub("", w.strip(",.:;!?").casefold())
        if plain not in people and plain not in RELATION and plain not in _OWNER and plain != "and":
            break
        opening += 1
    subject = " ".join(words[:opening]) or None
    return Said(subject, " ".join(words[opening:]), found.group(1) if found else None)


@dataclass
class KeyScore:
    """Counts, so the scores of several conversations add up."""

    facts: int = 0
    kept: int = 0
    lines: int = 0  # distilled lines citing a key turn
    matched: int = 0
    false: Counter[str] = field(default_factory=Counter)  # reason -> lines
    tag_facts: Counter[str] = field(default_factory=Counter)
    tag_kept: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def recall(self) -> float | None:
        return self.kept / self.facts if self.facts else None

    def precision(self) -> float | None:
        return self.matched / self.lines if self.lines else None

    def __add__(self, other: KeyScore) -> KeyScore:
        return KeyScore(
            self.facts + other.facts,
            self.kept + other.kept,
            self.lines + other.lines,
            self.matched + other.matched,
            self.false + other.false,
            self.tag_facts + other.tag_facts,
            self.tag_kept + other.tag_kept,
            self.examples + other.examples,
        )

    def as_json(self) -> JsonObject:
        return {
            "facts": self.facts,
            "kept": self.kept,
            "recall": _round(self.recall()),
            "lines": self.lines,
            "matched": self.matched,
            "precision": _round(self.precision()),
            "false_lines": {r: self.false[r] for r in REASONS},
            "false_line_count": sum(self.false.values()),
            "recall_by_tag": {
                t: {"facts": n, "kept": self.tag_kept[t], "recall": _round(self.tag_kept[t] / n)}
                for t, n in sorted(self.tag_facts.items())
            },
            "examples": self.examples,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> KeyScore:
        """`as_json` read back; a count an older record lacks reads as 0."""
        tags = {t: obj(v) for t, v in obj(d.get("recall_by_tag")).items()}
        return cls(
            count(d.get("facts")),
            count(d.get("kept")),
            count(d.get("lines")),
            count(d.get("matched")),
            Counter({k: v for k, v in counts(d.get("false_lines")).items() if v}),
            Counter({t: count(v.get("facts")) for t, v in tags.items()}),
            Counter({t: n for t, v in tags.items() if (n := count(v.get("kept")))}),
            [str(x) for x in array(d.get("examples"))],
        )


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def people_of(key_turns: Sequence[KeyTurn], speakers: Sequence[str]) -> frozenset[str]:
    """The name words of a conversation: its speakers' and the names its key facts use."""
    found = {w for s in speakers for w in _words(s)}
    for t in key_turns:
        for f in t.facts:
            for name in f.subjects:
                pairs = zip(_words(name), _WORD.findall(name), strict=True)
                found |= {w for w, raw in pairs if raw[0].isupper()}
    return frozenset(found - RELATION.keys())


def score(
    lines: Iterable[FactLine],
    turns: Sequence[Turn],
    key_turns: Sequence[KeyTurn],
    speakers: Sequence[str] = (),
    session_dates: Mapping[int, str | None] | None = None,
) -> KeyScore:
    """A store's fact lines against the key turns of the stream `turns` (the key's turns of one
    conversation, as `truthkey.load` gives them)."""
    by_loc = {t.locator: t for t in turns}
    key = {t.locator: t for t in key_turns}
    people = people_of(key_turns, [*speakers, *(t.speaker for t in turns)])
    names = sorted({*speakers, *(t.speaker for t in turns)})
    dates = session_dates or {}
    out = KeyScore()
    citing: dict[str, list[Said]] = {}
    for line in lines:
        cited = [key[loc] for loc in line.locators if loc in key]
        if not cited or judge(line, by_loc, names).kind != "distilled":
            continue
        s = said(line, people)
        for t in cited:
            citing.setdefault(t.locator, []).append(s)
        said_days = [d for t in cited for d in (_turn_day(by_loc, t.locator), dates.get(_session(t.locator)))]
        reason = _verdict(s, [f for t in cited for f in t.facts], people, said_days)
        out.lines += 1
        if reason is None:
            out.matched += 1
        else:
            out.false[reason] += 1
            if len(out.examples) < EXAMPLES:
                out.examples.append(f"{reason}: {line.path}:{line.lineno}: {line.text.strip()}")
    for t in key_turns:
        for f in t.facts:
            out.facts += 1
            hit = any(_keeps(s, f, people) for s in citing.get(t.locator, ()))
            out.kept += hit
            for tag in t.tags:
                out.tag_facts[tag] += 1
                out.tag_kept[tag] += hit
    return out


def _keeps(s: Said, f: KeyFact, people: frozenset[str]) -> bool:
    return (
        content_f1(s.value, f.value) >= KEPT
        and same_subject(s.subject, s.value, f, people)
        and _polarity_fits(s.value, f)
    )


def _polarity_fits(value: str, f: KeyFact) -> bool:
    """The line denies what the fact denies: a negation in the line's value exactly when the
    fact's value, read with its polarity, is a denial (a positive fact may itself say "cannot")."""
    return negated(value) == (negated(f.value) != (not f.polarity))


def _verdict(
    s: Said, facts: Sequence[KeyFact], people: frozenset[str], said_days: Sequence[str | None]
) -> str | None:
    """None when the line matches a fact of its turns; else the first reason (REASONS) it fails."""
    if not facts:
        return "no fact in turn"
    near = [f for f in facts if content_f1(s.value, f.value) >= KEPT]
    if not near:
        return "not in key"
    who = [f for f in near if same_subject(s.subject, s.value, f, people)]
    if not who:
        return "wrong subject"
    signed = [f for f in who if _polarity_fits(s.value, f)]
    if not signed:
        return "negated"
    if not any(date_fits(s.day, f, said_days) for f in signed):
        return "wrong date"
    return None


def _turn_day(turns: Mapping[str, Turn], loc: str) -> str | None:
    t = turns.get(loc)
    return t.date if t else None


def _session(loc: str) -> int:
    return (turn_numbers(loc) or (0, 0))[0]


KEY_COLUMNS = ("key R", "key P", "key false")
"""The run table's truth-key columns: recall, key precision, false lines."""


def pooled(rows: Sequence[Mapping[str, JsonValue]]) -> JsonObject:
    """`{"key": ...}`, the key scores of the rows that have one added up, or `{}` (a run that
    is not on the key)."""
    found = [KeyScore.from_json(obj(r.get("key"))) for r in rows if r.get("key")]
    if not found:
        return {}
    total = sum(found[1:], found[0])
    return {"key": total.as_json()}


def cells(figures: Mapping[str, JsonValue]) -> list[str]:
    """One table row's `KEY_COLUMNS`, blank where the row has no key score."""
    key = obj(figures.get("key"))
    if not key:
        return ["", "", ""]
    shown = ("" if x is None else f"{x:.3f}" for x in (key.get("recall"), key.get("precision")))
    return [*shown, str(key.get("false_line_count"))]
