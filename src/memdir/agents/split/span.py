"""A value the model retold or ran on, found again as its turn words it.

Asked for facts about people, the 1.5B model narrates: the turn "I just took my fam camping in
the mountains last week" comes back as "took her fam camping in the mountains last week,
exploring nature, roasted marshmallows" (the tail from the next turn), and "I ran a charity
race" as "Melanie ran a charity race". The fact is right, but the value is no longer a span of
a turn, and "her" makes it a pronoun value (`fact_quality.junk_reason`), so validation dropped
it. Here each third-person word may stand for its first-person counterpart, a word for
another of its stem ("restored" for "restore"), a leading
speaker's name may be left out, and a value that runs on past its turn is taken as far as the
turn bears it out (its longest run of `MIN_WORDS` words or more that the turn has). What is
kept is the turn's own words, found by a pattern, so the value still stands in its turn as
written and every other check still applies to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memdir.fact_quality import words_of
from memdir.stream import Turn
from memdir.words import stem

# A third-person word and the first-person words it may stand for in its speaker's own turn.
_AS_SPEAKER: dict[str, tuple[str, ...]] = {
    "she": ("i",),
    "he": ("i",),
    "her": ("my", "me"),
    "his": ("my",),
    "him": ("me",),
    "hers": ("mine",),
    "herself": ("myself",),
    "himself": ("myself",),
    "she's": ("i'm", "i've"),
    "he's": ("i'm", "i've"),
    "she'd": ("i'd",),
    "he'd": ("i'd",),
    "she'll": ("i'll",),
    "he'll": ("i'll",),
    "has": ("have",),
    "is": ("am",),
}
# The shortest run of a value's words taken as what the model meant to copy: with fewer words
# a run-on value's head says too little to be the fact ("took my fam").
MIN_WORDS = 4
_ROOT = 4  # the shortest stem a word is matched by (`words.stem` keeps 4 letters at least)


def _word(w: str) -> str:
    """`w`, its first-person counterparts, and, for a word with an ending, any word of its stem
    ("restored" for the turn's "restore": the model retells in the past what a turn says)."""
    options = [re.escape(o).replace("'", "['’]") for o in (w, *_AS_SPEAKER.get(w, ()))]
    root = stem(w)
    if root != w and len(root) >= _ROOT:
        options.append(re.escape(root) + r"\w*")
    return "(?:" + "|".join(options) + ")"


def found_in_turn(value: str, turns: Sequence[Turn]) -> tuple[str, Turn] | None:
    """The longest span of one of `turns` (the first turn that has it, in the order given) that
    `value`, or a run of at least `MIN_WORDS` of its words, words: a third-person word read as
    its first-person counterpart, a leading speaker's name left out; None when there is none."""
    words = [w for w in words_of(value) if w]
    if words and words[0] in {(words_of(t.speaker) or [""])[0] for t in turns}:
        name, words = words[0], words[1:]
        turns = [t for t in turns if (words_of(t.speaker) or [""])[0] == name]  # retold, by them
    for size in range(len(words), MIN_WORDS - 1, -1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            pattern = re.compile(r"(?<!\w)" + r"\W+".join(map(_word, run)) + r"(?!\w)", re.IGNORECASE)
            for turn in turns:
                m = pattern.search(turn.text)
                if m is not None:
                    return m.group(0), turn
    return None
