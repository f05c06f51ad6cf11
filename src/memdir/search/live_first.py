"""Superseded values never come back first: in every search, a key's live line ranks above its
struck-through past lines, and a past line shown is marked (docs/retrieval.md, "Live values
first").

A keyed fact's past values stay in the store, struck through with their dates
(docs/conventions.md, "Keyed facts and dated supersede"), and they hold the same subject and
attribute words as the live value, so a search for the key matches them as well. BM25 then
prefers whichever sits in the shorter file or section; a reader who takes the first hit takes a
value that is no longer true, trusting it because it cites a real turn. So every search surface
(`memdir search` in each mode, `Memory.search`, `bm25_full_search` and `section_search`, over
MCP too) ranks and shows its hits through here, with one test of what a past line is (`is_past`,
the conventions' parser):
- `live_first`: a hit that holds a past value of a key without its live value comes after the
  hit holding the live value: that hit is moved up to just before it, from wherever it ranked
  among the candidates. Nothing else moves.
- `live_above`: the lines a hit shows. When a past value is shown and its live line is in the
  same hit, the live line is shown too, just above the key's first past line.
- `past_shown`: which shown lines are past values, for the hit's marks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from memdir.conventions import parse_keyed
from memdir.errors import MemdirError

if TYPE_CHECKING:
    from memdir.search.index import Hit, SearchIndex

Key = tuple[str, str]
H = TypeVar("H")
WIDTH = 240  # a shown line is cut past this many characters, as the snippets cut theirs
PAST_MARK = "  (superseded)"
"""What a search's text puts after a past value it shows (the CLI, the MCP tools)."""


FILE_CANDIDATES = 50  # files ranked before live_first cuts to top_k, as sections draw 50 (hybrid)


def is_past(line: str) -> bool:
    """`line` is a struck-through past value of a keyed fact: the one test every search uses."""
    kf = parse_keyed("", 0, line) if "~~" in line else None
    return kf is not None and not kf.live


@dataclass(frozen=True)
class Held:
    """The keys a run of lines holds live values and past values of."""

    live: frozenset[Key]
    past: frozenset[Key]

    @property
    def stale(self) -> frozenset[Key]:
        """Keys held only as past values: here their live value is missing."""
        return self.past - self.live


def held(lines: Iterable[str]) -> Held:
    live: set[Key] = set()
    past: set[Key] = set()
    for line in lines:
        kf = parse_keyed("", 0, line) if "|" in line else None
        if kf is not None:
            (live if kf.live else past).add(kf.key)
    return Held(frozenset(live), frozenset(past))


def live_first(hits: Sequence[H], lines_of: Callable[[H], Sequence[str] | None], top_k: int) -> list[H]:
    """The first `top_k` of `hits` (best first), each hit that holds a key's past value without
    its live value preceded by the hit that holds the live value, moved up from wherever it
    ranks among `hits`. `lines_of` gives a hit's lines (None: unreadable, holds nothing), asked
    once per hit, and past the hits returned only while a past value's live line is looked for:
    a store with no past values reads only the hits it returns."""
    known: dict[int, Held] = {}

    def at(i: int) -> Held:
        if i not in known:
            known[i] = held(lines_of(hits[i]) or ())
        return known[i]

    def live_at(key: Key) -> int | None:
        return next((j for j in range(len(hits)) if key in at(j).live), None)

    out: list[int] = []
    placing: set[int] = set()

    def place(i: int) -> None:
        if i in out or i in placing:
            return
        placing.add(i)
        for key in sorted(at(i).stale):
            j = live_at(key)
            if j is not None:
                place(j)
        placing.discard(i)
        out.append(i)

    for i in range(len(hits)):
        if len(out) >= top_k:
            break
        place(i)
    return [hits[i] for i in out[:top_k]]


def live_above(
    lines: Sequence[str], shown: Sequence[tuple[int, str]], first: int = 1, last: int | None = None
) -> list[tuple[int, str]]:
    """`shown` (line number, text as shown; numbers index `lines` from 1), with the live line of
    each past value shown added from lines `first`..`last` when missing, and every live line
    put just above its key's first past line. The rest keeps its order."""
    last = len(lines) if last is None else min(last, len(lines))
    keyed = {
        n: kf
        for n, _ in shown
        if 0 < n <= len(lines) and (kf := parse_keyed("", n, lines[n - 1])) is not None
    }
    past = {kf.key for kf in keyed.values() if not kf.live}
    if not past:
        return list(shown)
    out = list(shown)
    for key in sorted(past):
        first_past = next(i for i, (n, _) in enumerate(out) if n in keyed and keyed[n].key == key)
        if any(n in keyed and keyed[n].live and keyed[n].key == key for n, _ in out[:first_past]):
            continue  # shown above it already
        row = _live_line(lines, key, first, last)
        if row is not None:
            out = [r for r in out if r[0] != row[0]]
            out.insert(min(first_past, len(out)), row)
    return out


def _live_line(lines: Sequence[str], key: Key, first: int, last: int) -> tuple[int, str] | None:
    """(number, text as shown) of the live line of `key` in lines `first`..`last`, if any."""
    for n in range(first, last + 1):
        kf = parse_keyed("", n, lines[n - 1]) if "|" in lines[n - 1] else None
        if kf is not None and kf.live and kf.key == key:
            line = lines[n - 1]
            return n, line if len(line) <= WIDTH else line[:WIDTH] + "…"
    return None


def past_shown(lines: Sequence[str], shown: Iterable[int]) -> tuple[int, ...]:
    """The numbers of the shown lines that are past values."""
    return tuple(n for n in shown if 0 < n <= len(lines) and is_past(lines[n - 1]))


def superseded(lines: Sequence[str], shown: Iterable[int]) -> bool:
    """A hit whose shown values are all past: it shows a past value and no live keyed line."""
    kinds = [kf.live for n in shown if 0 < n <= len(lines) and (kf := parse_keyed("", n, lines[n - 1]))]
    return bool(kinds) and not any(kinds)


class FileLines:
    """The lines of each file a search looks at, read once per search; None for a file that is
    gone since the index ranked it."""

    def __init__(self, read: Callable[[str], str]) -> None:
        self._read = read
        self._lines: dict[str, list[str] | None] = {}

    def __call__(self, path: str, start: int = 1, end: int | None = None) -> list[str] | None:
        if path not in self._lines:
            try:
                self._lines[path] = self._read(path).split("\n")
            except (MemdirError, OSError):
                self._lines[path] = None
        lines = self._lines[path]
        return None if lines is None else lines[start - 1 : end]


def search_files(index: SearchIndex, query: str, scope: str, top_k: int) -> list[Hit]:
    """Files under `scope` by BM25 for `query`, best first, live values first (`live_first` over
    FILE_CANDIDATES): the ranking `memdir search` and `bm25_full_search` show."""
    hits = index.search(query, scope, max(top_k, FILE_CANDIDATES))
    files = FileLines(index.store.read_text)
    return live_first(hits, lambda h: files(h.path), top_k)
