"""Who a turn's speaker is, as the offline curator files people (docs/conventions.md, "People").

A chat log names its participants by role unless it says more: an OpenAI message without a
`name` is spoken by `user` or `assistant`. Benchmark data names both speakers, so this matters
for what users bring:
- the assistant is never a person: it states no fact about itself worth keeping, and a folder
  `people/assistant` would answer "What does Alice eat?" with "Nice to meet you, Alice.";
- the user is a person, filed under their name once the log gives it: a message `name` (then it
  is the turn's speaker already, `chatlogs/messages.py`), or a self-introduction in the user's own
  turns ("I'm Alice", "my name is Alice", "call me Alice", "Alice here"). "I'm tired" is not a
  name: a name is capitalized, stands at the end of its clause, and is no common word.
"""

from __future__ import annotations

import re

from memdir.words import STOPWORDS

ASSISTANT = "assistant"
USER = "user"
USER_MARK = " (the user)"
"""How the people index marks the user's folder, so later chunks (and later `add` calls) that
say only `user` go to the same person."""
_NAME = r"(?P<name>[A-Z][a-z]+(?:[ -][A-Z][a-z]+)?)"
_AFTER = r"(?=\s*(?:[.,!;:)]|$|\s(?:and|here|by the way|btw|from|nice|speaking)\b))"
INTRODUCTIONS = tuple(
    re.compile(rx)
    for rx in (
        rf"\b[Ii](?:'m|’m| am|m) {_NAME}{_AFTER}",
        rf"\b[Mm]y name(?:'s|’s| is) {_NAME}{_AFTER}",
        rf"\b[Cc]all me {_NAME}{_AFTER}",
        rf"^(?:(?:[Hh]i|[Hh]ey|[Hh]ello)[,!]?\s+)?{_NAME} here\b",
    )
)
# Capitalized words that follow "I'm" and are not names: states, nationalities, faiths.
NOT_NAMES = frozenset(
    """
    sorry fine good great okay ok tired happy glad sure back home done ready excited busy new sad
    free alright afraid hungry sick late bored thrilled proud lucky grateful thankful curious
    interested available here there well cool confused stressed worried nervous scared exhausted
    american canadian british english irish scottish welsh french german italian spanish mexican
    chinese japanese korean indian australian brazilian russian dutch swedish polish greek turkish
    vietnamese filipino african asian european latina latino jewish muslim christian catholic
    buddhist hindu vegan vegetarian single married divorced retired pregnant gay straight
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def is_assistant(speaker: str) -> bool:
    return speaker.strip().lower() == ASSISTANT


def is_user(speaker: str) -> bool:
    """The speaker is the user's role, not a name."""
    return speaker.strip().lower() == USER


def _a_name(name: str) -> bool:
    parts = re.split(r"[ -]", name.lower())
    return all(
        p not in STOPWORDS and p not in NOT_NAMES and not p.endswith(("ing", "ed", "ly")) for p in parts
    )


def introduced_name(text: str) -> str | None:
    """The name a turn gives its speaker ("Hi, I'm Alice." gives "Alice"), or None."""
    for rx in INTRODUCTIONS:
        for m in rx.finditer(text):
            if _a_name(m["name"]):
                return m["name"]
    return None


def user_in_index(lines: list[str]) -> str | None:
    """The user's name as the people index records it (`- alice/: Alice (the user)`), or None."""
    for line in lines:
        m = re.match(rf"^- [^/\s]+/: (?P<name>.+?){re.escape(USER_MARK)}$", line)
        if m:
            return m["name"]
    return None
