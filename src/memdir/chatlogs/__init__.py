"""Chat logs as users have them, made a stream of turns: the product's reader (`memdir ingest
FILE`, `Memory.add`), which benchmark loaders share for LoCoMo and REALTALK turns.

`read.py` detects a file's shape and reads it; `messages.py` derives locators for messages and
records that carry none; `exports.py` reads ChatGPT and Claude.ai exports (a session per
conversation, a damaged one skipped and named), `chatgpt.py` and `claude.py` each service's
conversation as the user saw it (the current branch; speech, never reasoning or tool traffic;
attachments as lines, `export_fields.py`), and `archive.py` the conversations.json inside the
.zip they are downloaded as; `dialogues.py` reads
the turns of a LoCoMo or REALTALK conversation. This room imports only memdir's leaves
(`stream`, `conventions`), so anything may use it.
"""

from __future__ import annotations

from memdir.chatlogs.messages import EXPECTED, ChatLog, LeftOutWarning, parse_gap
from memdir.chatlogs.read import FORMATS, chat_from_records, load_any, read_chat, turns_from_records

__all__ = [
    "EXPECTED",
    "FORMATS",
    "ChatLog",
    "LeftOutWarning",
    "chat_from_records",
    "load_any",
    "parse_gap",
    "read_chat",
    "turns_from_records",
]
