"""A Claude.ai conversation (its export's `conversations.json`) as the messages the user saw.

Claude.ai keeps every message of a conversation in one flat `chat_messages` list, edits and
retries included: each message names the one it answers (`parent_message_uuid`; the first
names a root id no message has). The conversation the user saw is the chain ending at the
current leaf, walked up by those parents and reversed, as ChatGPT's `current_node` branch is
(`chatgpt.py`). The leaf is the conversation's `current_leaf_message_uuid` where it has one
(Claude.ai's own conversation view names it); the bulk export has none, so it is the latest
leaf, the message no other answers with the latest `created_at` (a tie goes to the later in
the list), which is the one the user last wrote or kept. A conversation whose messages name no
parent (older exports) is read in its listed order. Messages off the chain are counted
(`branch`).

A message's words are its `text` blocks in `content`, a paragraph apart; its `thinking` blocks
are counted as `reasoning` and its `tool_use` and `tool_result` blocks as `tool`, never speech.
An older message without blocks gives its `text`, less the placeholder Claude.ai writes there
for each tool block ("This block is not supported on your current device yet.", counted as
`tool`). Its `attachments` (with the `extracted_content` Claude.ai read from them) and `files`
(names only) are kept as the turn's attachment lines (`export_fields.with_attachments`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memdir.chatlogs.export_fields import (
    Conversation,
    file_name,
    ident,
    with_attachments,
    with_id,
)
from memdir.chatlogs.messages import _parse_time, _utc
from memdir.jsontypes import JsonValue, array, obj
from memdir.jsontypes import text as text_of

ROLES = {"human": "user", "user": "user", "assistant": "assistant"}
_TOOL_BLOCKS = {"tool_use", "tool_result"}
_PLACEHOLDER = re.compile(r"\s*```\s*\nThis block is not supported on your current device yet\.\s*\n```\s*")


def read_claude(conv: Mapping[str, JsonValue], where: str) -> Conversation:
    """The messages of the chain ending at the current leaf; a malformed one is a ValueError."""
    messages = conv.get("chat_messages")
    if not isinstance(messages, list):
        raise ValueError("it has no chat_messages list")
    for i, m in enumerate(messages, start=1):
        if not isinstance(m, Mapping):
            raise ValueError(f"its chat message {i} is a {type(m).__name__}, not a JSON object")
    conv_id = ident(conv.get("uuid"))
    out = Conversation()
    chain = current_chain(messages, conv.get("current_leaf_message_uuid"))
    out.skipped["branch"] = len(messages) - len(chain)
    for message in chain:
        text, other = _words(message, out)
        files = _files(message)
        if not text and other and not files:
            continue  # only thinking or tool blocks: counted as such, not again as a message
        text, kept = with_attachments(text, files)
        out.attachments += kept
        sender = str(message.get("sender") or "")
        record = {
            "role": ROLES.get(sender, sender or "tool"),
            "content": text,
            "created_at": message.get("created_at"),
        }
        out.records.append(with_id(record, "claude", conv_id, ident(message.get("uuid"))))
    return out


def current_chain(messages: list[Mapping[str, JsonValue]], leaf_id: Any) -> list[Mapping[str, JsonValue]]:
    """The messages from the first to the current leaf, by `parent_message_uuid`; all of them,
    in order, when none names a parent."""
    if not any(ident(m.get("parent_message_uuid")) for m in messages):
        return list(messages)
    by_id = {u: m for m in messages if (u := ident(m.get("uuid")))}
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        answered = {ident(m.get("parent_message_uuid")) for m in messages}
        leaves = [(i, m) for i, m in enumerate(messages) if ident(m.get("uuid")) not in answered]
        if not leaves:
            raise ValueError("its messages' parent_message_uuid links loop: no message ends it")
        leaf = max(leaves, key=lambda im: (_when(im[1]), im[0]))[1]
    chain: list[Mapping[str, JsonValue]] = []
    seen: set[str] = set()
    node: Mapping[str, JsonValue] | None = leaf
    while node is not None:
        uuid = ident(node.get("uuid"))
        if uuid in seen:  # a damaged export whose parents loop: read once round
            break
        chain.append(node)
        if uuid is None:
            break
        seen.add(uuid)
        parent = ident(node.get("parent_message_uuid"))
        node = by_id.get(parent) if parent else None
    return chain[::-1]


def _when(message: Mapping[str, JsonValue]) -> float:
    try:
        return _utc(_parse_time(message.get("created_at"), "")).timestamp()
    except ValueError:
        return float("-inf")


def _words(message: Mapping[str, JsonValue], out: Conversation) -> tuple[str, bool]:
    """The message's words, and whether it held reasoning or tool parts (counted in `out`)."""
    blocks = message.get("content")
    other = 0
    if isinstance(blocks, list) and blocks:
        said = []
        for block in map(obj, blocks):
            kind = block.get("type")
            if kind == "text" and (words := text_of(block.get("text")).strip()):
                said.append(words)
            elif kind == "thinking" or kind in _TOOL_BLOCKS:
                out.skipped["reasoning" if kind == "thinking" else "tool"] += 1
                other += 1
        return "\n\n".join(said), other > 0
    text = message.get("text")
    if not isinstance(text, str):
        return "", False
    text, n = _PLACEHOLDER.subn("\n\n", text)
    out.skipped["tool"] += n
    return text.strip(), n > 0


def _files(message: Mapping[str, JsonValue]) -> list[tuple[str, str]]:
    """(name, extracted text) of each attachment, then the names of the files not among them."""
    files: list[tuple[str, str]] = []
    for a in map(obj, array(message.get("attachments"))):
        name = file_name(a.get("file_name")) or "an attachment"
        extracted = a.get("extracted_content")
        files.append((name, extracted if isinstance(extracted, str) else ""))
    named = {n for n, _ in files}
    for f in map(obj, array(message.get("files"))):
        if (shown := file_name(f.get("file_name"))) and shown not in named:
            files.append((shown, ""))
            named.add(shown)
    return files
