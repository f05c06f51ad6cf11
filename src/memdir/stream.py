"""The incoming stream: turns with their source locators, and the chunks an ingest feeds to the
management role and to chunk retrieval.

Chunking rule (docs/study.md, Configuration of record): at most 8 consecutive turns per chunk,
closed early once a chunk would pass 3,000 characters. Two readings of the rule were measured
against REALTALK's Chat_10_Fahim_Muhhamed, for which the paper counts 93 build chunks:

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
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO

from memdir.conventions import LINE_BREAKS, MAX_DIGITS, neutralize_locators, turn_numbers

MAX_TURNS = 8
MAX_CHARS = 3000


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

    def __post_init__(self) -> None:
        # Every loader makes its turns here, so here the speaker and date are held to one line
        # (the loaders refuse first, naming the record: `one_line_field`): a line break in
        # either would close a file's frontmatter or start a forged fact line. Locator-shaped
        # text in either is kept as words, not as a citation (docs/conventions.md).
        for name, value in (("speaker", self.speaker), ("date", self.date)):
            if value is not None and LINE_BREAKS.search(value):
                raise ValueError(f"{name} {_shown(value)} holds a line break; a {name} is one line")
            if value is not None and "[" in value:
                object.__setattr__(self, name, neutralize_locators(value))

    @property
    def session(self) -> int:
        """The session (or block) number named by the locator."""
        numbers = turn_numbers(self.locator)
        if numbers is None:
            raise ValueError(f"locator {self.locator!r} is neither S<session>T<turn> nor B<block>M<message>")
        return numbers[0]

    def render(self) -> str:
        """The line a builder or chunk file shows: `[S6T5] (2023-05-02) Calvin: text`."""
        when = f" ({self.date})" if self.date else ""
        return f"[{self.locator}]{when} {self.speaker}: {neutralize_locators(self.text)}"


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


# A turn is a chat message (the benchmark conversations have none over 1,200 characters). The
# bound (on a JSONL line, or on the text of a turn in a JSON list) keeps one hostile turn (a
# whole document, or 150 MB of nothing) from being read into memory and from reaching a model's
# prompt.
MAX_TURN_BYTES = 256 * 1024
# A JSON list is parsed whole, so the file is bounded; JSONL is read line by line and is not.
MAX_JSON_LIST_BYTES = 64 * 1024 * 1024
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark, which some editors put first
_SURROGATE = re.compile("[\ud800-\udfff]")


class NumberTooLong(ValueError):
    """A JSON number of more digits than Python converts (4,300): bad wherever it stands, so a
    reader trying another shape of the file keeps this error, which names the line."""


class RepairedTurnWarning(UserWarning):
    """A turn's text held code points no file can store (lone surrogates); they became U+FFFD."""


def repair_text(value: str, field_name: str, where: str) -> str:
    """`value` with lone surrogates (scraped chat JSON holds `"\\ud800"`) replaced by U+FFFD.

    JSON decoding joins every valid surrogate pair, so any surrogate left is lone, and it cannot
    be encoded as UTF-8: the first write of the turn would fail. Repaired, with a warning.
    """
    fixed, n = _SURROGATE.subn("\ufffd", value)
    if n:
        warnings.warn(
            RepairedTurnWarning(
                f"{where}: {field_name} held {n} lone surrogate code point(s), which UTF-8 cannot "
                "store; each was replaced by U+FFFD"
            ),
            stacklevel=4,
        )
    return fixed


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def one_line_field(value: str, field_name: str, where: str) -> str:
    """A speaker or date as a turn holds it: repaired (`repair_text`), surrounding space
    stripped, and refused, naming the record, when it still holds a line break."""
    value = repair_text(value, field_name, where).strip()
    if LINE_BREAKS.search(value):
        raise ValueError(
            f"{where}: {field_name} {_shown(value)} holds a line break; a {field_name} is one line "
            "(write it without line breaks)"
        )
    return value


def turn_from_dict(obj: Any, where: str) -> Turn:
    if not isinstance(obj, dict):
        raise ValueError(
            f"{where}: a turn is a JSON object {{locator, speaker, text, date}}, not {type(obj).__name__}"
        )
    missing = [k for k in ("locator", "speaker", "text") if not isinstance(obj.get(k), str)]
    if missing:
        raise ValueError(f"{where}: a turn needs string fields locator, speaker, text; missing {missing}")
    if turn_numbers(obj["locator"].strip("[]")) is None:
        raise ValueError(
            f"{where}: locator {_shown(obj['locator'])} must be S<session>T<turn> (e.g. S6T5) or "
            f"B<block>M<message>, each number at most {MAX_DIGITS} digits"
        )
    locator = obj["locator"].strip("[]")
    where = f"{where} ({locator})"
    date = obj.get("date") or None
    return Turn(
        locator,
        one_line_field(obj["speaker"], "speaker", where),
        repair_text(obj["text"], "text", where),
        one_line_field(str(date), "date", where) if date else None,
    )


def parse_json(data: bytes, where: str) -> Any:
    """One JSON value from UTF-8 bytes; every failure a ValueError naming `where`."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{where}: JSON nested too deep; a turn is one flat object") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise NumberTooLong(
            f"{where}: a number in it has more digits than can be read (4,300); no field of a turn "
            "needs one that long"
        ) from None


def first_byte(fh: BinaryIO) -> bytes:
    """The first non-blank byte after any BOM (b"" for a blank file); reads in blocks, leaves
    `fh` at the start."""
    first = True
    while block := fh.read(65536):
        head = (block.removeprefix(BOM) if first else block).lstrip()
        first = False
        if head:
            fh.seek(0)
            return head[:1]
    fh.seek(0)
    return b""


def read_json_document(fh: BinaryIO, path: str | Path) -> Any:
    """The whole of `fh` as one JSON value, refused past MAX_JSON_LIST_BYTES (JSON is parsed
    whole, so the file is what must be bounded)."""
    data = fh.read(MAX_JSON_LIST_BYTES + 1)
    if len(data) > MAX_JSON_LIST_BYTES:
        raise ValueError(
            f"{path}: a JSON file may be at most {MAX_JSON_LIST_BYTES // 2**20} MiB; "
            "write the stream as JSONL (one turn per line), which is read line by line"
        )
    return parse_json(data.removeprefix(BOM), str(path))


def jsonl_values(fh: BinaryIO, path: str | Path) -> Iterator[tuple[str, Any]]:
    """(`path:line`, value) for each non-blank line of `fh`, never reading a line past
    MAX_TURN_BYTES: a 150 MB line is refused after 256 KiB, not read into memory."""
    n = 0
    while line := fh.readline(MAX_TURN_BYTES + 1):
        n += 1
        where = f"{path}:{n}"
        if len(line.rstrip(b"\r\n")) > MAX_TURN_BYTES:  # read no further than the bound
            raise ValueError(too_long(where))
        if n == 1:
            line = line.removeprefix(BOM)
        if line.strip():
            yield where, parse_json(line, where)


def load_turns(path: str | Path) -> list[Turn]:
    """Turns from a JSONL file (one object per line) or a JSON list of objects.

    JSONL is read line by line, each line bounded by MAX_TURN_BYTES; a JSON list is bounded by
    MAX_JSON_LIST_BYTES and the text of each of its turns by MAX_TURN_BYTES. Every error is a ValueError
    naming the line (or item) and what to do; a repaired turn raises a RepairedTurnWarning.
    Other shapes (chat messages, benchmark files) are `memdir.chatlogs.load_any`'s.
    """
    with open(path, "rb") as fh:
        if first_byte(fh) != b"[":
            return [turn_from_dict(obj, where) for where, obj in jsonl_values(fh, path)]
        items = read_json_document(fh, path)
        if not isinstance(items, list):
            raise ValueError(f"{path}: a JSON stream is a list of turn objects")
        turns = []
        for i, obj in enumerate(items, start=1):
            turn = turn_from_dict(obj, f"{path} item {i}")
            if len(turn.text.encode("utf-8")) > MAX_TURN_BYTES:
                raise ValueError(too_long(f"{path} item {i}"))
            turns.append(turn)
        return turns


def too_long(where: str) -> str:
    return (
        f"{where}: a turn may be at most {MAX_TURN_BYTES // 1024} KiB; split a longer text into several turns"
    )


def dump_turns(turns: Iterable[Turn]) -> Iterator[str]:
    for t in turns:
        yield json.dumps(asdict(t), ensure_ascii=False)
