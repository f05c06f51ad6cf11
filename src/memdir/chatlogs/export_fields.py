"""What the ChatGPT and Claude.ai readers (`chatgpt.py`, `claude.py`) share: an export's
optional parts read leniently, a message's ids, the private-use markers ChatGPT writes into its
text, and the lines an attachment is kept as (docs/ingest.md, "What an export's fields mean").

An attachment becomes lines of its turn, after the message's words: `[attached file NAME]`, then
the text the service extracted from it, when it kept any. That is the store's way with what a
turn shares beside its words (a LoCoMo turn's photo is kept as `[shares a photo: CAPTION]` in
its text, `dialogues.py`), and it keeps the turn one turn with one locator. The extracted text
is cut where the turn would pass the stream's bound on a turn (MAX_TURN_BYTES), and the cut is
said on the line, since a turn past it refuses the whole file.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memdir.chatlogs.messages import SOURCE_ID
from memdir.jsontypes import JsonObject
from memdir.stream import MAX_TURN_BYTES

# ChatGPT marks citations and entities with private-use code points: a group `\ue200...\ue201`
# (`\ue200cite\ue202turn0search1\ue201`, `\ue200filecite\ue202turn0file0\ue201`) stands for a
# source and is dropped whole; `\ue203...\ue204` brackets the words a source covers, which stay;
# a bare `\ue202turn0search3` anchor is dropped. The group is bounded, so an unclosed one drops
# only its marks, never the words after it.
_GROUP = re.compile("\ue200[^\ue200\ue201]{0,200}\ue201")
_ANCHOR = re.compile("\ue202turn\\d+[a-z]+\\d+(?:\ue202L\\d+(?:-L\\d+)?)?")
_MARKS = re.compile("[\ue200-\ue206]")
_LONGEST_NAME = 200  # characters of a file's name shown on its line
_ROOM = 1024  # bytes kept free for the attachment's own line and the note of a cut


def ident(value: Any) -> str | None:
    """An export's id as text (ids are strings; a number is taken as written), or None."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text or None


def with_id(record: JsonObject, kind: str, conversation: str | None, message: str | None) -> JsonObject:
    """`record` carrying its message's place as the export names it, when it names both ids."""
    if conversation and message:
        record[SOURCE_ID] = f"{kind}:{conversation}/{message}"
    return record


def strip_markers(text: str) -> str:
    """`text` without ChatGPT's private-use citation and entity marks."""
    if not _MARKS.search(text):
        return text
    return _MARKS.sub("", _ANCHOR.sub("", _GROUP.sub("", text)))


def with_attachments(text: str, files: list[tuple[str, str]]) -> tuple[str, int]:
    """`text` followed by a line per attached file (name, extracted text or ""), and how many
    were kept; a file's text is cut where the turn would pass MAX_TURN_BYTES."""
    if not files:
        return text, 0
    parts = [text.strip()] if text.strip() else []
    used = len(text.encode("utf-8", "surrogatepass"))
    for n, (name, extracted) in enumerate(files):
        budget = MAX_TURN_BYTES - used - _ROOM
        if budget < _ROOM:  # not even a name fits: say how many are not listed
            parts.append(f"[{len(files) - n} more attached file(s) not listed, past a turn's bound]")
            return "\n\n".join(parts), n
        body = extracted.strip()
        raw = body.encode("utf-8", "surrogatepass")
        if len(raw) > budget:
            kept = raw[:budget].decode("utf-8", "ignore")
            body = f"{kept}\n[cut: {len(body) - len(kept):,} more characters of {name}, past a turn's bound]"
        block = f"[attached file {name}]" + (f"\n{body}" if body else "")
        parts.append(block)
        used += len(block.encode("utf-8", "surrogatepass")) + 2
    return "\n\n".join(parts), len(files)


def file_name(value: Any) -> str | None:
    """A file's name as an attachment line shows it: one line, or None without one."""
    if not isinstance(value, str) or not value.strip():
        return None
    name = " ".join(value.split())
    return name if len(name) <= _LONGEST_NAME else f"{name[: _LONGEST_NAME - 3]}..."


@dataclass
class Conversation:
    """One conversation as a reader made it: its message records (`role`, `content`,
    `created_at`, the source id), what it left out and why, and the attachments it kept."""

    records: list[JsonObject] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    attachments: int = 0
