"""The two chat exports users have most: ChatGPT's `conversations.json` and Claude.ai's export,
made messages that `messages.py` turns into a stream like any other log.

Each conversation becomes one session, numbered in order of its creation (a ChatGPT export lists
the newest first), so `S3T2` is the second message of the third conversation. Roles stay apart:
the person is `user` and the model `assistant` (docs/conventions.md, "People"), and each message's
timestamp gives its turn a date (its UTC day, as every format's: `messages.py`). What the user saw
is read (`chatgpt.py`, `claude.py`: the current branch, speech only); what is not conversation is
left out and counted: system and tool messages, tool calls and the model's reasoning, messages
on abandoned branches, messages with no text, and what ChatGPT hides from its own view of the
chat. Attachments are kept as lines of their turn, and counted (`ChatLog.attachments`).

A conversation that cannot be read (no `mapping` or `chat_messages`, a message that is not an
object, a time that is neither ISO 8601 nor epoch seconds) is skipped and named in the notes;
the rest of the export is read. A whole export is one user's history: one damaged conversation
is no reason to refuse a thousand good ones.

Both exports name each conversation and message by an id (ChatGPT: the conversation's
`conversation_id` or `id` and the message's `id`, else its node's; Claude.ai: their `uuid`s).
Each turn keeps its pair (`ChatLog.ids`, `chatgpt:<conversation>/<message>`): the ingest ledger
knows a message by it in a later export, wherever it stands and whatever its words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from memdir.chatlogs.chatgpt import read_chatgpt
from memdir.chatlogs.claude import read_claude
from memdir.chatlogs.export_fields import Conversation, ident
from memdir.chatlogs.messages import ChatLog, _parse_time, _utc, from_records, unused
from memdir.stream import MAX_TURN_BYTES

CHATGPT = "chatgpt-export"
CLAUDE = "claude-export"
_TURN_ROLES = {"user", "assistant"}


def export_kind(value: Any) -> str | None:
    """`chatgpt-export`, `claude-export`, or None: a list of conversations, or one. The first
    conversation with a `mapping` or a `chat_messages` list says which (one damaged
    conversation first in the list does not hide what the file is)."""
    for conv in value if isinstance(value, list) else [value]:
        if isinstance(conv, Mapping):
            if isinstance(conv.get("mapping"), Mapping):
                return CHATGPT
            if isinstance(conv.get("chat_messages"), list):
                return CLAUDE
    return None


def read_export(value: Any, kind: str, path: str, gap: timedelta | None) -> ChatLog:
    """The export's turns: a session per conversation, oldest first."""
    conversations = value if isinstance(value, list) else [value]
    read: Callable[[Mapping[str, Any], str], Conversation] = read_chatgpt if kind == CHATGPT else read_claude
    skipped: Counter[str] = Counter()
    attachments = 0
    bad: list[str] = []
    dated: list[tuple[float, str, list[dict[str, Any]]]] = []
    for i, conv in enumerate(conversations, start=1):
        where = f"{path} conversation {i}"
        try:
            if not isinstance(conv, Mapping):
                raise ValueError(f"it is a JSON {type(conv).__name__}, not an object")
            got = read(conv, where)
            _check_records(got.records)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            skipped["malformed conversation"] += 1
            bad.append(f"skipped conversation {i}{_named(conv)}: {exc}")
            continue
        skipped.update(got.skipped)
        attachments += got.attachments
        dated.append((_start(conv, got.records), where, got.records))
    dated.sort(key=lambda d: d[0])  # stable: conversations without a time keep their order
    items: list[tuple[str, Any]] = []
    session = 0
    for _, where, records in dated:
        if not any(_is_turn(r) for r in records):  # nothing said: no session number spent on it
            skipped.update(_left_out(records))
            continue
        session += 1
        items.extend((f"{where} message {j}", {**r, "session": session}) for j, r in enumerate(records, 1))
    notes = (*bad, *unused(gap, "each conversation is a session"))
    if not items:
        return ChatLog([], "empty", dict(+skipped), notes)
    chat = from_records(items, None)
    skipped.update(chat.skipped)
    return replace(chat, format=kind, skipped=dict(+skipped), notes=notes, attachments=attachments)


def _named(conv: Any) -> str:
    """` ('Title', id)`: how a skipped conversation is named, as far as it names itself."""
    if not isinstance(conv, Mapping):
        return ""
    title = conv.get("title", conv.get("name"))
    said = [repr(title)] if isinstance(title, str) and title else []
    conv_id = ident(conv.get("conversation_id")) or ident(conv.get("id")) or ident(conv.get("uuid"))
    said += [conv_id] if conv_id else []
    return f" ({', '.join(said)})" if said else ""


def _check_records(records: list[dict[str, Any]]) -> None:
    """Every message's time readable and its text within the stream's bound on a turn, or a
    ValueError naming the first that is not: checked here, per conversation, so one such message
    skips its conversation (named) rather than refusing the whole file."""
    for j, r in enumerate(records, start=1):
        text = r.get("content")
        if isinstance(text, str) and len(text.encode("utf-8", "surrogatepass")) > MAX_TURN_BYTES:
            raise ValueError(
                f"its message {j} holds over {MAX_TURN_BYTES // 1024} KiB of text, more than a turn holds"
            )
        value = r.get("created_at")
        if value not in (None, ""):
            try:
                _parse_time(value, "")
            except ValueError:
                shown = repr(value)[:60]
                raise ValueError(
                    f"its message {j} has the time {shown}, neither ISO 8601 nor epoch seconds"
                ) from None


def _start(conv: Mapping[str, Any], records: list[dict[str, Any]]) -> float:
    """When the conversation began, as a sort key (epoch seconds; unknown sorts first)."""
    for value in (conv.get("create_time"), conv.get("created_at"), *(r["created_at"] for r in records)):
        if value not in (None, ""):
            try:
                return _utc(_parse_time(value, "")).timestamp()
            except ValueError:
                continue
    return float("-inf")


def _is_turn(record: Mapping[str, Any]) -> bool:
    body = record.get("content")
    has_text = (isinstance(body, str) and body.strip()) or (isinstance(body, list) and body)
    return record.get("role") in _TURN_ROLES and bool(has_text)


def _left_out(records: list[dict[str, Any]]) -> Counter[str]:
    """Why a conversation with no turn gave none, as `ChatLog.skipped` counts it."""
    out: Counter[str] = Counter()
    for r in records:
        role = r.get("role")
        out["system" if role == "system" else "no text" if role in _TURN_ROLES else "tool"] += 1
    return out
