"""Which of the model's facts may be keyed, and so supersede (docs/curation.md, "Keys").

A keyed fact holds one live value per (subject, attribute), and a new value strikes the old one
through (docs/conventions.md, "Keyed facts and dated supersede"). The model names the attribute freely, and a
1.5B model names it wrong: it filed "went to a LGBTQ support group yesterday" as Caroline's
`job` (issue 32), so her next real job would strike out a support-group visit. A wrong key
corrupts the store's history silently, so a key is kept only when both hold:

- the attribute is one a person holds one value of at a time: a key of the vocabulary the
  offline curator keys on and the searcher navigates by (`navigate.ATTRIBUTE_CUES`), named
  as the key itself or by its cue words alone ("occupation" is `job`, "lives in" is `home`),
  `preference` left out (a person likes many things at once; one liking never ends another);
- the value fits it: a cue word of that key stands in the value or in the few words before it
  in its sentence ("I *work* as a teacher", "I *moved* to Lisbon", "I went *vegan*"). For a job,
  bare "work" is no cue ("swamped with the kids & work"), and a role follows "as" instead
  ("I started *as* a nurse").

Anything else is filed as a distilled line: the fact is kept, only the supersede is withheld.
"""

from __future__ import annotations

from memdir.agents.offline.navigate import ATTRIBUTE_CUES
from memdir.agents.offline.text import stem
from memdir.fact_quality import words_of
from memdir.words import sentences

SINGLE_VALUED = frozenset(ATTRIBUTE_CUES) - {"preference"}
LEAD_WORDS = 3
"""How many words before the value, within its sentence, may carry the cue ("I work as a")."""
_WEAK = {"job": frozenset({stem("work")})}
"""Cue words too common to name the key alone; a question may say them, a value may not."""
_ROLE = frozenset({"job"})
"""Keys whose value is a role, which "as" introduces ("started as a nurse", "hired as an ...")."""


def canonical(attribute: str) -> str | None:
    """The single-valued key the model's attribute names, or None: the key itself, or the one
    key of `ATTRIBUTE_CUES` its words cue ("favorite food" cues `diet` and `preference`: none)."""
    name = " ".join(words_of(attribute))
    if name in SINGLE_VALUED:
        return name
    stems = {stem(w) for w in words_of(attribute)}
    named = [key for key, cues in ATTRIBUTE_CUES.items() if cues & stems]
    return named[0] if len(named) == 1 and named[0] in SINGLE_VALUED else None


def _window(value: str, text: str) -> list[str]:
    """The value's words and up to `LEAD_WORDS` before it in the sentence of `text` holding it;
    the value's own words when it stands in no sentence as written."""
    want = words_of(value)
    for sentence in sentences(text):
        words = words_of(sentence)
        for i in range(len(words) - len(want) + 1):
            if want and words[i : i + len(want)] == want:
                return words[max(0, i - LEAD_WORDS) : i + len(want)]
    return want


def fits(key: str, value: str, text: str) -> bool:
    """The value, read with the words just before it in `text`, carries a cue of `key`."""
    window = _window(value, text)
    cues = ATTRIBUTE_CUES[key] - _WEAK.get(key, frozenset())
    if cues & {stem(w) for w in window}:
        return True
    return key in _ROLE and "as" in window[:-1]


def keyed_attribute(attribute: str, value: str, text: str) -> str | None:
    """The key to file the fact under (the canonical attribute), or None to withhold the key."""
    key = canonical(attribute)
    return key if key is not None and fits(key, value, text) else None
