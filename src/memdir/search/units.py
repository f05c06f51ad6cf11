"""Sections as search units: what section-level BM25 and the dense vectors rank.

A unit is the body under one heading, up to the next heading of any level (the text before the
first heading is a unit of its own), so a long file with many sections does not blur into one
match. A unit longer than `MAX_UNIT_CHARS` is cut at line boundaries into windows, each its own
unit with its own line range, so a hit points at the lines that matched. For the dense ranking
a unit is embedded by smaller line windows (`embed_texts`) and scores by its best one. Every
window carries the heading path and the file's name, because a section titled "Diet" means
little without the file that says whose diet it is; BM25 also reads the description.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.store import frontmatter
from memdir.store.outline import outline

# ~256 word pieces of English prose: the transformer embedder's input limit (all-MiniLM-L6-v2).
MAX_UNIT_CHARS = 1000
# A unit is embedded by line windows of about this size (one or two conversation turns), and it
# scores by its best window: a vector of a whole 1,000-character window blurs the one turn that
# answers into its neighbours, and found the evidence less often than vectors of one or two turns
# (docs/retrieval.md; the figures: benchmarks/results/2026-12-06-docstring-figures.md, "search/units.py").
EMBED_CHARS = 300
# Context taken from the description; more would crowd out the section's own words.
MAX_CONTEXT_CHARS = 200


@dataclass(frozen=True)
class Unit:
    """One searchable section (or window of one): lines `start`..`end`, 1-indexed, inclusive,
    in whole-file numbering, as `view` shows them."""

    path: str
    ordinal: int
    heading: str  # the heading path, "# A > ## B"; "" for the text before the first heading
    start: int
    end: int
    text: str  # the unit's lines, heading line included
    name: str  # the file's frontmatter name (else its stem)
    description: str  # the file's description, whitespace collapsed, cut to MAX_CONTEXT_CHARS

    @property
    def context(self) -> str:
        """ "name: description" of the file: what BM25 by section scores as signage."""
        return f"{self.name}: {self.description}" if self.description else self.name

    @property
    def embed_texts(self) -> list[str]:
        """What the embedder reads: the unit's line windows of about EMBED_CHARS, each after
        the file's name and the heading path (a blank unit: those alone). Not the description:
        a static embedding averages its words, and on LoCoMo's chunks, whose descriptions differ
        only by turn numbers, leaving it out raised dense any@5 from .57 to .64 (3
        conversations; docs/retrieval.md)."""
        head = f"{self.name}\n{self.heading}\n" if self.heading else f"{self.name}\n"
        lines = self.text.split("\n")
        windows = ["\n".join(lines[a - 1 : b]) for a, b in _windows(lines, 1, len(lines), EMBED_CHARS)]
        return [head + w for w in windows if w.strip()] or [head.rstrip("\n")]

    @property
    def index_text(self) -> str:
        """What section-level BM25 reads: the heading path and the body (the file's own
        signage is scored apart, as in the file index)."""
        return f"{self.heading}\n{self.text}" if self.heading else self.text


def _name_and_description(path: str, text: str) -> tuple[str, str]:
    fm = frontmatter.parse(text)
    name = fm.name or path.rsplit("/", 1)[-1].removesuffix(".md")
    return name, " ".join((fm.description or "").split())[:MAX_CONTEXT_CHARS]


def split_units(path: str, text: str) -> list[Unit]:
    """The units of one file, in order. Lines without a word are kept inside their unit but a
    unit with no word at all (a blank preamble) is dropped."""
    _, fm_lines = frontmatter.split(text)
    lines = text.split("\n")
    total = len(lines) - 1 if text.endswith("\n") else len(lines)
    name, description = _name_and_description(path, text)
    heads = outline(text)
    bounds: list[tuple[str, int, int]] = []  # (heading path, first line, last line)
    first_body = fm_lines + 1
    if not heads or heads[0].start > first_body:
        bounds.append(("", first_body, (heads[0].start - 1) if heads else total))
    for i, sec in enumerate(heads):
        stop = heads[i + 1].start - 1 if i + 1 < len(heads) else total
        bounds.append((sec.path, sec.start, stop))
    units: list[Unit] = []
    for heading, start, end in bounds:
        for a, b in _windows(lines, start, end, MAX_UNIT_CHARS):
            body = "\n".join(lines[a - 1 : b])
            if not any(ch.isalnum() for ch in body) and not heading:
                continue
            units.append(Unit(path, len(units), heading, a, b, body, name, description))
    return units


def _windows(lines: list[str], start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Line ranges covering start..end (1-indexed), each at most `limit` characters long where
    lines allow (one over-long line is a window by itself)."""
    out: list[tuple[int, int]] = []
    a, size = start, 0
    for n in range(start, end + 1):
        width = len(lines[n - 1]) + 1 if n - 1 < len(lines) else 1
        if size and size + width > limit:
            out.append((a, n - 1))
            a, size = n, 0
        size += width
    if a <= end:
        out.append((a, end))
    return out
