"""Retrieval quality without any LLM: does a search put the evidence turns in front of a reader?

An answer can only be as good as what the search hands over, and a model run costs hours; these
figures cost minutes and isolate the ranking. Nothing here calls a model: the curated store is
played by the offline curator.

Questions counted: those whose evidence names at least one turn of the sample (E below is the
set of such locators; a cited turn the source lacks cannot be found, so it is left out of E).
LoCoMo's loader already drops category 5 (adversarial), leaving 1,540; 4 cite nothing: 1,536.
REALTALK's Chat_1, Chat_10, Chat_2, Chat_3 (the first four in file-name order) give 299.
LongMemEval's abstention items (`_abs`) cite nothing that answers and are left out, as
upstream scores them. `questions=N` keeps the first N counted ones per conversation.

Chunk level: the study's chunk store (`search/chunks.py`) is ranked by each mode, as chunk FILES:
`files` (as `memdir search --mode files`) is `SearchIndex.search` over /memories/chunks
(bm25_chunk_retrieve's ranking); `bm25`, `dense`, `hybrid` (RRF) and `hybrid-convex` take the
best UNITS_ASKED sections of `search_sections` and keep each file at its first (best) section.
MEMORY.md is no chunk and is skipped, as bm25_chunk_retrieve skips it. With ranked chunks c_1,
c_2, ... and T(c) the turns of c:

- any@k = 1 when T(c_i) meets E for some i <= k (the issue's "hit"), else 0;
- all@k = 1 when E is inside the union of T(c_1..c_k), else 0;
- ndcg@10 = DCG / IDCG, DCG = sum over i <= 10 of rel_i / log2(i + 1), rel_i = 1 when T(c_i)
  meets E; IDCG the same sum over the first min(R, 10) ranks, R = the sample's chunks meeting E;
- session_any@k / session_all@k: any / all of the same over sessions, ranked by their first
  appearance among the ranked chunks, against the evidence sessions (`sessions_of`; LongMemEval
  passes its answer sessions);
- per category: any@5 over the questions of each category.

Section level: the offline-curated store and the verbatim dump, each searched by section
(`search_sections`, scope /memories, modes bm25 / dense / hybrid). A section hits when its
lines (start..end of its file) hold a bracketed locator in E; any@k as above over sections, not
files. top5_bytes = the UTF-8 bytes of the top 5 sections' lines, summed per question: what a
searcher reading them would read.

Every figure is a mean over questions; `aggregate` gives it per benchmark both averaged over
conversations (each conversation weighs the same: the issue's targets) and pooled over
questions. Timings: build seconds per mode (the file index; units; units with vectors, which
dense and both hybrids share) and ms per query (median, p95); one embedding thread unless
MEMDIR_EMBED_THREADS says otherwise.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memdir.agents import manage_chunk
from memdir.conventions import locators, turn_numbers
from memdir.jsontypes import JsonObject, JsonValue, array, count, number, obj, text
from memdir.models import get_model
from memdir.search.chunks import CHUNK_DIR, build_chunk_store, chunk_path
from memdir.search.hybrid import Fusion, search_sections
from memdir.search.index import SearchIndex
from memdir.store.store import Store
from memdir.tools.wiring import open_store
from memdir_study.bench.types import Question, Sample
from memdir_study.variants.dump import write_dump

KS = (1, 3, 5, 10)
NDCG_AT = 10
CHUNK_MODES = ("files", "bm25", "dense", "hybrid", "hybrid-convex")
# The name runs recorded before the study took the product's one (ARCHITECTURE.md, "Names").
OLD_MODE_NAMES = {"bm25-files": "files"}
SECTION_MODES = ("bm25", "dense", "hybrid")
UNITS_ASKED = 60  # sections per search at chunk level: enough for 10 distinct files
FILES_ASKED = 60  # files per `files` search: the session ranking reads past the 10th chunk
SECTION_MODE: dict[str, tuple[str, Fusion]] = {
    **{m: (m, "rrf") for m in SECTION_MODES},
    "hybrid-convex": ("hybrid", "convex"),
}

SessionsOf = Callable[[Sample, Question], set[int]]
Tick = Callable[[str], None]  # one question done under the named stage


def evidence(sample: Sample, q: Question) -> set[str]:
    """E: the question's evidence locators that name a turn of the sample."""
    return set(q.evidence) & sample.locators()


def evidence_sessions(sample: Sample, q: Question) -> set[int]:
    """The sessions E names (LoCoMo, REALTALK: `S6T5` is in session 6)."""
    return {n[0] for e in evidence(sample, q) if (n := turn_numbers(e)) is not None}


def counted(sample: Sample, cap: int | None = None) -> list[Question]:
    """The questions scored, by the rule of the module docstring, in evaluation order."""
    abstain = sample.benchmark == "longmemeval"
    out = [q for q in sample.questions if evidence(sample, q) and not (abstain and q.id.endswith("_abs"))]
    return out if cap is None else out[:cap]


def hits(ranked: Sequence[Iterable[Any]], gold: set[Any], prefix: str = "") -> dict[str, float]:
    """any@k and all@k (k in KS) of one ranking whose items each hold a set of gold-like keys."""
    out: dict[str, float] = {}
    for k in KS:
        found = [set(item) & gold for item in ranked[:k]]
        out[f"{prefix}any@{k}"] = float(any(found))
        out[f"{prefix}all@{k}"] = float(set().union(*found) >= gold)
    return out


def ndcg(relevant: Sequence[bool], n_relevant: int, at: int = NDCG_AT) -> float:
    """Binary-relevance nDCG@at; IDCG over min(n_relevant, at) ranks."""
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(n_relevant, at) + 1))
    dcg = sum(1 / math.log2(i + 1) for i, rel in enumerate(relevant[:at], start=1) if rel)
    return dcg / ideal if ideal else 0.0


@dataclass
class Figures:
    """One mode over one conversation's questions: sums to be divided by `questions`."""

    questions: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    categories: dict[str, list[int]] = field(default_factory=dict)  # name -> [questions, any@5 hits]
    build_seconds: float = 0.0
    query_seconds: list[float] = field(default_factory=list)

    def add(self, values: dict[str, float], seconds: float, category: str | None = None) -> None:
        self.questions += 1
        for name, v in values.items():
            self.sums[name] = self.sums.get(name, 0.0) + v
        self.query_seconds.append(seconds)
        if category is not None:
            row = self.categories.setdefault(category, [0, 0])
            row[0] += 1
            row[1] += int(values["any@5"])

    def rates(self) -> dict[str, float]:
        return {k: v / self.questions for k, v in self.sums.items()} if self.questions else {}

    def as_json(self) -> JsonObject:
        return {
            "questions": self.questions,
            **{k: round(v, 4) for k, v in self.rates().items()},
            "categories": {
                c: {"questions": n, "any@5": round(h / n, 4)} for c, (n, h) in self.categories.items()
            },
            "build_seconds": round(self.build_seconds, 3),
            **_ms(self.query_seconds),
        }


def _ms(seconds: Sequence[float]) -> dict[str, float]:
    if not seconds:
        return {"ms_p50": 0.0, "ms_p95": 0.0}
    ms = sorted(s * 1000 for s in seconds)
    return {"ms_p50": round(statistics.median(ms), 2), "ms_p95": round(ms[round(0.95 * (len(ms) - 1))], 2)}


@dataclass
class ConversationResult:
    benchmark: str
    conversation: str
    chunks: int
    chunk: dict[str, Figures]  # mode -> figures
    sections: dict[str, dict[str, Figures]]  # store ("curated", "dump") -> mode -> figures
    store_seconds: dict[str, float]  # seconds to write each section store (the curation)

    def as_json(self) -> JsonObject:
        return {
            "benchmark": self.benchmark,
            "conversation": self.conversation,
            "chunks": self.chunks,
            "chunk": {m: f.as_json() for m, f in self.chunk.items()},
            "sections": {s: {m: f.as_json() for m, f in fs.items()} for s, fs in self.sections.items()},
            "store_seconds": {k: round(v, 3) for k, v in self.store_seconds.items()},
        }


def raw(result: ConversationResult) -> JsonObject:
    """Everything `aggregate` needs (query times included), for a run to resume from."""
    return asdict(result)


def from_raw(data: Mapping[str, JsonValue]) -> ConversationResult:
    """`raw`'s record read back; a missing key is a KeyError (the caller runs the conversation
    again rather than resume from a record it cannot read)."""
    chunk = {mode_named(m): _figures(f) for m, f in obj(data["chunk"]).items()}
    sections = {s: {m: _figures(f) for m, f in obj(fs).items()} for s, fs in obj(data["sections"]).items()}
    seconds = {k: number(v) for k, v in obj(data["store_seconds"]).items()}
    return ConversationResult(
        text(data["benchmark"]), text(data["conversation"]), count(data["chunks"]), chunk, sections, seconds
    )


def _figures(value: JsonValue) -> Figures:
    f = obj(value)
    return Figures(
        questions=count(f["questions"]),
        sums={k: number(v) for k, v in obj(f["sums"]).items()},
        categories={c: [count(n) for n in array(row)] for c, row in obj(f["categories"]).items()},
        build_seconds=number(f["build_seconds"]),
        query_seconds=[number(v) for v in array(f["query_seconds"])],
    )


def _units(index: SearchIndex, dense: bool) -> float:
    """Seconds to build the section units (with vectors when `dense`), the embedder loaded
    before the clock starts: its load is a process cost, not the index's."""
    if dense:
        from memdir.search.embed import get_embedder

        get_embedder()
    return index.enable_units(dense).seconds


def mode_named(name: str) -> str:
    """The chunk mode `name` spells, an old spelling included."""
    return OLD_MODE_NAMES.get(name, name)


def rank_chunks(index: SearchIndex, mode: str, query: str) -> list[str]:
    """Chunk file paths, best first, by `mode` (one of CHUNK_MODES)."""
    if mode == "files":
        paths = [h.path for h in index.search(query, CHUNK_DIR.text, FILES_ASKED + 1)]
    else:
        base, fusion = SECTION_MODE[mode]
        found = search_sections(index, query, base, CHUNK_DIR.text, UNITS_ASKED, fusion=fusion)
        paths = list(dict.fromkeys(h.path for h in found))
    return [p for p in paths if not p.endswith("/MEMORY.md")]


def chunk_level(
    sample: Sample,
    questions: Sequence[Question],
    modes: Sequence[str],
    root: Path,
    sessions_of: SessionsOf = evidence_sessions,
    tick: Tick | None = None,
) -> tuple[int, dict[str, Figures]]:
    """(chunks, mode -> figures) over the chunk store built in `root` (new or empty)."""
    chunks = sample.chunks()
    store = build_chunk_store(open_store(root, create=True), chunks)
    turns = {chunk_path(c.index).text: set(c.locators) for c in chunks}
    sessions = {chunk_path(c.index).text: {t.session for t in c.turns} for c in chunks}
    index = SearchIndex.for_store(store)
    out: dict[str, Figures] = {}
    try:
        for mode in modes:
            shared = next((f for m, f in out.items() if m in ("dense", "hybrid")), None)  # same vectors
            fig = out[mode] = Figures()
            if mode == "files":
                fig.build_seconds = index.rebuild().seconds
            elif mode == "bm25":
                fig.build_seconds = _units(index, dense=False)
            else:
                fig.build_seconds = shared.build_seconds if shared else _units(index, dense=True)
            for q in questions:
                gold = evidence(sample, q)
                start = time.perf_counter()
                ranked = rank_chunks(index, mode, q.question)
                seconds = time.perf_counter() - start
                values = hits([turns.get(p, set()) for p in ranked], gold)
                order = list(dict.fromkeys(s for p in ranked for s in sorted(sessions.get(p, ()))))
                values |= hits([{s} for s in order], sessions_of(sample, q), "session_")
                relevant = sum(1 for ts in turns.values() if ts & gold)
                values["ndcg@10"] = ndcg([bool(turns.get(p, set()) & gold) for p in ranked], relevant)
                fig.add(values, seconds, q.category)
                if tick:
                    tick(f"chunks {mode}")
    finally:
        index.close()
    return len(chunks), out


def curate(sample: Sample, root: Path) -> Store:
    """The agent-curated store as the offline curator builds it, chunk by chunk."""
    store = open_store(root, create=True, init=True)
    model = get_model("offline")

    async def go() -> None:
        for chunk in sample.chunks():
            await manage_chunk(model, store, chunk, variant="agent-curated")

    asyncio.run(go())
    return store


def dump(sample: Sample, root: Path) -> Store:
    store = open_store(root, create=True)
    write_dump(store, sample)
    return store


def section_level(
    store: Store,
    sample: Sample,
    questions: Sequence[Question],
    modes: Sequence[str],
    tick: Tick | None = None,
) -> dict[str, Figures]:
    """mode -> figures of a search by section over the whole store."""
    index = SearchIndex.for_store(store)
    index.sync()
    out: dict[str, Figures] = {}
    lines: dict[str, list[str]] = {}
    try:
        for mode in modes:
            fig = out[mode] = Figures()
            shared = out.get("dense") if mode == "hybrid" else None  # the same units and vectors
            fig.build_seconds = shared.build_seconds if shared else _units(index, dense=mode != "bm25")
            for q in questions:
                gold = evidence(sample, q)
                start = time.perf_counter()
                found = search_sections(index, q.question, mode, "/memories", max(KS))
                seconds = time.perf_counter() - start
                texts = []
                for h in found:
                    if h.path not in lines:
                        lines[h.path] = store.read_text(h.path).split("\n")
                    texts.append("\n".join(lines[h.path][h.start - 1 : h.end]))
                values = {k: v for k, v in hits([locators(t) for t in texts], gold).items() if "any" in k}
                values["top5_bytes"] = float(sum(len(t.encode()) for t in texts[:5]))
                fig.add(values, seconds)
                if tick:
                    tick(f"sections {mode}")
    finally:
        index.close()
    return out


def evaluate(
    sample: Sample,
    root: Path,
    modes: Sequence[str] = CHUNK_MODES,
    *,
    questions: int | None = None,
    sections: bool = True,
    sessions_of: SessionsOf = evidence_sessions,
    tick: Tick | None = None,
) -> ConversationResult:
    """Every figure of one sample; its stores are built under `root` (a temp dir)."""
    qs = counted(sample, questions)
    modes = [m for m in CHUNK_MODES if m in modes]  # units before vectors: each build timed alone
    n_chunks, chunk = chunk_level(sample, qs, modes, root / "chunks", sessions_of, tick)
    result = ConversationResult(sample.benchmark, sample.id, n_chunks, chunk, {}, {})
    if sections and any(m in modes for m in SECTION_MODES):
        smodes = [m for m in SECTION_MODES if m in modes]  # none of them: no section level
        for name, build in (("curated", curate), ("dump", dump)):
            start = time.perf_counter()
            store = build(sample, root / name)
            result.store_seconds[name] = time.perf_counter() - start
            result.sections[name] = section_level(store, sample, qs, smodes, tick)
    return result


def _combine(figs: list[Figures]) -> JsonObject:
    """One mode over many conversations: averaged over them, and pooled over their questions."""
    figs = [f for f in figs if f.questions]
    if not figs:
        return {"conversations": 0, "questions": 0}
    names = list(figs[0].sums)
    n = sum(f.questions for f in figs)
    cats: dict[str, list[int]] = {}
    for f in figs:
        for c, (q, h) in f.categories.items():
            cats.setdefault(c, [0, 0])
            cats[c][0] += q
            cats[c][1] += h
    per = [_ms(f.query_seconds) for f in figs]
    return {
        "conversations": len(figs),
        "questions": n,
        "mean": {k: round(statistics.fmean(f.rates()[k] for f in figs), 4) for k in names},
        "pooled": {k: round(sum(f.sums[k] for f in figs) / n, 4) for k in names},
        "categories": {c: {"questions": q, "any@5": round(h / q, 4)} for c, (q, h) in cats.items()},
        "build_seconds": round(statistics.fmean(f.build_seconds for f in figs), 3),
        "build_seconds_total": round(sum(f.build_seconds for f in figs), 3),
        "ms_p50": round(statistics.fmean(p["ms_p50"] for p in per), 2),
        "ms_p95": round(statistics.fmean(p["ms_p95"] for p in per), 2),
        "pooled_ms": _ms([s for f in figs for s in f.query_seconds]),
    }


def aggregate(results: Sequence[ConversationResult]) -> JsonObject:
    """One benchmark's figures per mode (chunk level, then each section store)."""
    modes = list(dict.fromkeys(m for r in results for m in r.chunk))
    stores = list(dict.fromkeys(s for r in results for s in r.sections))
    return {
        "conversations": [r.conversation for r in results],
        "questions": sum(next(iter(r.chunk.values())).questions for r in results if r.chunk),
        "chunk": {m: _combine([r.chunk[m] for r in results if m in r.chunk]) for m in modes},
        "sections": {
            s: {
                m: _combine([r.sections[s][m] for r in results if m in r.sections.get(s, {})])
                for m in dict.fromkeys(m for r in results for m in r.sections.get(s, {}))
            }
            for s in stores
        },
        "store_seconds": {s: round(sum(r.store_seconds.get(s, 0.0) for r in results), 3) for s in stores},
    }
