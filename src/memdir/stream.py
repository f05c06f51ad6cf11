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

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
