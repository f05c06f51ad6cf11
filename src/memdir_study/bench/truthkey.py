"""The hand-checked truth key (`truth_key.json`, beside this module): LoCoMo and REALTALK turns
picked for what breaks curators, each with every fact a careful reader would file.

LoCoMo's observations are a reference, not a key: written by the dataset's authors for
retrieval, they miss denials, file a relative's news under whoever told it, and give no dates.
The key is small (78 turns, 139 facts) but read turn by turn, so a curator can be scored on who,
what and when (`memdir_study.eval.keyscore`, docs/metrics.md "The truth key"). How it was made,
the picking rule, the date rule and the schema are the file's own `about` header.

The file holds annotations only. A turn is named by (benchmark, conversation, locator); its
text, speaker and date come from the data (`MEMDIR_DATA`) through the benchmark loaders, so
`load` returns one `Sample` per source conversation holding exactly the key's turns, with their
locators and session dates. A key turn the data does not hold is an error naming the file and
the turn: the data is not the version the key was read from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from memdir.conventions import SESSION_TURN, turn_numbers
from memdir.errors import MemdirError
from memdir.jsontypes import JsonValue
from memdir_study.bench import locomo, realtalk
from memdir_study.bench.data import UnknownSample
from memdir_study.bench.locomo import Observation, Observations
from memdir_study.bench.types import Sample

BENCHMARK = "key"
FILE = "truth_key.json"
SOURCES = {"locomo": "locomo/locomo10.json", "realtalk": "realtalk/<conversation>.json"}
TAGS = ("relatives", "denial", "relative-date", "change", "question", "small-talk", "context")
_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")
_LOCATOR = re.compile(SESSION_TURN)  # the one locator grammar (conventions)


class MalformedKey(MemdirError):
    """The key file is malformed (a field missing or ill-formed), naming the entry."""


@dataclass(frozen=True)
class KeyFact:
    """One fact of a key turn. `polarity` False: the turn denies `value` ("can have dairy",
    False: cannot have dairy). `date`: ISO day, month or year, or "" when no day can be told;
    `approx`: the day is an approximate resolution ("last week"). `aliases`: other names under
    which the same fact is truly stated."""

    locator: str
    subject: str
    attribute: str
    value: str
    polarity: bool
    date: str
    approx: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def subjects(self) -> tuple[str, ...]:
        return (self.subject, *self.aliases)

    def text(self) -> str:
        """The fact as a sentence, for the reference recall of `writes.score`."""
        return f"{self.subject} {'' if self.polarity else 'not '}{self.value}"


@dataclass(frozen=True)
class KeyTurn:
    benchmark: str  # the source: locomo | realtalk
    conversation: str
    locator: str
    tags: tuple[str, ...]
    facts: tuple[KeyFact, ...]


@dataclass(frozen=True)
class TruthKey:
    about: Mapping[str, JsonValue]
    turns: tuple[KeyTurn, ...]

    def conversations(self) -> list[str]:
        """The source conversations, in the key's order (each id is unique across benchmarks)."""
        return list(dict.fromkeys(t.conversation for t in self.turns))

    def turns_of(self, conversation: str) -> list[KeyTurn]:
        found = [t for t in self.turns if t.conversation == conversation]
        if not found:
            known = ", ".join(self.conversations())
            raise UnknownSample(f"the truth key has no conversation {conversation!r}; choose one of {known}")
        return found

    def facts(self) -> list[KeyFact]:
        return [f for t in self.turns for f in t.facts]


def _field(entry: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    value = entry.get(name)
    if not isinstance(value, kind) or (kind is str and not str(value).strip() and name != "date"):
        raise MalformedKey(f"{FILE}: {where} needs {name} as a non-empty {kind.__name__}, not {value!r}")
    return value


def parse(data: Mapping[str, JsonValue]) -> TruthKey:
    """The key from its JSON, every field checked: a malformed entry is an error naming it."""
    about, listed_turns = data.get("about"), data.get("turns")
    if not isinstance(about, Mapping) or not isinstance(listed_turns, list):
        raise MalformedKey(f"{FILE} needs an `about` object and a `turns` list")
    turns: list[KeyTurn] = []
    seen: set[tuple[str, str]] = set()
    for i, entry in enumerate(listed_turns):
        where = f"turn {i + 1}"
        if not isinstance(entry, dict):
            raise MalformedKey(f"{FILE}: {where} is not an object")
        bench = _field(entry, "benchmark", str, where)
        conv = _field(entry, "conversation", str, where)
        loc = _field(entry, "locator", str, where)
        where = f"turn {i + 1} ({conv} {loc})"
        if bench not in SOURCES:
            known = " and ".join(SOURCES)
            raise MalformedKey(f"{FILE}: {where} names benchmark {bench!r}; the key reads {known}")
        if not _LOCATOR.fullmatch(loc):
            raise MalformedKey(f"{FILE}: {where}: the locator must be S<session>T<turn>")
        if (conv, loc) in seen:
            raise MalformedKey(f"{FILE}: {where} appears twice")
        seen.add((conv, loc))
        tags = _field(entry, "tags", list, where)
        unknown = [t for t in tags if t not in TAGS]
        if unknown:
            raise MalformedKey(f"{FILE}: {where} has tags {unknown}; the tags are {', '.join(TAGS)}")
        listed = _field(entry, "facts", list, where)
        facts = tuple(_fact(f, loc, f"{where} fact {j + 1}") for j, f in enumerate(listed))
        turns.append(KeyTurn(bench, conv, loc, tuple(tags), facts))
    return TruthKey(dict(about), tuple(turns))


def _fact(entry: Any, locator: str, where: str) -> KeyFact:
    if not isinstance(entry, dict):
        raise MalformedKey(f"{FILE}: {where} is not an object")
    date = _field(entry, "date", str, where)
    if date and not _DATE.fullmatch(date):
        raise MalformedKey(f"{FILE}: {where}: date {date!r} is not YYYY-MM-DD, YYYY-MM, YYYY or ''")
    polarity = entry.get("polarity")
    approx = entry.get("approx", False)
    aliases = entry.get("aliases", [])
    if not isinstance(polarity, bool) or not isinstance(approx, bool):
        raise MalformedKey(f"{FILE}: {where}: polarity (and approx, if given) must be true or false")
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise MalformedKey(f"{FILE}: {where}: aliases must be a list of names")
    return KeyFact(
        locator,
        _field(entry, "subject", str, where),
        _field(entry, "attribute", str, where),
        _field(entry, "value", str, where),
        polarity,
        date,
        approx,
        tuple(aliases),
    )


@cache
def read_key() -> TruthKey:
    """The key shipped with the package."""
    text = resources.files("memdir_study.bench").joinpath(FILE).read_text(encoding="utf-8")
    return parse(json.loads(text))


def conversation_ids() -> list[str]:
    return read_key().conversations()


def _source(benchmark: str, conversation: str) -> Sample:
    return locomo.load(conversation) if benchmark == "locomo" else realtalk.load(conversation)


def load(conversation: str, key: TruthKey | None = None) -> Sample:
    """The key's turns of one source conversation as a `Sample` (benchmark "key"): the turns in
    the source's order with their locators, speakers and dates, the dates of their sessions,
    the conversation's speakers; no questions. The data is read through the benchmark loaders,
    so a missing file is their error, naming it and where to put it."""
    key = key or read_key()
    wanted = key.turns_of(conversation)
    source = _source(wanted[0].benchmark, conversation)
    held = {t.locator for t in source.turns}
    missing = [t.locator for t in wanted if t.locator not in held]
    if missing:
        where = SOURCES[wanted[0].benchmark].replace("<conversation>", conversation)
        raise MemdirError(
            f"the truth key names {conversation} {', '.join(missing)}, which {where} does not hold: "
            "the data under MEMDIR_DATA is not the version the key was read from"
        )
    locs = {t.locator for t in wanted}
    turns = [t for t in source.turns if t.locator in locs]
    sessions = {t.session for t in turns}
    return replace(
        source,
        benchmark=BENCHMARK,
        turns=turns,
        questions=[],
        session_dates={n: d for n, d in source.session_dates.items() if n in sessions},
        session_ids={n: s for n, s in source.session_ids.items() if n in sessions},
        facts=[],
    )


def turns_of(conversation: str, key: TruthKey | None = None) -> list[KeyTurn]:
    return (key or read_key()).turns_of(conversation)


def observations(conversation: str, key: TruthKey | None = None) -> Observations:
    """The key's facts of one conversation as reference observations, so `writes.score`
    reports its usual (loose) recall against the key beside the strict key score."""
    facts = [
        Observation((turn_numbers(f.locator) or (0, 0))[0], f.subject, f.text(), (f.locator,))
        for t in turns_of(conversation, key)
        for f in t.facts
    ]
    return Observations(conversation, facts)


def by_locator(turns: Sequence[KeyTurn]) -> dict[str, KeyTurn]:
    return {t.locator: t for t in turns}
