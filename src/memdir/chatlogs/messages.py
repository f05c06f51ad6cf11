"""Chat messages and records made turns: speakers, text, and locators derived from sessions and
time (the conversion `read.py` applies to every shape without locators).

A message is OpenAI-style `{role, content}` (speaker: its `name`, else its role; content a string
or a list of parts) or a record `{speaker, text}`. System and tool messages, and messages with no
text, are left out and counted (`ChatLog.skipped`). The locator is `S<session>T<turn>`
(docs/conventions.md, "Source locators"), turns counted from 1 in each session; the session comes
from a `session` field (numbers as written, names numbered in order of first appearance), else
from a gap in time longer than `session_gap` between two messages, else everything is session 1.
The time is a `date`, `timestamp`, `time` or `created_at` field, ISO 8601 or epoch seconds; it
gives the turn its date, by one rule for every format: the day in UTC (a time without a zone is
taken as UTC, a bare date is that day). Epoch seconds, all a ChatGPT export gives, carry no
zone, so the UTC day is the one day every format can agree on (docs/ingest.md, "Turns, sessions, dates"). A
record an export reader made may carry the source's id of its message (`SOURCE_ID`);
`ChatLog.ids` keeps them beside the turns, for the ingest ledger's key (store/ingest_ledger.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from memdir.conventions import MAX_DIGITS, MAX_NUMBER
from memdir.stream import (
    MAX_TURN_BYTES,
    Turn,
    one_line_field,
    repair_text,
    sessions_of,
    too_long,
    turn_from_dict,
)

EXPECTED = (
    "expected one of: memdir turns {locator, speaker, text, date}; OpenAI messages {role, content} "
    '(JSONL, a JSON list, or {"messages": [...]}); speaker/text records {speaker, text} (optional '
    "session, date); a LoCoMo file; a REALTALK chat file; a ChatGPT or Claude.ai export"
)
"""The shapes read, as every error names them."""
SOURCE_ID = "memdir:source-id"
"""The record field an export reader puts a message's own id in (`chatgpt:<conversation>/<message>`)."""
TIME_FIELDS = ("date", "timestamp", "time", "created_at")
# Roles whose messages are not the conversation: instructions to a model, and tool traffic.
LEFT_OUT_ROLES = {"system": "system", "developer": "system", "tool": "tool", "function": "tool"}
_REASONS = {
    "system": "system message(s) (instructions, not conversation)",
    "tool": "tool message(s) (tool traffic, not conversation)",
    "no text": "message(s) with no text",
    "reasoning": "reasoning part(s) (the model's thinking, not said)",
    "branch": "message(s) on abandoned branches (edited or retried)",
    "hidden": "hidden message(s) (custom instructions)",
    "malformed conversation": "conversation(s) that could not be read (each named)",
}
_TEXT_PARTS = ("text", "input_text", "output_text")
_SESSION_NAME = re.compile(r"(?:session[\s_-]*|s)?(\d+)", re.IGNORECASE)
_EPOCH = re.compile(r"\d+(?:\.\d+)?")
_GAP = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


class LeftOutWarning(UserWarning):
    """Reading a chat log left messages out (system, tool, no text) or did not use the session
    gap given; `load_any` and `turns_from_records` say so, since their callers see only turns."""


@dataclass(frozen=True)
class ChatLog:
    """What was read: the turns, the format detected, and what was left out and why."""

    turns: list[Turn]
    format: str
    skipped: dict[str, int] = field(default_factory=dict)
    """reason (`system`, `tool`, `no text`) -> how many messages it left out"""
    notes: tuple[str, ...] = ()
    ids: tuple[str | None, ...] = ()
    """the source's id of each turn (an export's conversation and message), or () when it has none"""
    attachments: int = 0
    """attached files kept as lines of their turns (an export's: `export_fields.with_attachments`)"""

    @property
    def sessions(self) -> int:
        return len(sessions_of(self.turns))

    def left_out(self) -> str:
        """What was left out or not used, in words ("" when nothing)."""
        parts = []
        if self.skipped:
            said = ", ".join(f"{n} {_REASONS.get(k, k)}" for k, n in self.skipped.items())
            parts.append(f"skipped {said}")
        return "; ".join([*parts, *self.notes])

    def summary(self) -> str:
        """`read 412 turn(s) (openai-messages, 3 session(s)); skipped 2 system message(s) ...`."""
        head = f"read {len(self.turns)} turn(s) ({self.format}, {self.sessions} session(s))"
        if self.attachments:
            head += f", {self.attachments} attachment(s) kept as lines of their turns"
        rest = self.left_out()
        return f"{head}; {rest}" if rest else head


def parse_gap(text: str) -> timedelta:
    """`90s`, `30m`, `2h`, `1d` (a positive number and a unit) as a timedelta."""
    m = _GAP.fullmatch(text.strip().lower())
    if not m or float(m[1]) <= 0:
        raise ValueError(
            f"session gap {text!r} is not a duration; write a positive number and a unit: 90s, 30m, 2h, 1d"
        )
    return timedelta(**{_UNITS[m[2]]: float(m[1])})


def unused(gap: timedelta | None, why: str) -> tuple[str, ...]:
    """The note that a session gap given was not used, and why."""
    return (f"session gap not used: {why}",) if gap is not None else ()


# -- records ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Message:
    where: str
    speaker: str
    text: str
    session: Any
    when: datetime | None
    id: str | None = None


def from_records(items: list[tuple[str, Any]], gap: timedelta | None) -> ChatLog:
    """The turns of `(where, value)` records: memdir turns as they are, when the first record has
    a locator; else messages, with locators derived. A mix of the two is refused, since derived
    locators could repeat given ones."""
    if not items:
        return ChatLog([], "empty", notes=unused(gap, "there are no messages"))
    for where, obj in items:
        if not isinstance(obj, Mapping):
            raise ValueError(f"{where}: a turn is a JSON object, not {type(obj).__name__}; {EXPECTED}")
    first_where, first = items[0]
    with_locator = first.get("locator") is not None
    for where, obj in items:
        if (obj.get("locator") is not None) != with_locator:
            has, other = ("no", "one") if with_locator else ("a", "none")
            raise ValueError(
                f"{where}: this record has {has} locator and {first_where} has {other}; give every "
                "record a locator, or none (then they are derived as S<session>T<turn>)"
            )
    if with_locator:
        turns = [_bounded(turn_from_dict(dict(obj), where), where) for where, obj in items]
        return ChatLog(turns, "memdir-turns", notes=unused(gap, "the turns carry locators"))
    return _from_messages(items, gap)


def _bounded(turn: Turn, where: str) -> Turn:
    if len(turn.text.encode("utf-8")) > MAX_TURN_BYTES:
        raise ValueError(too_long(where))
    return turn


def _from_messages(items: list[tuple[str, Any]], gap: timedelta | None) -> ChatLog:
    kept: list[_Message] = []
    skipped: Counter[str] = Counter()
    for where, obj in items:
        got = _message(obj, where)
        if isinstance(got, str):
            skipped[got] += 1
        else:
            kept.append(got)
    sessions, notes = _sessions(kept, gap)
    count: Counter[int] = Counter()
    turns = []
    for m, s in zip(kept, sessions, strict=True):
        count[s] += 1
        date = _utc(m.when).date().isoformat() if m.when else None  # one rule: the UTC day
        turns.append(Turn(f"S{s}T{count[s]}", m.speaker, m.text, date))
    fmt = "speaker-text" if "speaker" in items[0][1] else "openai-messages"
    ids = tuple(m.id for m in kept) if any(m.id for m in kept) else ()
    return ChatLog(turns, fmt, dict(skipped), notes, ids)


def _message(obj: Mapping[str, Any], where: str) -> _Message | str:
    """The message `obj` holds, or why it is left out (`system`, `tool`, `no text`)."""
    if "speaker" in obj:
        speaker = obj["speaker"]
        if not isinstance(speaker, str) or not speaker.strip():
            raise ValueError(f"{where}: speaker is a non-empty string, not {show(speaker)}; {EXPECTED}")
        if "text" not in obj and "content" not in obj:
            raise ValueError(
                f"{where}: a speaker/text record needs a text; found keys {keys_of(obj)}; {EXPECTED}"
            )
        raw = obj["text"] if "text" in obj else obj["content"]
    elif "role" in obj:
        role = obj["role"]
        if not isinstance(role, str) or not role.strip():
            raise ValueError(f"{where}: role is a non-empty string, not {show(role)}; {EXPECTED}")
        if reason := LEFT_OUT_ROLES.get(role.strip().lower()):
            return reason
        name = obj.get("name")
        speaker = name if isinstance(name, str) and name.strip() else role
        raw = obj["content"] if "content" in obj else obj.get("text")
    else:
        raise ValueError(
            f"{where}: a record needs a speaker (speaker/text) or a role (OpenAI messages); found keys "
            f"{keys_of(obj)}; {EXPECTED}"
        )
    text = _text(raw, where)
    if not text.strip():
        return "tool" if obj.get("tool_calls") or obj.get("function_call") else "no text"
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TURN_BYTES:
        raise ValueError(too_long(where))
    return _Message(
        where,
        one_line_field(speaker, "speaker", where),
        repair_text(text, "text", where),
        obj.get("session"),
        _when(obj, where),
        source if isinstance(source := obj.get(SOURCE_ID), str) and source else None,
    )


def _text(raw: Any, where: str) -> str:
    """A message's text: a string, or the text parts of a list of content parts joined by lines
    (images and tool parts hold no text of the conversation)."""
    if raw is None or isinstance(raw, str):
        return raw or ""
    if isinstance(raw, list):
        parts = []
        for part in raw:
            if isinstance(part, str):
                parts.append(part)
            elif (
                isinstance(part, dict)
                and part.get("type") in _TEXT_PARTS
                and isinstance(part.get("text"), str)
            ):
                parts.append(part["text"])
        return "\n".join(parts)
    raise ValueError(
        f'{where}: content is a string or a list of parts ({{"type": "text", "text": ...}}), not '
        f"{show(raw)}; {EXPECTED}"
    )


# -- time and sessions ------------------------------------------------------------------------


def _when(obj: Mapping[str, Any], where: str) -> datetime | None:
    for key in TIME_FIELDS:
        value = obj.get(key)
        if value is not None and value != "":
            return _parse_time(value, f"{where}: {key}")
    return None


def _parse_time(value: Any, where: str) -> datetime:
    """ISO 8601 (a date, or a date and time with or without a zone) or epoch seconds."""
    if isinstance(value, str):
        text = value.strip()
        if not _EPOCH.fullmatch(text):
            try:
                return datetime.fromisoformat(text)
            except ValueError:
                pass
        else:
            return _epoch(float(text), where)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        return _epoch(float(value), where)
    raise ValueError(
        f"{where} {show(value)} is neither ISO 8601 (2024-01-05, 2024-01-05T10:30:00Z) nor epoch "
        f"seconds; {EXPECTED}"
    )


def _epoch(seconds: float, where: str) -> datetime:
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise ValueError(
            f"{where} {seconds:g} is out of range as epoch seconds (milliseconds? divide by 1000)"
        ) from None


def _utc(when: datetime) -> datetime:
    """Times compared across zones; a time without a zone is taken as UTC."""
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def _sessions(kept: list[_Message], gap: timedelta | None) -> tuple[list[int], tuple[str, ...]]:
    """Each message's session number, and a note when the gap given was not used."""
    named = [m for m in kept if m.session is not None]
    if named:
        if len(named) < len(kept):
            bare = next(m for m in kept if m.session is None)
            raise ValueError(
                f"{bare.where}: this message has no session and {named[0].where} has one; give every "
                "message a session, or none"
            )
        return _named_sessions(kept), unused(gap, "the messages name their sessions")
    if gap is None:
        return [1] * len(kept), ()
    numbers: list[int] = []
    previous: datetime | None = None
    for m in kept:
        if m.when is None:
            raise ValueError(
                f"{m.where}: a session gap needs the time of every message, and this one has none "
                f"(a field {', '.join(TIME_FIELDS)})"
            )
        now = _utc(m.when)
        if previous is None:
            numbers.append(1)
        else:
            numbers.append(numbers[-1] + 1 if now - previous > gap else numbers[-1])
        previous = now
    return numbers, ()


def _named_sessions(kept: list[_Message]) -> list[int]:
    """Session numbers as written (`3`, `"3"`, `"session_3"`), or, when any is a name, the
    distinct values numbered 1..n in order of first appearance."""
    numbers = [_session_number(m.session, m.where) for m in kept]
    if all(n is not None for n in numbers):
        return [n for n in numbers if n is not None]
    order: dict[Any, int] = {}
    return [order.setdefault(m.session, len(order) + 1) for m in kept]


def _session_number(value: Any, where: str) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{where}: session is a number or a name, not {show(value)}; {EXPECTED}")
    if isinstance(value, int):
        number = value if value >= 0 else None
    else:
        m = _SESSION_NAME.fullmatch(value.strip())
        number = int(m[1]) if m and len(m[1].lstrip("0")) <= MAX_DIGITS else -1 if m else None
    if number is not None and not 0 <= number <= MAX_NUMBER:  # -1: too many digits to convert
        raise ValueError(
            f"{where}: session {show(value)} is past the largest a locator holds ({MAX_NUMBER:,}); "
            "number the sessions from 1, or name them"
        )
    return number


# -- words ------------------------------------------------------------------------------------


def keys_of(obj: Mapping[Any, Any]) -> str:
    keys = sorted(str(k) for k in obj)
    return "[" + ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "") + "]"


def show(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"
