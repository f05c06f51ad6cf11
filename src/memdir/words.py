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


# Words a period may follow without ending a sentence: titles before a name ("Dr. Costa",
# "St. Mary's"), and Latin abbreviations ("e.g.", "i.e.", "etc."). A single capital letter other
# than "I" (an initial: "J. K. Rowling") is one too. "No." is left out: "I said no." ends.
ABBREVIATIONS = frozenset(
    """
    dr mr mrs ms mx st jr sr prof rev capt lt sgt mt ft ave blvd rd vol vs etc e.g i.e approx dept
    inc ltd corp jan feb apr jun jul aug sep sept oct nov dec
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_SENTENCE_END = re.compile(r"[.!?]+(?=[\s\"')\]]|$)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
# How far back the word before a period is looked for: longer than any abbreviation, so a longer
# run, cut here, is still none. Searching from the text's start made a 250 KB turn of 10,000
# sentences take minutes (each period rescanned the text before it).
_LOOKBACK = 16


def sentence_ends(text: str) -> list[int]:
    """Offsets just past each sentence's closing mark, the last sentence's end included: a run of
    `.`, `!` or `?` before a space, a quote or the end, except a single period after an
    abbreviation or an initial, which does not end a sentence ("Dr. Costa", "J. K. Rowling")."""
    ends: list[int] = []
    for m in _SENTENCE_END.finditer(text):
        if m.group() == ".":
            before = _WORD_BEFORE.search(text, max(0, m.start() - _LOOKBACK), m.start())
            word = before.group(1) if before else ""
            if word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper() and word != "I"):
                continue
        ends.append(m.end())
    if not ends or text[ends[-1] :].strip():
        ends.append(len(text))
    return ends


def sentences(text: str) -> list[str]:
    """`text` cut into sentences, abbreviations and initials kept inside theirs; the one rule
    every offline reader splits sentences by."""
    out: list[str] = []
    start = 0
    for end in sentence_ends(text):
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out
