"""What a written fact must be to be worth keeping, as one set of rules.

A fact line is kept only when it says something and the turns it cites say it too:
- its value is not junk (`junk_reason`): not empty, not a pronoun or a demonstrative standing for
  something the line does not name ("it", "this photo"; in a value cut from a turn, anywhere in
  it: "the message it sends", "the taste of these"), not an anaphoric definite description of a
  single common noun ("the plot", "the idea": which plot?), not stopwords only ("a lot about
  them", "bothhh": chat elongations are read as the word they stretch), not a fragment cut
  mid-clause ("about this game is that it has", "how it shows");
- its content words occur in the turns it cites (`support`).

The split curator validates a model's facts with these rules before anything is written
(agents/split), the offline curator files no keyed value that fails them, and the write-quality
benchmark (`memdir study bench writes`, docs/metrics.md) scores stores with the same functions, so a
curator is judged by the rule it was built to keep. Content words are `memdir.words.terms`
(stopwords dropped, crude stems), the one definition the offline baselines use.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from memdir.words import WORD, terms

# A value whose first word is one of these stands for something it does not name.
PRONOUNS = frozenset(
    """
    it its it's itself he him his himself she her hers herself they them their theirs themselves
    we us our ours ourselves you your yours yourself yourselves i me my mine myself one ones
    someone somebody something anyone anybody anything everyone everybody everything nobody
    nothing nowhere somewhere stuff
    """.split()  # noqa: SIM905 - a word list reads better as text
)
DEMONSTRATIVES = frozenset("this that these those here there such".split())  # noqa: SIM905
# A speaker speaking of themself: a statement holding one of these is about its speaker.
FIRST_PERSON = frozenset(["i", "i'm", "im", "i've", "i'd", "i'll", "my", "me", "mine", "myself"])
# Inside a value cut from a turn, these still point outside it ("the message it sends"); first-
# and second-person words and "that" (a relative: "stories that tackle ...") do not.
_REFERRING = frozenset(
    "it its it's itself he him his himself she her hers herself they them their theirs themselves".split()  # noqa: SIM905
)
_DEICTIC = frozenset("this these those here there".split())  # noqa: SIM905
_ELONGATION = re.compile(r"([a-z])\1{2,}")
# Words a value cannot start with and stay a phrase of its own (prepositions, conjunctions,
# relatives, auxiliaries) or end with (it was cut before what it needed).
_OPEN = frozenset(
    """
    about above across after against along among around as at because before behind below beside
    between beyond but by during except for from how if in into like near of off on onto or out over
    since so than that though through till to toward towards under unless until upon via when
    whenever where whereas whether which while who whom whose why with within without and nor yet
    is are was were be been being am has have had do does did will would shall should can could
    may might must
    """.split()  # noqa: SIM905
)
_CLOSE = _OPEN | frozenset("a an the my your his her our their its very really just".split())  # noqa: SIM905

# The share of a claim's content words its cited turns must hold for the claim to be supported
# (docs/metrics.md, "Write quality"); validation of a model's copied spans asks for all of them.
SUPPORTED = 0.8
STRICT = 1.0


def words_of(text: str) -> list[str]:
    """The words of `text`, lower case, in order (stopwords kept)."""
    return [w.lower().strip("'-") for w in WORD.findall(text)]


def junk_reason(value: str, *, whole: bool = False) -> str | None:
    """Why `value` says nothing on its own (`empty`, `pronoun`, `demonstrative`, `anaphoric`,
    `stopwords only`, `fragment`), or None when it is a value worth keeping.

    `whole`: the value is a whole line as its writer ended it (a turn kept verbatim, an event
    sentence), not a span cut from one, so a last word such as "it" in "keep going for it" is
    no sign of a cut and only the opening is tested for a fragment (the write-quality
    benchmark judges non-keyed lines so)."""
    words = [_ELONGATION.sub(r"\1", w) for w in words_of(value) if w]
    if not words:
        return "empty"
    first, last = words[0], words[-1]
    if first in PRONOUNS or (first in {"a", "an", "the"} and len(words) > 1 and words[1] in PRONOUNS):
        return "pronoun"
    if first in DEMONSTRATIVES:
        return "demonstrative"
    if not terms(" ".join(words)):
        return "stopwords only"
    if first in _OPEN or (not whole and (last in _CLOSE or last in PRONOUNS) and not _named_last(value)):
        return "fragment"
    if not whole and _REFERRING & set(words[1:]):
        return "pronoun"
    if not whole and _DEICTIC & set(words[1:]):
        return "demonstrative"
    if not whole and _anaphoric(value):
        return "anaphoric"
    return None


def _named_last(value: str) -> bool:
    """The value ends in a capitalized word after its first ("Lisbon in May", "dinner with
    Will"): a name or a month, not the modal or the function word it is spelt like."""
    raw = re.findall(r"[\w'’]+", value)
    return len(raw) > 1 and raw[-1][:1].isupper() and raw[-1] != "I"


def _anaphoric(value: str) -> bool:
    """The value is "the" and one lower-case noun ("the plot", "the idea"), which points back to
    something it does not name; "the Knicks", a name, does not."""
    found = WORD.findall(value)
    return len(found) == 2 and found[0].lower() == "the" and found[1].islower()


def support(claim: str, sources: Iterable[str]) -> float:
    """The share of `claim`'s content words (stems) that occur in `sources`; 1.0 for a claim with
    no content word, which `junk_reason` refuses on its own."""
    want = set(terms(claim))
    if not want:
        return 1.0
    have: set[str] = set()
    for text in sources:
        have.update(terms(text))
    return len(want & have) / len(want)


def is_supported(claim: str, sources: Iterable[str], threshold: float = SUPPORTED) -> bool:
    return support(claim, sources) >= threshold


def content_f1(candidate: str, reference: str) -> float:
    """Token F1 over content words (stems, stopwords dropped, counted as multisets): how much of
    a reference fact a written line carries, and how little else."""
    a, b = Counter(terms(candidate)), Counter(terms(reference))
    common = sum((a & b).values())
    if common == 0:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def occurs(span: str, text: str) -> bool:
    """Whether `span` stands in `text` as written, up to case, spacing and punctuation: the test
    a value the model copied from a turn must pass."""
    norm = " ".join(words_of(span))
    return bool(norm) and re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", " ".join(words_of(text))) is not None
