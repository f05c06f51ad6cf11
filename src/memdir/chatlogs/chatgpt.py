"""A ChatGPT conversation (`conversations.json`) as the messages the user saw.

A conversation is a tree (`mapping`: id -> {message, parent, children}): editing a message or
regenerating a reply starts a branch. The conversation as the user last saw it is the branch
ending at `current_node`, read by following `parent` links up to the root and reversing; the
messages of abandoned branches are not what was said, and are counted (`branch`).

On that branch, only what was said is speech (docs/ingest.md, "What an export's fields mean"):
a message whose `content.content_type` is `text` or `multimodal_text` (its string parts, and a
voice part's `audio_transcription`), addressed to everyone (`recipient` absent or `all`). A
reasoning model's `thoughts`, its `reasoning_recap` ("Thought for 12s") and the preamble it
shows while it works (`metadata.is_thinking_preamble_message`) are its thinking, counted as
`reasoning`; a message to a tool (`recipient` such as `browser.search` or `python`, whose
`code` content holds the call, `{"query": ...}`) and what a tool sends back (author role
`tool`: `execution_output`, `tether_browsing_display`, `tether_quote`, ...) are counted as
`tool`. What ChatGPT hides from its own view of the chat (the custom instructions it stores as
messages) is counted as `hidden`. Private-use citation marks are stripped from the words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memdir.chatlogs.export_fields import (
    Conversation,
    file_name,
    ident,
    strip_markers,
    with_attachments,
    with_id,
)
from memdir.jsontypes import JsonValue, array, obj

ROLES = {"user": "user", "assistant": "assistant", "system": "system"}
_SPEECH = {"text", "multimodal_text"}
_REASONING = {"thoughts", "reasoning_recap"}
# ChatGPT keeps the user's custom instructions as messages of these kinds, hidden from the chat.
_HIDDEN_KINDS = {"user_editable_context", "model_editable_context"}


def read_chatgpt(conv: Mapping[str, JsonValue], where: str) -> Conversation:
    """The messages of the branch the user last saw; a malformed tree is a ValueError."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, Mapping):
        raise ValueError("it has no mapping of message nodes")
    conv_id = ident(conv.get("conversation_id")) or ident(conv.get("id"))
    out = Conversation()
    branch = current_branch(mapping, conv.get("current_node"), where)
    on_branch = set(branch)
    out.skipped["branch"] = sum(
        1 for k, v in mapping.items() if k not in on_branch and obj(obj(v).get("message"))
    )
    for node_id in branch:
        message = obj(obj(mapping[node_id]).get("message"))
        if not message:
            continue  # the tree's root holds no message
        why = _not_speech(message)
        if why:
            out.skipped[why] += 1
            continue
        role = str(obj(message.get("author")).get("role") or "")
        files = [
            (n, "")
            for a in array(obj(message.get("metadata")).get("attachments"))
            if (n := file_name(obj(a).get("name")))
        ]
        text, kept = with_attachments(strip_markers(_words(obj(message.get("content")))), files)
        out.attachments += kept
        when = message.get("create_time") or conv.get("create_time")
        record = {"role": ROLES.get(role, role or "tool"), "content": text, "created_at": when}
        out.records.append(with_id(record, "chatgpt", conv_id, ident(message.get("id")) or node_id))
    return out


def _not_speech(message: Mapping[str, JsonValue]) -> str | None:
    """Why `message` is not something said (`hidden`, `reasoning`, `tool`), or None."""
    content, meta = obj(message.get("content")), obj(message.get("metadata"))
    kind = content.get("content_type")
    if meta.get("is_visually_hidden_from_conversation") or kind in _HIDDEN_KINDS:
        return "hidden"
    if kind in _REASONING or meta.get("is_thinking_preamble_message"):
        return "reasoning"
    role = obj(message.get("author")).get("role")
    recipient = message.get("recipient")
    if role == "tool" or recipient not in (None, "", "all"):
        return "tool"
    if kind is not None and kind not in _SPEECH:
        return "tool"  # code, execution_output, tether_quote, system_error: tool traffic
    return None


def _words(content: Mapping[str, JsonValue]) -> str:
    parts, raw = content.get("parts"), content.get("text")
    if not isinstance(parts, list):
        return raw if isinstance(raw, str) else ""
    said = []
    for p in parts:  # images hold no words; a voice message's transcription does
        if isinstance(p, str):
            said.append(p)
        elif isinstance(p, Mapping) and p.get("content_type") == "audio_transcription":
            said.append(str(p.get("text") or ""))
    return "\n\n".join(s for s in said if s.strip())


def current_branch(mapping: Mapping[str, JsonValue], current: Any, where: str) -> list[str]:
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
            node = obj(mapping[node]).get("parent")
        return path[::-1]
    roots = [k for k, v in mapping.items() if not (isinstance(v, Mapping) and v.get("parent") in mapping)]
    if not roots:
        raise ValueError("its mapping has no root node")
    node = roots[0]
    while isinstance(node, str) and node in mapping and node not in seen:
        path.append(node)
        seen.add(node)
        children = array(obj(mapping[node]).get("children"))
        node = children[0] if children else None
    return path
