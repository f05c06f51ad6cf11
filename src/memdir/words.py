"""Words, as every lexical rule of memdir counts them: a token pattern, stopwords and a crude
stemmer. The offline baselines (agents/offline), the fact-quality rules (`fact_quality.py`) and
the write-quality benchmark share them, so "a content word" means one thing everywhere.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves i'm it's that's what's did does s t don
    dont like also really get got go going one thing things much many lot well yeah oh know think
    kind said says tell told
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_SUFFIXES = ("ences", "ence", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly")


def stem(word: str) -> str:
    w = word.lower().strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    for suf in _SUFFIXES:
        if len(w) - len(suf) >= 4 and w.endswith(suf):
            w = w[: -len(suf)] + ("y" if suf == "ies" else "")
            break
    if len(w) >= 5 and w[-1] == w[-2] and w[-1] not in "aeiousl":
        w = w[:-1]  # preferr -> prefer, shopp -> shop
    return w


def terms(text: str) -> list[str]:
    """Content-word stems of `text`, in order, stopwords dropped."""
    return [stem(w) for w in WORD.findall(text) if w.lower() not in STOPWORDS and len(w) > 1]
