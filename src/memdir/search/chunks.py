"""The chunk-retrieval store: a conversation stream as one file per chunk, locators inline.

This is the retrieval baseline (the paper's chunk retrieval): no curation, just the raw chunks
the management agent would have seen (the stream's own chunking, `memdir.stream.chunk_stream`),
each a valid memory file so the same BM25 index and tools serve it.
"""

from __future__ import annotations

from collections.abc import Sequence

from memdir.store import frontmatter
from memdir.store.paths import MemoryPath
from memdir.store.store import Store
from memdir.stream import MAX_TURNS, Chunk, Turn, chunk_stream

CHUNK_DIR = MemoryPath(("chunks",))


def line(turn: Turn) -> str:
    """A turn as a chunk file shows it: the locator, the speaker, the text on one line."""
    return f"[{turn.locator}] {turn.speaker}: {' '.join(turn.text.split())}"


def chunk_path(number: int) -> MemoryPath:
    return CHUNK_DIR.child(f"chunk-{number:04d}.md")


def render_chunk(number: int, total: int, turns: Sequence[Turn]) -> str:
    """One chunk file: frontmatter saying which turns, when and who; then the turns, one per
    line, under a heading per session date."""
    if not turns:
        raise ValueError(f"chunk {number} has no turns")
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    dates = list(dict.fromkeys(t.date for t in turns if t.date))
    span = turns[0].locator if len(turns) == 1 else f"{turns[0].locator}-{turns[-1].locator}"
    desc = f"Conversation chunk {number} of {total}: turns {span}"
    if dates:
        desc += f" ({'; '.join(dates)})"
    desc += f", {' and '.join(speakers) if len(speakers) <= 2 else ', '.join(speakers)}"
    meta: frontmatter.Metadata = {"first": turns[0].locator, "last": turns[-1].locator, "turns": len(turns)}
    lines = [frontmatter.dump(chunk_path(number).stem, desc, meta).rstrip("\n")]
    date: str | None = None
    for t in turns:
        if t.date and t.date != date:
            lines.append(f"## {t.date}")
            date = t.date
        lines.append(line(t))
    return "\n".join(lines) + "\n"


INDEX_TEXT = """---
name: memory
description: Chunk-retrieval store; raw conversation chunks under /memories/chunks
---
# Memory
Raw conversation chunks, one file each under /memories/chunks/, with turn locators inline.
"""

CHUNKS_INDEX_TEXT = """---
name: memory
description: {n} conversation chunks in stream order
---
# Chunks
chunk-0001.md to chunk-{n:04d}.md: the stream in order, at most {t} turns each.
"""


def build_chunk_store(store: Store, chunks: Sequence[Chunk | Sequence[Turn]] | Sequence[Turn]) -> Store:
    """Write `chunks` as `/memories/chunks/chunk-NNNN.md` into `store` (new or empty), with the
    MEMORY.md files the convention asks for, in one step; then build its index. The caller
    builds the store (`tools.wiring.open_store`), so its journal records the step.

    `chunks` is a list of :class:`Chunk` (or of turn lists), or a flat list of turns, which is
    chunked by the configuration of record."""
    from memdir.search.index import SearchIndex

    flat = [c for c in chunks if isinstance(c, Turn)]
    if flat and len(flat) == len(chunks):
        groups: list[Sequence[Turn]] = [c.turns for c in chunk_stream(flat)]
    else:
        groups = [c.turns if isinstance(c, Chunk) else c for c in chunks if not isinstance(c, Turn)]
    with store.step("build_chunk_store", role="builder"):
        if not store.exists("/memories/MEMORY.md"):
            store.create("/memories/MEMORY.md", INDEX_TEXT)
        store.create(CHUNK_DIR.child("MEMORY.md"), CHUNKS_INDEX_TEXT.format(n=len(groups), t=MAX_TURNS))
        for i, turns in enumerate(groups, start=1):
            store.create(chunk_path(i), render_chunk(i, len(groups), turns))
    SearchIndex.for_store(store).sync()
    return store
