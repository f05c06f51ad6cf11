"""The turns of a LoCoMo or REALTALK conversation, read from the file as its authors wrote it.

Both the product (a user's copy of such a file, `memdir ingest`) and benchmark loaders
(which add the questions and build a `Sample` on these turns) read conversations this way, so
it is defined once, here. A conversation is `session_N` lists of turns, each with a `dia_id`
(`D6:5`, made the locator `S6T5`: docs/conventions.md, "Source locators"), a speaker and its
text; a photo a turn shares is kept as its caption. A session's date is its
`session_N_date_time`; a REALTALK turn carries its own message date as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime

from memdir.jsontypes import JsonValue, array, obj
from memdir.stream import Turn

_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D(\d+):(\d+)")

Dates = dict[int, str | None]
"""Session number -> its date (ISO), None where the file gives none."""


def dia_locator(dia_id: str) -> str:
    """`D6:5` -> `S6T5` for a turn's own id (strict: a turn id must be clean)."""
    m = _DIA_ID.fullmatch(dia_id.strip())
    if not m:
        raise ValueError(f"turn id {dia_id!r} is not of the form D<session>:<turn>")
    return f"S{int(m.group(1))}T{int(m.group(2))}"


def locomo_date(stamp: str) -> str:
    """`"11:53 am on 23 March, 2023"` -> `"2023-03-23"`."""
    m = re.search(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", stamp)
    if not m:
        raise ValueError(f"LoCoMo session date {stamp!r} has no 'D Month, YYYY' part")
    return datetime.strptime(f"{m.group(1)} {m.group(2)} {m.group(3)}", "%d %B %Y").date().isoformat()


def realtalk_date(stamp: str) -> str:
    """`"29.12.2023, 00:51:12"` -> `"2023-12-29"`."""
    return datetime.strptime(stamp.split(",")[0].strip(), "%d.%m.%Y").date().isoformat()


def _with_caption(text: str, raw: Mapping[str, JsonValue]) -> str:
    caption = raw.get("blip_caption")
    return f"{text} [shares a photo: {caption}]".strip() if caption else text


def locomo_text(raw: Mapping[str, JsonValue]) -> str:
    return _with_caption(str(raw.get("text", "")).strip(), raw)


def realtalk_text(raw: Mapping[str, JsonValue]) -> str:
    """REALTALK keeps the message as sent in `clean_text` (its `text` may be a raw form)."""
    return _with_caption(str(raw.get("clean_text") or raw.get("text") or "").strip(), raw)


def locomo_turns(conversation: Mapping[str, JsonValue]) -> tuple[list[Turn], Dates]:
    """The turns and session dates of a LoCoMo sample's `conversation`; a turn is dated on its session."""
    return _walk(conversation, locomo_date, locomo_text, own_dates=False)


def realtalk_turns(chat: Mapping[str, JsonValue]) -> tuple[list[Turn], Dates]:
    """The turns and session dates of a REALTALK chat; a turn is dated on its own message date
    where it has one (a session's date is its start)."""
    return _walk(chat, realtalk_date, realtalk_text, own_dates=True)


def _walk(
    sessions: Mapping[str, JsonValue],
    iso_date: Callable[[str], str],
    text_of: Callable[[Mapping[str, JsonValue]], str],
    *,
    own_dates: bool,
) -> tuple[list[Turn], Dates]:
    numbers = sorted(int(m.group(1)) for k in sessions if (m := _SESSION.fullmatch(k)))
    turns: list[Turn] = []
    dates: Dates = {}
    for n in numbers:
        stamp = sessions.get(f"session_{n}_date_time")
        dates[n] = iso_date(stamp) if isinstance(stamp, str) and stamp else None
        for t in map(obj, array(sessions[f"session_{n}"])):
            own = t.get("date_time")
            when = iso_date(own) if own_dates and isinstance(own, str) and own else dates[n]
            turns.append(Turn(dia_locator(str(t["dia_id"])), str(t["speaker"]), text_of(t), when))
    return turns, dates
