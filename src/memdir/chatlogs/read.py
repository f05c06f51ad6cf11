"""Loaders of what users have: a chat log, in the shape it already has, made a stream of turns.

The shapes read (docs/ingest.md), told apart by their content:

- memdir turns `{locator, speaker, text, date}`: JSONL or a JSON list (as `stream.load_turns`);
- OpenAI-style messages `{role, content}`: JSONL, a JSON list, or `{"messages": [...]}`;
- speaker/text records `{speaker, text}`: JSONL or a JSON list;
- a LoCoMo file (a list of samples, or one, each with a `conversation` of `session_N` lists)
  and a REALTALK chat file (`{name, session_N: [...]}`), their turns read as benchmark
  loaders read them (`dialogues.py`);
- a ChatGPT `conversations.json` or a Claude.ai export (`exports.py`: a session per
  conversation), also as the .zip the service hands over (`archive.py`: its conversations.json
  read in memory, within caps on its size and on the zip's members).

Messages and records carry no locator; `messages.py` derives one (`S<session>T<turn>`)
and says what it left out. The bounds are the stream's (docs/reliability.md, section 7): a line,
or the text of a turn, at most MAX_TURN_BYTES; a file parsed whole at most MAX_JSON_LIST_BYTES.
Every error is a ValueError naming the file and the line or item, what was found, and the shapes
read.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, BinaryIO

from memdir.chatlogs.archive import export_member, is_zip
from memdir.chatlogs.dialogues import locomo_turns, realtalk_turns
from memdir.chatlogs.exports import CHATGPT, CLAUDE, export_kind, read_export
from memdir.chatlogs.messages import (
    EXPECTED,
    TIME_FIELDS,
    ChatLog,
    LeftOutWarning,
    from_records,
    keys_of,
    unused,
)
from memdir.stream import (
    BOM,
    MAX_TURN_BYTES,
    NumberTooLong,
    Turn,
    first_byte,
    jsonl_values,
    one_line_field,
    parse_json,
    read_json_document,
    repair_text,
    too_long,
)

FORMATS = ("memdir-turns", "openai-messages", "speaker-text", "locomo", "realtalk", CHATGPT, CLAUDE)
"""The formats `read_chat` names (and `empty`, for a file with no records)."""
_SESSION_KEY = re.compile(r"session_\d+")
# The first key of an object, and the first character of its value: what a first line too long
# to parse says about the file (a record per line, or one minified document).
_FIRST_KEY = re.compile(rb'\A\s*\{\s*"([A-Za-z_]{1,32})"\s*:\s*(\S)')
_RECORD_KEYS = {"locator", "speaker", "text", "role", "content", "name", "session", *TIME_FIELDS}


def read_chat(
    path: str | Path, *, session_gap: timedelta | None = None, sample: str | None = None
) -> ChatLog:
    """The turns of the chat log at `path`, whatever its shape, with the format detected.

    `sample` names the conversation to read from a LoCoMo file of several (its `sample_id`).
    """
    shown = str(path)
    with open(path, "rb") as fh:
        if is_zip(fh):
            shown, member = export_member(fh, shown)
            kind, value = _read(member, shown)
        else:
            kind, value = _read(fh, path)
    if kind == "jsonl":
        chat = from_records(value, session_gap)
    else:
        chat = _document(value, shown, session_gap, sample)
    if sample is not None and chat.format != "locomo":
        raise ValueError(
            f"{path}: a sample ({sample!r}) names one conversation of a LoCoMo file; this file holds "
            f"{chat.format}, a single conversation"
        )
    return chat


def load_any(
    path: str | Path, *, session_gap: timedelta | None = None, sample: str | None = None
) -> list[Turn]:
    """`read_chat(...).turns`; what was left out is said by a LeftOutWarning."""
    chat = read_chat(path, session_gap=session_gap, sample=sample)
    _warn(chat, str(path))
    return chat.turns


def chat_from_records(
    records: Sequence[Mapping[str, object]], *, session_gap: timedelta | None = None, where: str = "messages"
) -> ChatLog:
    """The conversion of `read_chat` for records already in memory (messages, speaker/text
    records or memdir turns); errors name `where item N`."""
    if isinstance(records, str | bytes) or not isinstance(records, Sequence):
        raise ValueError(f"{where}: records are a list of objects, not {type(records).__name__}; {EXPECTED}")
    return from_records([(f"{where} item {i}", r) for i, r in enumerate(records, start=1)], session_gap)


def turns_from_records(
    records: Sequence[Mapping[str, object]], *, session_gap: timedelta | None = None, where: str = "messages"
) -> list[Turn]:
    """`chat_from_records(...).turns`; what was left out is said by a LeftOutWarning."""
    chat = chat_from_records(records, session_gap=session_gap, where=where)
    _warn(chat, where)
    return chat.turns


def _warn(chat: ChatLog, where: str) -> None:
    if said := chat.left_out():
        warnings.warn(LeftOutWarning(f"{where}: {said}"), stacklevel=3)


# -- reading the file -------------------------------------------------------------------------


def _read(fh: BinaryIO, path: str | Path) -> tuple[str, Any]:
    """("jsonl", [(where, value), ...]) or ("document", the parsed file).

    A file is one JSON document when it opens with `[`, or with `{` on a first line that is not
    one whole record (a pretty-printed object, or one object holding the whole conversation).
    """
    head = first_byte(fh)
    if head == b"[":
        return "document", read_json_document(fh, path)
    if head == b"{":
        line = _first_line(fh)
        if len(line.rstrip(b"\r\n")) > MAX_TURN_BYTES:
            if not _opens_record(line):
                return "document", read_json_document(fh, path)
        else:
            try:
                value = parse_json(line, str(path))
            except NumberTooLong:  # a record whose number is too long: the line reader names its line
                return "jsonl", list(jsonl_values(fh, path))
            except ValueError:
                return "document", read_json_document(fh, path)
            if isinstance(value, dict) and _is_document(value):
                return "document", _one_document(fh, path)
    return "jsonl", list(jsonl_values(fh, path))


def _one_document(fh: BinaryIO, path: str | Path) -> Any:
    """The file whose first line holds a whole conversation, refused when more follows (one
    conversation per line, as in a fine-tuning set, is several conversations)."""
    try:
        return read_json_document(fh, path)
    except ValueError as exc:
        if "Extra data" not in str(exc):
            raise
        raise ValueError(
            f"{path}: line 1 holds a whole conversation and more JSON follows it; give each "
            f"conversation a file of its own; {EXPECTED}"
        ) from None


def _first_line(fh: BinaryIO) -> bytes:
    """The first non-blank line, at most MAX_TURN_BYTES + 1 bytes of it; leaves `fh` at the start."""
    try:
        while line := fh.readline(MAX_TURN_BYTES + 1):
            line = line.removeprefix(BOM)
            if line.strip():
                return line
        return b""
    finally:
        fh.seek(0)


def _opens_record(line: bytes) -> bool:
    m = _FIRST_KEY.match(line)
    if m is None:
        return False
    key, value = m[1].decode(), m[2]
    return key in _RECORD_KEYS and not (key == "name" and value == b"{")  # REALTALK opens with name: {...}


def _is_document(obj: Mapping[str, Any]) -> bool:
    if "speaker" in obj or "role" in obj:
        return False
    return (
        export_kind(obj) is not None
        or "messages" in obj
        or "conversation" in obj
        or any(_SESSION_KEY.fullmatch(str(k)) for k in obj)
    )


def _document(value: Any, path: str, gap: timedelta | None, sample: str | None) -> ChatLog:
    if (kind := export_kind(value)) is not None:
        return _exported(value, kind, path, gap)
    if isinstance(value, list):
        if value and isinstance(value[0], dict) and "conversation" in value[0]:
            return _locomo(value, path, gap, sample)
        return from_records([(f"{path} item {i}", v) for i, v in enumerate(value, start=1)], gap)
    if isinstance(value, dict):
        if "conversation" in value:
            return _locomo([value], path, gap, sample)
        if "messages" in value:
            messages = value["messages"]
            if not isinstance(messages, list):
                found = type(messages).__name__
                raise ValueError(f"{path}: messages is a list of message objects, not {found}; {EXPECTED}")
            return from_records([(f"{path} messages item {i}", v) for i, v in enumerate(messages, 1)], gap)
        if any(_SESSION_KEY.fullmatch(str(k)) for k in value):
            if "speaker_a" in value or "speaker_b" in value:  # a LoCoMo sample's conversation alone
                return _locomo([{"sample_id": Path(path).stem, "conversation": value}], path, gap, sample)
            return _realtalk(value, path, gap)
        raise ValueError(
            f"{path}: a JSON object with keys {keys_of(value)} is none of these shapes; {EXPECTED}"
        )
    raise ValueError(f"{path}: a JSON {type(value).__name__} is none of these shapes; {EXPECTED}")


# -- LoCoMo and REALTALK files ----------------------------------------------------------------


class SeveralConversations(ValueError):
    """A LoCoMo file of several conversations read without naming one; `ids` are its samples, so
    each caller can say how to name one its own way (a flag on the command line, an argument in
    Python)."""

    def __init__(self, path: str, ids: list[str]) -> None:
        self.path, self.ids = path, ids
        super().__init__(
            f"{path}: a LoCoMo file of {len(ids)} conversations ({', '.join(ids)}); name the one to "
            "read as its sample (memdir ingest --sample ID)"
        )


def _locomo(samples: list[Any], path: str, gap: timedelta | None, sample: str | None) -> ChatLog:
    ids = [str(s.get("sample_id", Path(path).stem)) if isinstance(s, dict) else "?" for s in samples]
    if sample is None and len(samples) > 1:
        raise SeveralConversations(path, ids)
    index = 0 if sample is None else next((i for i, s in enumerate(ids) if s == sample), None)
    if index is None:
        raise ValueError(f"{path}: no LoCoMo conversation {sample!r}; this file holds {', '.join(ids)}")
    raw = samples[index]
    where = f"{path} ({ids[index]})"
    if not isinstance(raw, dict) or not isinstance(raw.get("conversation"), dict):
        raise ValueError(f"{where}: a LoCoMo sample is an object with a conversation object; {EXPECTED}")
    try:
        turns, _dates = locomo_turns(raw["conversation"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{where}: a LoCoMo conversation, but {_reason(exc)}; {EXPECTED}") from None
    return ChatLog(_checked(turns, path), "locomo", notes=unused(gap, "the turns carry locators"))


def _realtalk(raw: dict[str, Any], path: str, gap: timedelta | None) -> ChatLog:
    try:
        turns, _dates = realtalk_turns(raw)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(
            f"{path}: a REALTALK chat (session_N lists), but {_reason(exc)}; {EXPECTED}"
        ) from None
    return ChatLog(_checked(turns, path), "realtalk", notes=unused(gap, "the turns carry locators"))


def _exported(value: Any, kind: str, path: str, gap: timedelta | None) -> ChatLog:
    try:
        return read_export(value, kind, path, gap)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: a {kind}, but {_reason(exc)}; {EXPECTED}") from None


def _checked(turns: list[Turn], path: str) -> list[Turn]:
    """The loaders' turns under the stream's guarantees: bounded text, storable code points."""
    out = []
    for t in turns:
        where = f"{path} ({t.locator})"
        if len(t.text.encode("utf-8", "surrogatepass")) > MAX_TURN_BYTES:
            raise ValueError(too_long(where))
        speaker, text = one_line_field(t.speaker, "speaker", where), repair_text(t.text, "text", where)
        out.append(Turn(t.locator, speaker, text, t.date))
    return out


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"a field is missing ({exc.args[0]!r})"
    return f"it could not be read ({exc})"


__all__ = ["FORMATS", "chat_from_records", "load_any", "read_chat", "turns_from_records"]
