"""Search by section: BM25, dense (meaning) or both fused, over a store's units.

Keyword search misses a paraphrase ("what pet does Alice have" against "Alice adopted a
beagle puppy"); meaning search misses rare names and numbers. Hybrid runs both over the same
units and fuses the two rankings by weighted reciprocal rank (RRF: a unit's score is the sum
of w/(k + rank) over the rankings it is in, k = 20, w = 1 for BM25 and 0.3 for dense), which
needs no score calibration between BM25 and cosine. `memdir study bench retrieval` measured it
against a convex mix of normalised scores on every LoCoMo and REALTALK conversation
(docs/retrieval.md). Any text is a valid query.

Content ranks before navigation, here and only here, so every surface that searches by section
(the `section_search` tool, `Memory.search`, the UI, `memdir search --mode`, the read search) agrees: a
folder index (`MEMORY.md`) names what its folder holds, so it matches a question about
anything in the folder, often better than the section that answers it ("what does Alice eat":
four index lines outranked the diet fact). Folder index hits come after every content hit, in their
own order (docs/retrieval.md, "Content before navigation"). Among content, a key's live value
ranks before its struck-through past values (`search/live_first.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdir.errors import MemdirError
from memdir.search.analysis import best_lines, query_terms
from memdir.search.embed import embedder_missing, get_embedder
from memdir.search.index import SearchIndex
from memdir.search.live_first import FileLines, live_above, live_first
from memdir.search.unit_index import UnitRow
from memdir.store.frontmatter import MEMORY_INDEX

Mode = Literal["bm25", "dense", "hybrid"]
MODES: tuple[Mode, ...] = ("bm25", "dense", "hybrid")
Fusion = Literal["rrf", "convex"]
# Chosen on LoCoMo's 10 conversations (docs/retrieval.md): the dense ranking alone is the
# weaker one there (any@5 .64 against BM25's .85), so it counts for less, and a small k lets
# the top ranks of each count for more.
RRF_K = 20
RRF_WEIGHTS = {"bm25": 1.0, "dense": 0.3}
CONVEX_DENSE_WEIGHT = 0.5
CANDIDATES = 50  # per ranking, before fusion: far below it a unit adds nothing to RRF


@dataclass(frozen=True)
class SectionHit:
    """One ranked section: lines `start`..`end` of `path` (1-indexed, inclusive, as `view`
    numbers them) under the heading path `heading` ("" before the first heading)."""

    path: str
    heading: str
    start: int
    end: int
    score: float
    ranks: dict[str, int]  # its 1-based rank in each ranking that holds it ("bm25", "dense")

    @property
    def navigation(self) -> bool:
        """A section of a folder index (`MEMORY.md`): it points at content, so it ranks after it."""
        return is_navigation(self.path)


def is_navigation(path: str) -> bool:
    return path.rpartition("/")[2] == MEMORY_INDEX


def content_first(hits: list[SectionHit]) -> list[SectionHit]:
    """`hits` with every navigation hit moved after every content hit, each kind in its order."""
    return [h for h in hits if not h.navigation] + [h for h in hits if h.navigation]


def default_mode() -> Mode:
    """The mode a search by section takes when none is named: hybrid where the `embed` extra is
    installed (it finds paraphrases BM25 misses, docs/retrieval.md), else BM25."""
    return "hybrid" if embedder_missing() is None else "bm25"


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise MemdirError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
    return mode


def search_sections(
    index: SearchIndex,
    query: str,
    mode: str = "hybrid",
    scope: str = "/memories",
    top_k: int = 10,
    *,
    sync: bool = True,
    fusion: Fusion = "rrf",
) -> list[SectionHit]:
    """The `top_k` best sections under `scope` for `query`, best first, content before
    navigation (`content_first`), live values before past ones (`live_first`). The first search
    by section of a store builds its units (and, for dense or hybrid, their vectors)."""
    check_mode(mode)
    if sync:
        index.sync()
    index.enable_units(dense=mode != "bm25")
    terms = query_terms(query) if mode != "dense" else []
    dense = index.units.dense if index.units is not None and mode != "bm25" else None
    vector = get_embedder(dense).encode([query])[0] if dense and query.strip() else None
    # Candidates past top_k in every mode: a content hit ranked below index hits must be among
    # them to be moved up.
    n = max(CANDIDATES, top_k)
    rankings = index.section_rankings(terms, vector, scope, n)
    ranked = content_first(fuse(rankings, fusion))
    content = [h for h in ranked if not h.navigation]
    files = FileLines(index.store.read_text)  # a key's live line before its past ones (live_first)
    live = live_first(content, lambda h: files(h.path, h.start, h.end), top_k)
    return (live + ranked[len(content) :])[:top_k]


def fuse(rankings: dict[str, list[tuple[UnitRow, float]]], fusion: Fusion = "rrf") -> list[SectionHit]:
    """One ranking from several: a single ranking keeps its own scores; several are fused."""
    if len(rankings) == 1:
        ((name, ranking),) = rankings.items()
        return [_hit(row, score, {name: i}) for i, (row, score) in enumerate(ranking, start=1)]
    scores: dict[tuple[str, int], float] = {}
    rows: dict[tuple[str, int], UnitRow] = {}
    ranks: dict[tuple[str, int], dict[str, int]] = {}
    for name, ranking in rankings.items():
        top = ranking[0][1] if ranking else 0.0
        low = ranking[-1][1] if ranking else 0.0
        for i, (row, score) in enumerate(ranking, start=1):
            key = (row.path, row.ordinal)
            rows[key] = row
            ranks.setdefault(key, {})[name] = i
            if fusion == "rrf":
                part = RRF_WEIGHTS.get(name, 1.0) / (RRF_K + i)
            else:
                weight = CONVEX_DENSE_WEIGHT if name == "dense" else 1.0 - CONVEX_DENSE_WEIGHT
                part = weight * ((score - low) / (top - low) if top > low else 1.0)
            scores[key] = scores.get(key, 0.0) + part
    order = sorted(scores, key=lambda k: (-scores[k], k))
    return [_hit(rows[k], scores[k], ranks[k]) for k in order]


def _hit(row: UnitRow, score: float, ranks: dict[str, int]) -> SectionHit:
    return SectionHit(row.path, row.heading, row.start, row.end, score, ranks)


def snippet(text: str, hit: SectionHit, query: str, n: int = 2, width: int = 240) -> list[tuple[int, str]]:
    """Up to `n` lines of the hit's section that show the query's words (whole-file line
    numbers), else its first lines after the heading: a meaning match may share no word. A past
    value shown brings its key's live line from the section, above it (`live_above`)."""
    lines = text.split("\n")
    first = hit.start
    if hit.heading and lines[first - 1].lstrip().startswith("#"):
        first += 1  # the heading is in the hit's heading path already
    body = lines[first - 1 : hit.end]
    found = best_lines("\n".join(body), query_terms(query), n=n, width=width)
    out = [(s.lineno + first - 1, s.text) for s in found] or _leading(body, first, n, width)
    return live_above(lines, out, first, hit.end)  # a past value shown brings its live line


def _leading(body: list[str], first: int, n: int, width: int) -> list[tuple[int, str]]:
    """The first `n` lines of `body` (numbered from `first`) that are not blank."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(body, start=first):
        if line.strip():
            out.append((i, line if len(line) <= width else line[:width] + "…"))
        if len(out) == n:
            break
    return out
