"""The stale-first rate: the share of changed keys whose first search hit is a past value
(docs/metrics.md, "Stale-first rate").

A store can hold a key's history right (the live value current, the old ones struck through
with their dates, docs/conventions.md) and still serve the old value: search ranks by words,
and a past line holds the same subject and attribute words as the live one, so the first hit
for "ana home" may be Lisbon struck through while Porto is live. A reader, model or person,
takes the first hit. This counts how often that happens, with no model: each key is searched
by section (`search/hybrid.search_sections`, the ranking `Memory.search`, `section_search` and
`memdir search --mode` share) and its value is read off the first hit as a reader meets it:
the hit's shown lines first (`hybrid.snippet`), then its section, the key's live line before
its past lines (as search shows a hit, docs/retrieval.md); the first keyed line of the key there
decides.

- `live`: that line is the key's live value;
- `past`: it is a struck-through past value (`search/live_first.is_past`): **stale first**;
- `missed`: the first hit holds no line of the key (no hit, or a hit about something else).

The rate is past / keys. With `current` (the true current value of each key, as a generated
benchmark knows it), each row also says whether a live first value is that value (compared
case-folded with spaces collapsed): a live value that is not current is an update the curator
missed or invented, counted as `not_current` and kept out of the rate, which measures the
search, not the curation (update accuracy measures that).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict

from memdir.conventions import KeyedFact, key_of, parse_keyed
from memdir.errors import MemdirError
from memdir.search.embed import require_embedder
from memdir.search.hybrid import Mode, SectionHit, check_mode, search_sections, snippet
from memdir.search.index import SearchIndex
from memdir.store.store import Store

Status = Literal["live", "past", "missed"]
Key = tuple[str, str]


@dataclass(frozen=True)
class FirstHit:
    """One key: the query searched, and the value its first hit gives."""

    subject: str
    attribute: str
    query: str
    status: Status
    value: str | None  # the keyed value read off the first hit (None when missed)
    where: str | None  # path:line of that keyed line
    current: bool | None  # a live value is the true current one (None: no truth given, or not live)


class FirstHitRecord(TypedDict):
    """A FirstHit as `as_dict` writes it."""

    subject: str
    attribute: str
    query: str
    status: Status
    value: str | None
    where: str | None
    current: bool | None


class StaleFirstRecord(TypedDict):
    """`StaleFirst.as_dict`: the counts, the rate, the search mode and a row per key."""

    keys: int
    stale: int
    live: int
    missed: int
    not_current: int
    stale_first_rate: float
    mode: str
    rows: list[FirstHitRecord]


@dataclass(frozen=True)
class StaleFirst:
    """The rows, one per key in the order given, and their counts."""

    rows: tuple[FirstHit, ...]
    mode: str

    @property
    def keys(self) -> int:
        return len(self.rows)

    def _count(self, status: Status) -> int:
        return sum(r.status == status for r in self.rows)

    @property
    def stale(self) -> int:
        return self._count("past")

    @property
    def live(self) -> int:
        return self._count("live")

    @property
    def missed(self) -> int:
        return self._count("missed")

    @property
    def not_current(self) -> int:
        """Live first values that are not the true current value (only with `current`)."""
        return sum(r.current is False for r in self.rows)

    @property
    def rate(self) -> float:
        """The stale-first rate: keys whose first hit is a past value, over all keys."""
        return self.stale / self.keys if self.keys else 0.0

    def as_dict(self) -> StaleFirstRecord:
        return {
            "keys": self.keys,
            "stale": self.stale,
            "live": self.live,
            "missed": self.missed,
            "not_current": self.not_current,
            "stale_first_rate": self.rate,
            "mode": self.mode,
            "rows": [
                {
                    "subject": r.subject,
                    "attribute": r.attribute,
                    "query": r.query,
                    "status": r.status,
                    "value": r.value,
                    "where": r.where,
                    "current": r.current,
                }
                for r in self.rows
            ],
        }


def stale_first(
    store: Store,
    keys: Sequence[tuple[str, str]],
    *,
    queries: Mapping[tuple[str, str], str] | None = None,
    current: Mapping[tuple[str, str], str] | None = None,
    mode: Mode = "bm25",
) -> StaleFirst:
    """The stale-first rate of `store` over `keys`, each (subject, attribute) of a changed key.

    Each key is searched with `queries[key]` when given (a benchmark's question for it), else
    "<subject> <attribute>"; `current[key]`, when given, is its true current value. `mode` is
    the search's (bm25 needs no embedder). The store is read, never written."""
    if not keys:
        raise ValueError("stale_first needs keys: no keys given")
    if mode != "bm25":
        require_embedder()
    check_mode(mode)
    asked = {key_of(*k): q for k, q in (queries or {}).items()}
    truth = {key_of(*k): _norm(v) for k, v in (current or {}).items()}
    index = SearchIndex.for_store(store)
    rows = []
    for subject, attribute in keys:
        key = key_of(subject, attribute)
        query = asked.get(key) or f"{subject} {attribute}"
        hits = search_sections(index, query, mode, "/memories", 1)
        status, value, where = _first_value(store, hits[0], key, query) if hits else ("missed", None, None)
        said = truth.get(key)
        is_current = None if said is None or status != "live" or value is None else _norm(value) == said
        rows.append(FirstHit(subject, attribute, query, status, value, where, is_current))
    return StaleFirst(tuple(rows), mode)


def _first_value(
    store: Store, hit: SectionHit, key: Key, query: str
) -> tuple[Status, str | None, str | None]:
    """The key's first keyed line in `hit` as a reader meets it: shown lines, then the section."""
    try:
        text = store.read_text(hit.path)
    except MemdirError:
        return "missed", None, None
    lines = text.split("\n")

    def of_key(numbers: Iterable[int]) -> list[KeyedFact]:
        found = (parse_keyed(hit.path, n, lines[n - 1]) for n in numbers if 0 < n <= len(lines))
        return [kf for kf in found if kf is not None and kf.key == key]

    shown = of_key(n for n, _ in snippet(text, hit, query))
    # past the shown lines, the section as search shows a hit: the live line above past ones
    rest = sorted(of_key(range(hit.start, hit.end + 1)), key=lambda kf: not kf.live)
    first = next(iter(shown or rest), None)
    if first is None:
        return "missed", None, None
    return ("live" if first.live else "past"), first.value, first.where


def _norm(value: str) -> str:
    return " ".join(value.split()).casefold()
