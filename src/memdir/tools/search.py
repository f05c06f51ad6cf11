"""bm25_full_search and bm25_chunk_retrieve: ranked keyword search over the store's files;
section_search: hybrid (keywords and meaning) search over its sections (memdir.search.hybrid),
named apart from the `search` profile and role and from `Memory.search`.

Both rank with the store's search index (memdir.search.index), which catches up with any edit
made outside the tools before it answers, so results never name a file that is gone or miss
one that was just written. Any text is a valid query: it is reduced to its words.
Metering: bm25_full_search shows snippets (returned bytes, nothing counted as read), while
bm25_chunk_retrieve hands over whole chunk files, counted as read.
"""

from __future__ import annotations

from typing import Any

from memdir.errors import EditError, NotFoundError, PathError
from memdir.search.analysis import best_lines, query_terms
from memdir.search.chunks import CHUNK_DIR
from memdir.search.hybrid import MODES, search_sections, snippet
from memdir.search.index import SearchIndex
from memdir.search.live_first import PAST_MARK, live_above, past_shown, search_files, superseded
from memdir.store import frontmatter
from memdir.store.paths import parse_memory_path
from memdir.tools import outputs
from memdir.tools.base import ToolContext, tool
from memdir.tools.grep import MAX_REPLY_BYTES

MAX_TOP_K = 50
CHUNKS_RETURNED = 3
MAX_DESCRIPTION = 200
# Shown once before the first folder-index hit, which `search_sections` ranks after every
# content hit (docs/retrieval.md, "Content before navigation").
NAVIGATION_APART = "Folder indexes (MEMORY.md: navigation, ranked after the content above):"


@tool(
    description="""
    Ranked BM25 keyword search over whole files: file name, frontmatter (name, description,
    metadata) and the full body, so it finds facts recorded in a body but not advertised in a
    title. Returns the best files first, each with its description and the lines that match.
    The query is a set of keywords (no operators; word forms are matched by stem).
    """,
    params={
        "query": "Keywords to look for, e.g. 'alice diet vegan'.",
        "path": "Folder (or one .md file) to search within; default /memories.",
        "top_k": f"How many files to return (default 10, at most {MAX_TOP_K}).",
    },
    read_only=True,
    title="Keyword search over whole files",
    output_schema=outputs.BM25_FULL,
)
def bm25_full_search(ctx: ToolContext, query: str, path: str = "/memories", top_k: int = 10) -> str:
    if top_k < 1:
        raise EditError(f"top_k must be at least 1 (at most {MAX_TOP_K})")
    top_k = min(top_k, MAX_TOP_K)
    mp, disk = ctx.store.resolve(path)
    if not disk.exists():
        raise NotFoundError(f"{mp.text} does not exist; search /memories or a folder that exists")
    results: list[dict[str, Any]] = []
    ctx.data = {"query": query, "path": mp.text, "results": results}
    terms = query_terms(query)
    if not terms:
        return f"No results: the query {query[:80]!r} has no searchable words; search with keywords."
    hits = search_files(SearchIndex.for_store(ctx.store), query, mp.text, top_k)
    blocks: list[str] = []
    for hit in hits:
        text = _shown(ctx, hit.path)
        if text is None:
            continue
        fm = frontmatter.parse(text)
        head = f"{len(blocks) + 1}. {hit.path} (score {hit.score:.2f})"
        desc = " ".join(fm.description.split()) if fm.description else ""
        if fm.description:
            head += f" [description: {desc[:MAX_DESCRIPTION]}{'…' if len(desc) > MAX_DESCRIPTION else ''}]"
        found = best_lines(text, terms)
        file_lines = text.split("\n")
        shown = live_above(file_lines, [(s.lineno, s.text) for s in found])
        past = past_shown(file_lines, [n for n, _ in shown])
        body = _shown_lines(shown, past)
        matched = list(dict.fromkeys(w for s in found for w in s.matched))
        if matched:
            body.append(f"   matched: {', '.join(matched)}")
        blocks.append("\n".join([head, *body]))
        results.append(
            {
                "rank": len(blocks),
                "path": hit.path,
                "score": hit.score,
                "description": desc or None,
                "lines": [{"line": n, "text": line, "past": n in past} for n, line in shown],
                "matched": matched,
                "superseded": superseded(file_lines, [n for n, _ in shown]),
            }
        )
    if not blocks:
        return f"No files under {mp.text} match {query[:200]!r}."
    return f"{len(blocks)} file(s) under {mp.text} for {query[:200]!r}, best first:\n" + "\n".join(blocks)


def _shown_lines(shown: list[tuple[int, str]], past: tuple[int, ...]) -> list[str]:
    """A hit's lines as the text shows them, each past value marked (docs/retrieval.md)."""
    return [f"   {n}: {line}{PAST_MARK if n in past else ''}" for n, line in shown]


def _shown(ctx: ToolContext, path: str) -> str | None:
    """A hit's text, for its snippet only (the model reads none of it), or None when results must
    not show it: vanished since the search (the next search drops it from the index), or written
    outside the tools under a name no path can spell, or that parses as another path."""
    try:
        if parse_memory_path(path).text != path:
            return None
        text = ctx.store.read_text(path)
    except Exception:
        return None
    ctx.touch(path)
    return text


@tool(
    description="""
    Retrieve raw conversation chunks by BM25 keyword search: returns the 3 best-matching chunks
    in full, each with its path; every turn carries its locator, e.g. [S6T5]. The query is a set
    of keywords (no operators).
    """,
    params={"query": "Keywords to look for, e.g. 'Calvin concert Tokyo'."},
    read_only=True,
    title="Retrieve conversation chunks by keywords",
)
def bm25_chunk_retrieve(ctx: ToolContext, query: str) -> str:
    _require_chunks(ctx)
    if not query_terms(query):
        return f"No results: the query {query[:80]!r} has no searchable words; search with keywords."
    hits = SearchIndex.for_store(ctx.store).search(query, CHUNK_DIR.text, CHUNKS_RETURNED + 1)
    return _chunks(ctx, [(h.path, h.score) for h in hits], query)


@tool(
    description="""
    Retrieve raw conversation chunks by meaning and keywords at once (hybrid: BM25 and sentence
    embeddings, fused): returns the 3 best-matching chunks in full, each with its path; every
    turn carries its locator, e.g. [S6T5]. Ask in words or as a question.
    """,
    params={"query": "What to look for, e.g. 'when did Calvin play in Tokyo'."},
    read_only=True,
    title="Retrieve conversation chunks by meaning and keywords",
)
def hybrid_chunk_retrieve(ctx: ToolContext, query: str) -> str:
    _require_chunks(ctx)
    if not query.strip():
        return "No results: the query is empty; ask in words."
    hits = search_sections(SearchIndex.for_store(ctx.store), query, "hybrid", CHUNK_DIR.text, 40)
    best: dict[str, float] = {}
    for hit in hits:  # a chunk ranks by its best unit
        best.setdefault(hit.path, hit.score)
    return _chunks(ctx, list(best.items()), query)


def _require_chunks(ctx: ToolContext) -> None:
    if not ctx.store.is_dir(CHUNK_DIR):
        raise NotFoundError(f"this store has no {CHUNK_DIR.text} folder; it is not a chunk-retrieval store")


def _chunks(ctx: ToolContext, ranked: list[tuple[str, float]], query: str) -> str:
    """The first CHUNKS_RETURNED chunk files of a ranking, in full (counted as read), within
    grep's MAX_REPLY_BYTES: chunk files written outside the tools may be any size (one query
    once returned tens of megabytes: benchmarks/results/2026-12-06-docstring-figures.md,
    "tools/search.py"), so a chunk past the cap is cut at a line, and a note says so."""
    out: list[str] = []
    room = MAX_REPLY_BYTES
    cut = ""
    left: list[str] = []  # ranked after a cut chunk: not shown
    for path, score in ranked:
        try:
            mp = parse_memory_path(path)
        except PathError:
            continue  # written outside the tools under a name no path can spell (text.nameable)
        if mp.text != path:
            continue  # a name that parses as another path (trailing blanks): not shown either
        if mp.name == "MEMORY.md" or len(out) + len(left) == CHUNKS_RETURNED:
            continue
        if cut:
            left.append(mp.text)
            continue
        head = f"=== {mp.text} (rank {len(out) + 1}, score {score:.2f}) ==="
        fits = max(room - len(head.encode("utf-8")) - 2, 0)
        try:
            size = ctx.store.safe.lstat(mp.parts, mp.text)
            data = ctx.store.safe.read(mp.parts, mp.text, limit=fits + 1)
            text, whole = _within(data, fits)
        except Exception:
            continue
        if not whole:
            total = size.st_size if size is not None else len(data)
            cut = (
                f"chunk cut: {mp.text} is {total:,} bytes, and a reply holds at most "
                f"{MAX_REPLY_BYTES // 1024} KB; {len(text.encode('utf-8')):,} bytes of it are shown"
            )
        ctx.meter.bytes_read += len(text.encode("utf-8"))
        ctx.touch(mp)
        out.append(f"{head}\n{text.rstrip()}")
        room = fits - len(text.encode("utf-8"))
    if not out:
        return f"No chunk matches {query[:200]!r}."
    if cut:
        if left:
            cut += f"; not shown: {', '.join(left)}"
        out.append(f"[{cut}. To get other chunks, search with more specific keywords]")
    return "\n\n".join(out)


def _within(data: bytes, room: int) -> tuple[str, bool]:
    """The text of `data` (a file's first bytes, one more than `room` when it is longer) and
    whether it is whole: a longer file is cut at its last line break within `room` bytes."""
    if len(data) <= room:
        return data.decode("utf-8"), True
    end = data.rfind(b"\n", 0, room + 1) + 1
    if end == 0:  # one line longer than the room: cut it between characters
        end = room
        while end > 0 and data[end] & 0xC0 == 0x80:
            end -= 1
    return data[:end].decode("utf-8"), False


@tool(
    description="""
    Search memory by meaning and by keywords at once (hybrid: BM25 and sentence embeddings,
    fused), so a question finds a section that answers it in other words ("what pet does
    Alice have" finds "Alice adopted a beagle puppy"). Returns the best sections first, each
    with its file path, heading path, line range, score (and its rank by keywords, bm25, and by
    meaning, dense) and the lines that match; read more
    with view (start_line, end_line) or section_read. mode "bm25" ranks by keywords only, "dense" by
    meaning only. Sections of folder indexes (MEMORY.md) are navigation: they come after every
    content section, set apart.
    """,
    params={
        "query": "What to look for: a question or keywords, e.g. 'what pet does Alice have'.",
        "path": "Folder (or one .md file) to search within; default /memories.",
        "top_k": f"How many sections to return (default 10, at most {MAX_TOP_K}).",
        "mode": "hybrid (default), bm25 or dense.",
    },
    read_only=True,
    title="Search sections by meaning and keywords",
    output_schema=outputs.SECTION_SEARCH,
)
def section_search(
    ctx: ToolContext, query: str, path: str = "/memories", top_k: int = 10, mode: str = "hybrid"
) -> str:
    if top_k < 1:
        raise EditError(f"top_k must be at least 1 (at most {MAX_TOP_K})")
    if mode not in MODES:
        raise EditError(f"mode must be one of {', '.join(MODES)}, not {mode[:40]!r}")
    top_k = min(top_k, MAX_TOP_K)
    mp, disk = ctx.store.resolve(path)
    if not disk.exists():
        raise NotFoundError(f"{mp.text} does not exist; search /memories or a folder that exists")
    results: list[dict[str, Any]] = []
    ctx.data = {"query": query, "path": mp.text, "mode": mode, "results": results}
    if not query.strip() or (mode == "bm25" and not query_terms(query)):
        return f"No results: the query {query[:80]!r} has no searchable words; search with words."
    hits = search_sections(SearchIndex.for_store(ctx.store), query, mode, mp.text, top_k)
    blocks: list[str] = []
    apart = False  # the line that sets navigation hits apart, once shown
    for hit in hits:
        text = _shown(ctx, hit.path)
        if text is None:
            continue
        if hit.navigation and not apart:
            apart = True
            blocks.append(NAVIGATION_APART)
        where = f"lines {hit.start}-{hit.end}" if hit.end > hit.start else f"line {hit.start}"
        head = f"{len(results) + 1}. {hit.path} {where}"
        if hit.heading:
            head += f" [{hit.heading}]"
        found_by = ", ".join(f"{name} #{rank}" for name, rank in hit.ranks.items())
        head += f" (score {hit.score:.4f}; {found_by})"
        shown = snippet(text, hit, query)
        file_lines = text.split("\n")
        past = past_shown(file_lines, [n for n, _ in shown])
        blocks.append("\n".join([head, *_shown_lines(shown, past)]))
        results.append(
            {
                "rank": len(results) + 1,
                "path": hit.path,
                "heading_path": hit.heading or None,
                "start_line": hit.start,
                "end_line": hit.end,
                "score": hit.score,
                "ranks": dict(hit.ranks),
                "lines": [{"line": n, "text": line, "past": n in past} for n, line in shown],
                "navigation": hit.navigation,
                "superseded": superseded(file_lines, [n for n, _ in shown]),
            }
        )
    if not blocks:
        return f"No section under {mp.text} matches {query[:200]!r}."
    return (
        f"{len(results)} section(s) under {mp.text} for {query[:200]!r} ({mode}), best first:\n"
        + "\n".join(blocks)
    )
