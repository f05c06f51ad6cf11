"""Who, what and when, mended or refused before a split fact is written (docs/curation.md,
"Truth"): the split curator's use of `memdir.fact_truth`, the rules `memdir study bench writes`
scores every curator by.

The model proposes; the turn decides. A 1.5B model filed "My sister Maria lives in Rome now." as
the speaker's home and "I don't eat meat at all." as a diet of "eat meat". So:

- the subject is whoever the value's clause speaks of (`fact_truth.actor`): the speaker, a
  relative or a person the turn names ("Maria", "Alice's mother"), the other speaker for "you";
  a clause about "she" or "they" names nobody the line could hold, and the fact is dropped;
- a denied value keeps its denial when the denying words stand just before it in the turn
  ("don't eat meat", still a span of the turn), or is dropped;
- a day is the turn's own, or one the turn names (`fact_dates`); any other is cleared;
- a plan that was already done is filed as an event.
"""

from __future__ import annotations

from collections.abc import Sequence

from memdir.fact_truth import (
    RELATIVES,
    Actor,
    Found,
    content,
    done_not_planned,
    tokens_of,
)
from memdir.stream import Turn

DENIAL_REACH = 3
"""How many of the turn's words before a denied value may be taken into it with the denial."""


def subject_of(who: Actor, turn: Turn, speakers: Sequence[str], value: str = "") -> str | None:
    """The line's subject for the clause's actor, or None when the clause names nobody a line
    can hold (a "she" or "they" with no name). A value that opens with a relative is the
    speaker's ("my friends, family and mentors" -> "Caroline | relation: family")."""
    if who.who == "named" and (tokens_of(value) or [""])[0].lower() in RELATIVES | {"family"}:
        return turn.speaker
    if who.who == "speaker":
        return turn.speaker
    if who.who == "addressee":
        others = [s for s in speakers if s != turn.speaker]
        return others[0] if len(others) == 1 else None
    if who.who == "named":
        names = [w for w in who.words if w.lower() not in RELATIVES]
        if names:
            return names[-1]
        return f"{turn.speaker}'s {who.words[0]}"
    return None


def with_denial(found: Found, value: str) -> str | None:
    """The value grown left to take in the words that deny it ("don't eat meat"), when they
    stand within `DENIAL_REACH` words before it in its clause; None when they stand further."""
    words = tokens_of(value)
    lead = next((i for i, w in enumerate(words) if content(w)), 0)  # "a teacher": "a" before the match
    before = found.tokens[: max(0, found.start - lead)]
    for k in range(1, min(DENIAL_REACH, len(before)) + 1):
        grown = " ".join([*before[-k:], value])
        head = before[-k].lower().replace("’", "'")
        if head in {",", ";", ":"}:
            return None
        if head in {"not", "never", "no", "quit", "stopped"} or head.endswith("n't") or head == "cannot":
            return grown
    return None


def people_of(turn: Turn) -> list[str]:
    """The people a turn relates to its speaker or names after a relative ("my sister Maria" ->
    "Maria", "my mother" -> "Alice's mother"), for the schema's subjects."""
    toks = tokens_of(turn.text)
    out: list[str] = []
    for i, t in enumerate(toks[:-1]):
        if t.lower() not in ("my", "our"):
            continue
        for j in range(i + 1, min(len(toks), i + 4)):
            if toks[j].lower() in RELATIVES:
                name = toks[j + 1] if j + 1 < len(toks) and toks[j + 1][:1].isupper() else None
                out.append(name if name and name != "I" else f"{turn.speaker}'s {toks[j].lower()}")
                break
            if not toks[j].islower():
                break
    return list(dict.fromkeys(out))


def fixed_kind(kind: str, found: Found, value: str) -> str:
    """`event` for a plan already done, else the kind as proposed."""
    return "event" if kind == "plan" and done_not_planned(found, value) else kind


__all__ = ["fixed_kind", "people_of", "subject_of", "with_denial"]
