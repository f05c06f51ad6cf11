"""The keyed-fact grammar of docs/conventions.md and the fact lines of a file, parsed in one place.

`check` (supersede integrity), `diff --facts` (preservation) and anything else that reads facts
use these functions. What a locator is and when two fact lines are one fact is
`memdir.conventions`, shared with the preservation guard, so `diff --facts` and the guard give
one verdict; the keyed format (dated supersede) is defined here: a change to the convention is
a change in those two modules and in the doc, nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memdir.conventions import LOCATOR, Fact, fact_identity, locators

_DATE = r"(?:\d{4}-\d{2}-\d{2}|unknown)"
_LOC_TAIL = rf"\s*(?P<loc>{LOCATOR.pattern})\s*$"
LIVE = re.compile(
    r"^\s*[-*+]\s+(?P<subject>[^|~\n]+?)\s*\|\s*(?P<attribute>[^:\n]+?)\s*:\s*(?P<value>.+?)\s*"
    rf"\(since\s+(?P<since>{_DATE})\){_LOC_TAIL}"
)
"""`- SUBJECT | ATTRIBUTE: VALUE (since DATE) [LOC]`."""

SUPERSEDED = re.compile(
    r"^\s*[-*+]\s+~~\s*(?P<subject>[^|~\n]+?)\s*\|\s*(?P<attribute>[^:\n]+?)\s*:\s*(?P<value>.+?)\s*~~\s*"
    rf"\((?P<since>{_DATE})\s+until\s+(?P<until>{_DATE})\){_LOC_TAIL}"
)
"""`- ~~SUBJECT | ATTRIBUTE: VALUE~~ (FROM-DATE until DATE) [LOC]`."""


@dataclass(frozen=True)
class FactLine:
    """A line that carries at least one locator, where it was, and what it says."""

    path: str
    lineno: int
    text: str
    locators: tuple[str, ...]
    words: str

    @property
    def identity(self) -> Fact:
        """Two fact lines are the same fact when locators and normalized words agree
        (`conventions.fact_identity`)."""
        return (self.locators, self.words)


def fact_lines(path: str, text: str) -> Iterator[FactLine]:
    """The fact lines of one file (frontmatter included: a description may carry a locator)."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        fact = fact_identity(line)
        if fact is not None:
            yield FactLine(path, lineno, line.rstrip("\r"), *fact)


def key_of(subject: str, attribute: str) -> tuple[str, str]:
    """A keyed fact's key, compared case-insensitively after collapsing spaces."""
    return (" ".join(subject.split()).casefold(), " ".join(attribute.split()).casefold())


@dataclass(frozen=True)
class KeyedFact:
    """One line of the dated-update convention: a live value or a superseded one."""

    path: str
    lineno: int
    subject: str
    attribute: str
    value: str
    live: bool
    since: str
    until: str | None
    locators: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str]:
        return key_of(self.subject, self.attribute)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.lineno}"


def parse_keyed(path: str, lineno: int, line: str) -> KeyedFact | None:
    """The keyed fact on this line, or None when the line is not in the keyed format."""
    m = SUPERSEDED.match(line)
    if m:
        return KeyedFact(
            path,
            lineno,
            m["subject"],
            m["attribute"],
            m["value"],
            False,
            m["since"],
            m["until"],
            locators(m["loc"]),
        )
    m = LIVE.match(line)
    if m:
        return KeyedFact(
            path, lineno, m["subject"], m["attribute"], m["value"], True, m["since"], None, locators(m["loc"])
        )
    return None


def keyed_facts(path: str, text: str) -> Iterator[KeyedFact]:
    for lineno, line in enumerate(text.split("\n"), start=1):
        if "|" in line and LOCATOR.search(line):
            kf = parse_keyed(path, lineno, line)
            if kf is not None:
                yield kf


def looks_keyed(line: str) -> bool:
    """A list line shaped like `- SUBJECT | ATTRIBUTE: ...` with a locator that the keyed
    grammar nevertheless refuses (a missing `(since DATE)`, a bad date): worth a warning."""
    return bool(re.match(r"^\s*[-*+]\s+(?:~~)?[^|\n]+\|[^:\n]+:", line)) and bool(LOCATOR.search(line))


def live_by_key(facts: Iterable[KeyedFact]) -> dict[tuple[str, str], list[KeyedFact]]:
    out: dict[tuple[str, str], list[KeyedFact]] = {}
    for f in facts:
        if f.live:
            out.setdefault(f.key, []).append(f)
    return out
