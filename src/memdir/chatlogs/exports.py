"""The two chat exports users have most: ChatGPT's `conversations.json` and Claude.ai's export,
made messages that `messages.py` turns into a stream like any other log.

Each conversation becomes one session, numbered in order of its creation (a ChatGPT export lists
the newest first), so `S3T2` is the second message of the third conversation. Roles stay apart:
the person is `user` and the model `assistant` (docs/conventions.md, "People"), and each message's
timestamp gives its turn a date. What is not conversation is left out and counted: system and
tool messages, messages with no text, and what ChatGPT hides from its own view of the chat (the
custom instructions it stores as messages).

A ChatGPT conversation is a tree (`mapping`: id -> {message, parent, children}): editing a message
or regenerating a reply starts a branch. The conversation as the user last saw it is the branch
ending at `current_node`, read by following `parent` links up to the root and reversing; the
abandoned branches are not what was said.

Both exports name each conversation and message by an id (ChatGPT: the conversation's
`conversation_id` or `id` and the message's `id`, else its node's; Claude.ai: their `uuid`s).
Each turn keeps its pair (`ChatLog.ids`, `chatgpt:<conversation>/<message>`): the ingest ledger
knows a message by it in a later export, wherever it stands and whatever its words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from memdir.chatlogs.messages import SOURCE_ID, ChatLog, _parse_time, _utc, from_records, unused

CHATGPT = "chatgpt-export"
CLAUDE = "claude-export"
_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}
# ChatGPT keeps the user's custom instructions as messages of these kinds, hidden from the chat.
_HIDDEN_KINDS = {"user_editable_context", "model_editable_context"}


def export_kind(value: Any) -> str | None:
    """`chatgpt-export`, `claude-export`, or None: a list of conversations, or one."""
    first = value[0] if isinstance(value, list) and value else value
    if not isinstance(first, Mapping):
        return None
    if isinstance(first.get("mapping"), Mapping):
        return CHATGPT
    if isinstance(first.get("chat_messages"), list):
        return CLAUDE
    return None


def read_export(value: Any, kind: str, path: str, gap: timedelta | None) -> ChatLog:
    """The export's turns: a session per conversation, oldest first."""
    conversations = value if isinstance(value, list) else [value]
    read = _chatgpt if kind == CHATGPT else _claude
    skipped: Counter[str] = Counter()
    dated: list[tuple[float, str, list[dict[str, Any]]]] = []
    for i, conv in enumerate(conversations, start=1):
        where = f"{path} conversation {i}"
        if not isinstance(conv, Mapping):
            raise ValueError(f"{where}: a conversation is a JSON object, not {type(conv).__name__}")
        records, hidden = read(conv, where)
        skipped["hidden"] += hidden
        dated.append((_start(conv, records), where, records))
    dated.sort(key=lambda d: d[0])  # stable: conversations without a time keep their order
    items: list[tuple[str, Any]] = []
    session = 0
    for _, where, records in dated:
        if not any(_is_turn(r) for r in records):  # nothing said: no session number spent on it
            skipped.update(_left_out(records))
            continue
        session += 1
        items.extend((f"{where} message {j}", {**r, "session": session}) for j, r in enumerate(records, 1))
    notes = unused(gap, "each conversation is a session")
    if not items:
        return ChatLog([], "empty", dict(+skipped), notes)
    chat = from_records(items, None)
    skipped.update(chat.skipped)
    return replace(chat, format=kind, skipped=dict(+skipped), notes=notes)


def _chatgpt(conv: Mapping[str, Any], where: str) -> tuple[list[dict[str, Any]], int]:
    mapping = conv["mapping"]
    conv_id = _id(conv.get("conversation_id")) or _id(conv.get("id"))
    records: list[dict[str, Any]] = []
    hidden = 0
    for node_id in _current_branch(mapping, conv.get("current_node"), where):
        message = _obj(_obj(mapping[node_id]).get("message"))
        if not message:
            continue  # the tree's root holds no message
        content, meta = _obj(message.get("content")), _obj(message.get("metadata"))
        if meta.get("is_visually_hidden_from_conversation") or content.get("content_type") in _HIDDEN_KINDS:
            hidden += 1
            continue
        role = str(_obj(message.get("author")).get("role") or "")
        parts, raw = content.get("parts"), content.get("text")
        if isinstance(parts, list):
            text = "\n".join(p for p in parts if isinstance(p, str))  # images hold no words
        else:
            text = raw if isinstance(raw, str) else ""
        when = message.get("create_time") or conv.get("create_time")
        record = {"role": _ROLES.get(role, role or "tool"), "content": text, "created_at": when}
        records.append(_with_id(record, "chatgpt", conv_id, _id(message.get("id")) or node_id))
    return records, hidden


def _obj(value: Any) -> Mapping[str, Any]:
    """`value` if it is a JSON object, else an empty one (an export's optional parts)."""
    return value if isinstance(value, Mapping) else {}


def _current_branch(mapping: Mapping[str, Any], current: Any, where: str) -> list[str]:
    """Node ids from the root to `current_node`; without one, the branch of first children.
    A node met twice (a cycle) ends the walk; the nodes met are kept in a set, since a list's
    scan made a 100,000-node chain quadratic (minutes, where the set takes a fraction of a second:
    benchmarks/export_branch_walk.py)."""
    path: list[str] = []
    seen: set[str] = set()
    if isinstance(current, str) and current in mapping:
        node: Any = current
        while isinstance(node, str) and node in mapping and node not in seen:  # a cycle ends it
            path.append(node)
            seen.add(node)
            parent = mapping[node].get("parent") if isinstance(mapping[node], Mapping) else None
            node = parent
        return path[::-1]
    roots = [k for k, v in mapping.items() if not (isinstance(v, Mapping) and v.get("parent") in mapping)]
    if not roots:
        raise ValueError(f"{where}: a ChatGPT conversation whose mapping has no root node")
    node = roots[0]
    while isinstance(node, str) and node in mapping and node not in seen:
        path.append(node)
        seen.add(node)
        children = mapping[node].get("children") if isinstance(mapping[node], Mapping) else None
        node = children[0] if isinstance(children, list) and children else None
    return path


def _claude(conv: Mapping[str, Any], where: str) -> tuple[list[dict[str, Any]], int]:
    conv_id = _id(conv.get("uuid"))
    records = []
    for message in conv["chat_messages"]:
        if not isinstance(message, Mapping):
            raise ValueError(f"{where}: a chat message is a JSON object, not {type(message).__name__}")
        sender = str(message.get("sender") or "")
        text = message.get("text")
        body = text if isinstance(text, str) and text.strip() else message.get("content")
        record = {
            "role": _ROLES.get(sender, sender or "tool"),
            "content": body,
            "created_at": message.get("created_at"),
        }
        records.append(_with_id(record, "claude", conv_id, _id(message.get("uuid"))))
    return records, 0


def _id(value: Any) -> str | None:
    """An export's id as text (ids are strings; a number is taken as written), or None."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text or None


def _with_id(
    record: dict[str, Any], kind: str, conversation: str | None, message: str | None
) -> dict[str, Any]:
    """`record` carrying its message's place as the export names it, when it names both ids."""
    if conversation and message:
        record[SOURCE_ID] = f"{kind}:{conversation}/{message}"
    return record


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
    return record.get("role") in ("user", "assistant") and bool(has_text)


def _left_out(records: list[dict[str, Any]]) -> Counter[str]:
    """Why a conversation with no turn gave none, as `ChatLog.skipped` counts it."""
    out: Counter[str] = Counter()
    for r in records:
        out["system" if r.get("role") == "system" else "no text" if r.get("role") in _ROLES else "tool"] += 1
    return out
