"""The incoming stream: turns with their source locators, and the chunks the study feeds to
builders and to chunk retrieval.

Chunking rule (reference section 5): at most 8 consecutive turns per chunk, closed early once a
chunk would pass 3,000 characters. Two readings of the rule were measured against REALTALK's
Chat_10_Fahim_Muhhamed, whose reference count is 93 build chunks:

- chunks may span sessions: 83-84 chunks, whatever the size rule;
- chunks never span sessions, close *after* a turn that brings the chunk to 3,000: 92;
- chunks never span sessions, close *before* a turn that would take the chunk past 3,000: 93.

Only the last reading gives 93 (the one chunk that differs is session 18, seven long turns of
3,400 characters, split 6 + 1), so that is the rule here. Size is counted over the turns' text
(`Turn.text`, photo captions included), not over rendered lines, so it does not depend on the
rendering. A single turn longer than the limit still makes a chunk of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_TURNS = 8
MAX_CHARS = 3000

_LOCATOR = re.compile(r"^(?P<kind>[SB])(?P<group>\d+)(?:T|M)(?P<item>\d+)$")


@dataclass(frozen=True)
class Turn:
    """One message of a dialogue stream.

    `locator` is the source locator facts cite: `S6T5` (session 6, turn 5) for LoCoMo, REALTALK
    and the generated benchmark, `B3M12` (block 3, message 12) for PersonaMem. `date` is ISO
    `YYYY-MM-DD` when the source gives one.
    """

    locator: str
    speaker: str
    text: str
    date: str | None = None

    @property
    def session(self) -> int:
        """The session (or block) number named by the locator."""
        m = _LOCATOR.match(self.locator)
        if not m:
            raise ValueError(f"locator {self.locator!r} is neither S<session>T<turn> nor B<block>M<message>")
        return int(m.group("group"))

    def render(self) -> str:
        """The line a builder or chunk file shows: `[S6T5] (2023-05-02) Calvin: text`."""
        when = f" ({self.date})" if self.date else ""
        return f"[{self.locator}]{when} {self.speaker}: {self.text}"


@dataclass(frozen=True)
class Chunk:
    """Consecutive turns of one session; `index` counts from 1 over the whole stream."""

    index: int
    turns: tuple[Turn, ...]

    @property
    def id(self) -> int:
        """The chunk's number, as run records and the journal name it."""
        return self.index

    @property
    def session(self) -> int:
        return self.turns[0].session

    @property
    def locators(self) -> list[str]:
        return [t.locator for t in self.turns]

    @property
    def chars(self) -> int:
        return sum(len(t.text) for t in self.turns)

    def render(self) -> str:
        return "\n".join(t.render() for t in self.turns)


def chunk_stream(
    turns: Iterable[Turn], max_turns: int = MAX_TURNS, max_chars: int = MAX_CHARS
) -> list[Chunk]:
    """Split a stream into chunks by the rule of the module docstring."""
    chunks: list[Chunk] = []
    current: list[Turn] = []
    size = 0

    def close() -> None:
        nonlocal current, size
        if current:
            chunks.append(Chunk(len(chunks) + 1, tuple(current)))
        current, size = [], 0

    for turn in turns:
        if current and (
            turn.session != current[-1].session
            or len(current) >= max_turns
            or size + len(turn.text) > max_chars
        ):
            close()
        current.append(turn)
        size += len(turn.text)
    close()
    return chunks


def sessions_of(turns: Sequence[Turn]) -> list[int]:
    """Session numbers in stream order, without repeats."""
    seen: dict[int, None] = {}
    for t in turns:
        seen.setdefault(t.session, None)
    return list(seen)


def turn_from_dict(obj: dict[str, Any], where: str) -> Turn:
    missing = [k for k in ("locator", "speaker", "text") if not isinstance(obj.get(k), str)]
    if missing:
        raise ValueError(f"{where}: a turn needs string fields locator, speaker, text; missing {missing}")
    if not _LOCATOR.match(obj["locator"].strip("[]")):
        raise ValueError(
            f"{where}: locator {obj['locator']!r} must be S<session>T<turn> (e.g. S6T5) or B<block>M<message>"
        )
    date = obj.get("date") or None
    return Turn(obj["locator"].strip("[]"), obj["speaker"], obj["text"], str(date) if date else None)


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
