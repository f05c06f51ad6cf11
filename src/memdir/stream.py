"""Streams of turns and the chunks the management agent integrates one at a time.

A stream is what a benchmark loader produces: dialogue turns in order, each with the locator
a fact written from it must carry (`S6T5`, `B3M12`). Chunking follows the configuration of
record: at most 8 consecutive turns, closed early once a chunk reaches 3,000 characters, so
one long turn never drags seven more behind it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_TURNS = 8
MAX_CHARS = 3_000


@dataclass(frozen=True)
class Turn:
    """One utterance. `locator` has no brackets (`S6T5`); `date` is ISO `YYYY-MM-DD` or ''."""

    locator: str
    speaker: str
    text: str
    date: str = ""

    def render(self) -> str:
        when = f" ({self.date})" if self.date else ""
        return f"[{self.locator}]{when} {self.speaker}: {self.text}"


@dataclass(frozen=True)
class Chunk:
    """Consecutive turns integrated in one management episode; `id` is 1-based."""

    id: int
    turns: tuple[Turn, ...]

    @property
    def chars(self) -> int:
        return sum(len(t.text) for t in self.turns)

    @property
    def locators(self) -> list[str]:
        return [t.locator for t in self.turns]

    def render(self) -> str:
        return "\n".join(t.render() for t in self.turns)


def chunk_stream(
    turns: Iterable[Turn], max_turns: int = MAX_TURNS, max_chars: int = MAX_CHARS
) -> list[Chunk]:
    """Cut a stream into chunks: close at `max_turns`, or as soon as text reaches `max_chars`."""
    chunks: list[Chunk] = []
    cur: list[Turn] = []
    chars = 0
    for turn in turns:
        cur.append(turn)
        chars += len(turn.text)
        if len(cur) >= max_turns or chars >= max_chars:
            chunks.append(Chunk(len(chunks) + 1, tuple(cur)))
            cur, chars = [], 0
    if cur:
        chunks.append(Chunk(len(chunks) + 1, tuple(cur)))
    return chunks


def turn_from_dict(obj: dict[str, Any], where: str) -> Turn:
    missing = [k for k in ("locator", "speaker", "text") if not isinstance(obj.get(k), str)]
    if missing:
        raise ValueError(f"{where}: a turn needs string fields locator, speaker, text; missing {missing}")
    date = obj.get("date") or ""
    return Turn(obj["locator"].strip("[]"), obj["speaker"], obj["text"], str(date))


def load_turns(path: str | Path) -> list[Turn]:
    """Turns from a JSONL file (one object per line) or a JSON list of objects."""
    text = Path(path).read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
        return [turn_from_dict(o, f"{path} item {i + 1}") for i, o in enumerate(items)]
    turns: list[Turn] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not a JSON object ({exc})") from None
        turns.append(turn_from_dict(obj, f"{path}:{n}"))
    return turns


def dump_turns(turns: Iterable[Turn]) -> Iterator[str]:
    for t in turns:
        yield json.dumps(asdict(t), ensure_ascii=False)
