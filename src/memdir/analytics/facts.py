"""The fact lines of a file, parsed in one place, beside the keyed-fact grammar it re-exports.

`check` (supersede integrity), `diff --facts` (preservation) and anything else that reads facts
use these functions. What a locator is and when two fact lines are one fact is
`memdir.conventions`, shared with the guards, so `diff --facts` and the guards give one verdict;
so is the keyed format (dated supersede), re-exported here for the analytics that read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from memdir.conventions import (
    LIVE,
    SUPERSEDED,
    Fact,
    KeyedFact,
    fact_identity,
    key_of,
    keyed_facts,
    live_by_key,
    looks_keyed,
    parse_keyed,
)


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


__all__ = [
    "LIVE",
    "SUPERSEDED",
    "FactLine",
    "KeyedFact",
    "fact_lines",
    "key_of",
    "keyed_facts",
    "live_by_key",
    "looks_keyed",
    "parse_keyed",
]
