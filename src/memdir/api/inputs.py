"""What `Memory.add` takes, as the turns the management role integrates.

An app hands over what it has: a line of text, a list of chat messages, or a file. The
locators derived here start at `S1T1`, and `add` places them in the store's stream
(store/ingest_ledger.place, as `memdir ingest` does): a call is a new session after the highest
the store holds, unless it continues a conversation an earlier call began (the same messages
and more), so `[S3T2]` written by one call never collides with another call's. An export's
message ids come along (`Given.ids`): the ledger knows its messages by them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple, TypeAlias

from memdir.chatlogs import ChatLog, chat_from_records, read_chat
from memdir.chatlogs.read import SeveralConversations
from memdir.errors import MemdirError
from memdir.stream import MAX_TURN_BYTES, Turn, one_line_field, too_long

Input: TypeAlias = "str | os.PathLike[str] | Sequence[Mapping[str, object]] | Sequence[Turn]"


class Given(NamedTuple):
    """What `add` was given, read: the turns, what the input was read as, the records skipped,
    and the source's id of each turn (`ChatLog.ids`; () when it has none)."""

    turns: list[Turn]
    source: str
    skipped: int
    ids: tuple[str | None, ...] = ()


def to_turns(
    data: Input,
    *,
    speaker: str = "user",
    when: str | date | None = None,
    session_gap: timedelta | None = None,
    sample: str | None = None,
) -> Given:
    """What `data` holds, read (`Given`); `sample` names the conversation of a LoCoMo file that
    holds several."""
    if isinstance(data, os.PathLike):
        # A file is a record of the past: the day of this call is not the day its undated turns
        # were said, so they stay undated (as `memdir ingest` leaves them) unless `when` is given.
        log = _read_file(os.fspath(data), session_gap, sample)
        return _from_log(log, None if when is None else _day(when))
    day = _day(when)
    if isinstance(data, str):
        if not data.strip():
            raise MemdirError("add() got empty text; nothing to remember")
        _bounded(data.strip(), "add() text")  # the bound every message gets
        who = _one_line(speaker, "add() speaker=")
        return Given([Turn("S1T1", who, data.strip(), day)], "text", 0)
    items = list(data)
    if not items:
        raise MemdirError("add() got an empty list; pass text, chat messages or turns")
    if all(isinstance(t, Turn) for t in items):
        turns = [t for t in items if isinstance(t, Turn)]
        for i, t in enumerate(turns, start=1):
            _bounded(t.text, f"turns item {i} ({t.locator})")
        return Given(turns, "turns", 0)
    if not all(isinstance(m, Mapping) for m in items):
        raise MemdirError(
            "add() takes text, a file path, a list of chat messages ({role, content} or "
            "{speaker, text}) or a list of Turns; this list mixes other things in"
        )
    records = [m for m in items if isinstance(m, Mapping)]
    return _from_log(chat_from_records(records, session_gap=session_gap, where="messages"), day)


def _from_log(log: ChatLog, day: str | None) -> Given:
    """The log's turns, those without a date of their own given `day` (when there is one)."""
    if not log.turns:
        raise MemdirError(f"add() found no turn to remember ({log.summary()})")
    turns = log.turns if day is None else _dated(log.turns, day)
    return Given(turns, log.format, sum(log.skipped.values()), log.ids)


def _read_file(path: str, session_gap: timedelta | None, sample: str | None) -> ChatLog:
    """The export at `path`; one it cannot read is a `MemdirError`, the error an app catches
    around `add`, saying the way on in Python."""
    try:
        return read_chat(path, session_gap=session_gap, sample=sample)
    except SeveralConversations as exc:
        raise MemdirError(
            f"{path}: a LoCoMo file of {len(exc.ids)} conversations ({', '.join(exc.ids)}); add() "
            f"takes one: pass memdir.chatlogs.read_chat(path, sample={exc.ids[0]!r}).turns"
        ) from None
    except FileNotFoundError:
        raise MemdirError(f"{path}: no such file; give add() the path of a chat export") from None
    except (OSError, ValueError) as exc:
        raise MemdirError(str(exc)) from None


def _bounded(text: str, where: str) -> None:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TURN_BYTES:
        raise MemdirError(too_long(where))


def _one_line(value: str, where: str) -> str:
    try:
        return one_line_field(value, "speaker", where)
    except ValueError as exc:
        raise MemdirError(str(exc)) from None


def _day(when: str | date | None) -> str:
    if when is None:
        return datetime.now(UTC).date().isoformat()
    if isinstance(when, date):
        return when.isoformat()[:10]
    try:
        return date.fromisoformat(when[:10]).isoformat()
    except ValueError:
        raise MemdirError(f"date {when!r} is not an ISO date; give it as YYYY-MM-DD") from None


def _dated(turns: list[Turn], day: str) -> list[Turn]:
    """Turns without a date of their own get `day`, the day they are said when an app adds them
    as they happen (text and messages), or the day the caller gives."""
    return [t if t.date else replace(t, date=day) for t in turns]
