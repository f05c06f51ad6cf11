"""The chunk-retrieval store: a conversation stream as one file per chunk, locators inline.

This is the retrieval baseline of the study: no curation, just the raw chunks the management
agent would have seen, each a valid memory file so the same BM25 index and tools serve it.
Benchmark loaders convert their turns to :class:`Turn` and their chunking to lists of turns.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memdir.store import frontmatter
from memdir.store.paths import MemoryPath
from memdir.store.store import Store

CHUNK_DIR = MemoryPath(("chunks",))
# Configuration of record: at most 8 consecutive turns, closed early at 3,000 characters.
MAX_TURNS = 8
MAX_CHARS = 3000


@dataclass(frozen=True)
class Turn:
    """One utterance: `locator` like 'S6T5' (or 'B3M12'), who said it, what, and the session date."""

    locator: str
    speaker: str
    text: str
    date: str = ""

    def line(self) -> str:
        return f"[{self.locator}] {self.speaker}: {' '.join(self.text.split())}"


def split_stream(
    turns: Iterable[Turn], max_turns: int = MAX_TURNS, max_chars: int = MAX_CHARS
) -> list[list[Turn]]:
    """Consecutive turns in chunks of at most `max_turns`, closed early once a chunk's text
    reaches `max_chars` characters."""
    chunks: list[list[Turn]] = []
    current: list[Turn] = []
    size = 0
    for turn in turns:
        current.append(turn)
        size += len(turn.text)
        if len(current) >= max_turns or size >= max_chars:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks


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
    meta = {"first": turns[0].locator, "last": turns[-1].locator, "turns": len(turns)}
    lines = [frontmatter.dump(chunk_path(number).stem, desc, meta).rstrip("\n")]
    date: str | None = None
    for t in turns:
        if t.date and t.date != date:
            lines.append(f"## {t.date}")
            date = t.date
        lines.append(t.line())
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


def build_chunk_store(root: str | os.PathLike[str], chunks: Sequence[Sequence[Turn]]) -> Store:
    """Write `chunks` as `/memories/chunks/chunk-NNNN.md` in a new (or empty) store at `root`,
    with the MEMORY.md files the convention asks for, in one step; then build its index."""
    from memdir.store.index import SearchIndex

    store = Store(root, create=True)
    with store.step("build_chunk_store", role="builder"):
        if not store.exists("/memories/MEMORY.md"):
            store.create("/memories/MEMORY.md", INDEX_TEXT)
        store.create(CHUNK_DIR.child("MEMORY.md"), CHUNKS_INDEX_TEXT.format(n=len(chunks), t=MAX_TURNS))
        for i, turns in enumerate(chunks, start=1):
            store.create(chunk_path(i), render_chunk(i, len(chunks), turns))
    SearchIndex.for_store(store).sync()
    return store
