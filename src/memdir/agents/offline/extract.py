"""Keyed facts the offline curator reads off a turn: first-person statements ("I live in Boston",
"I now prefer tea", "I went vegan") that name an attribute and its one current value. A move is
one even when the speaker says it for their household ("we moved to Porto", "we're settling into
the new flat in Porto"): it updates the speaker's home, which the earlier value must not outlive;
another's move ("my sister moved to Rome") is not the speaker's and states nothing here.

Kept apart from the curator's filing so what counts as a keyed fact has one home, which the
filer (and any other curation) calls rather than re-deriving.

A keyed fact supersedes the subject's earlier value of its attribute (docs/conventions.md), so
a wrong one does double harm: it says something false and strikes a true value through. Hence
precision over recall. A value is the rest of the clause after its trigger, in the turn's own
words: it ends at the sentence's end (found abbreviation-aware, `memdir.words.sentences`, so
"Dr. Costa" stays whole), at clause punctuation or a dash, or before a word that opens another
clause ("and", "because", "which", ...); hedges and fillers at its edges ("actually", "too",
"lol") are trimmed. A turn that only asks, supposes or negates ("if I moved to Paris", "do I
prefer...?") states nothing. What is left must pass `fact_quality.junk_reason` (no pronoun,
demonstrative, anaphoric "the plot", stopwords-only or cut value) and be short enough to be a
value rather than a clause; otherwise no keyed fact is written, and the verbatim turn line
still keeps what was said. "I like / love / enjoy X" is not a keyed fact at all: a person
likes many things at once, and one liking never ends another, so it cannot supersede.
"""

from __future__ import annotations

import re

from memdir.conventions import key_of
from memdir.fact_quality import junk_reason, words_of
from memdir.words import STOPWORDS, sentence_ends

DIETS = r"vegan|vegetarian|pescatarian|keto|paleo|plant-based|gluten-free|dairy-free"
FOODS = r"red meat|meat|dairy|pork|beef|chicken|fish|seafood|gluten|sugar|animal products|eggs"
_ADVERB = r"(?:now |currently |just |recently |finally |still |really |mostly |usually |generally )?"
_NEW_HOME = r"(?:(?:the|our|my|a) )?(?:new )?(?:flat|apartment|house|home|place)"
_NAME = r"(?-i:[A-Z][\w-]*(?: [A-Z][\w-]*)?)"  # a name as written: capitalized words, whatever the flags
KEY_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (attr, re.compile(rx, re.IGNORECASE), value)
    for attr, rx, value in (
        # (attribute, trigger, value): with no `value` group, the value is the clause after the
        # trigger; `value` writes the group into the value as the turn says it.
        ("favorite {what}", r"\bmy (?:new )?fav(?:ou?rite) (?P<what>[a-z]+(?: [a-z]+)?) is (?:now )?", ""),
        # the speaker's home: what they say of themself, or of the household they speak for ("we
        # moved"); never of another ("my sister moved to Rome")
        ("home", rf"\b(?:I|we)(?:'ve| have)? {_ADVERB}(?:live|moved|relocated) (?:in|to) ", ""),
        ("home", rf"\b(?:I|we)(?:'ve| have)? {_ADVERB}moved into {_NEW_HOME} in ", ""),
        ("home", rf"\b(?:I|we)(?:'m| am|'re| are)? {_ADVERB}settling (?:in|into) {_NEW_HOME} in ", ""),
        ("job", rf"\bI(?:'m| am|m)? {_ADVERB}(?:work(?:ing)?|employed) as (?:an? )?", ""),
        ("job", r"\bmy (?:new )?job is (?:now )?(?:an? )?", ""),
        ("job", rf"\bI(?:'ve| have)? {_ADVERB}(?:started|got|landed|took) a (?:new )?job as (?:an? )?", ""),
        ("study", rf"\bI(?:'m| am|m) {_ADVERB}(?:majoring in|studying) ", ""),
        ("diet", rf"\bI(?:'m| am|m) {_ADVERB}(?:an? )?(?P<value>{DIETS})\b", "{value}"),
        (
            "diet",
            rf"\bI(?:'ve| have)? {_ADVERB}(?:went|gone|become|became|turned|switched to being) "
            rf"(?:fully |completely |full )?(?P<value>{DIETS})\b",
            "{value}",
        ),
        (
            "diet",
            rf"\bI(?:'ve| have)? {_ADVERB}(?:stopped|quit|gave up|given up|cut out) (?:eating )?"
            rf"(?P<value>{FOODS})\b",
            "no {value}",
        ),
        ("diet", rf"\bI {_ADVERB}(?:don't|do not|no longer) eat (?P<value>{FOODS})\b", "no {value}"),
        ("diet", rf"\bI(?:'ve| have)? been eating (?P<value>{DIETS})\b", "{value}"),
        ("preference", rf"\bI {_ADVERB}prefer ", ""),
        # a change stated as one: "X is my favorite Y now", "switched my Y to X", "swapped my Y
        # for X"; and the few ways the generated benchmark states a keyed fact that are not
        # "my Y is X"
        (
            "favorite {what}",
            rf"\b(?P<value>{_NAME}) is (?:now |still )?my (?:new )?fav(?:ou?rite) (?P<what>[a-z]+)\b",
            "{value}",
        ),
        (
            "{what}",
            rf"\bI(?:'ve| have)? {_ADVERB}(?:switched|swapped|changed) "
            r"my (?P<what>[a-z]+(?: [a-z]+)?) (?:to|for) (?:an? )?",
            "",
        ),
        ("{what}", r"\bmy (?P<what>[a-z]+(?: [a-z]+)?) of choice is (?:an? )?", ""),
        (
            "hobby",
            r"\b(?:on|up) (?P<value>[a-z][a-z -]*?)(?:,| and) "
            r"(?:it's|it is|it has become|that's) my main hobby",
            "{value}",
        ),
        ("home", rf"\blife in (?P<value>{_NAME}) is\b", "{value}"),
        ("job", r"(?:^|(?<=[.!?] ))work as (?:an? )?(?P<value>[a-z]+(?: [a-z]+)?) keeps\b", "{value}"),
        ("travel plan", rf"\bI(?:'m| am) {_ADVERB}planning a trip to ", ""),
        ("travel plan", r"\bthe trip is (?:going to be |now )?to ", ""),
        ("car", rf"\bI {_ADVERB}drive an? ", ""),
        ("car", r"\b(?:sold|traded in) my (?:old )?car and (?:bought|got) an? ", ""),
        ("morning drink", r"\bcan't start the day without (?:an? |my )?", ""),
        ("reading genre", rf"\bI {_ADVERB}read (?P<value>[a-z]+(?: [a-z]+)?) these days\b", "{value}"),
        ("reading genre", r"\bmoved on from my old books,? now it's all ", ""),
        ("language course", rf"\b(?:course|class|classes) in (?P<value>{_NAME})\b", "{value}"),
        ("language course", rf"\bstarted learning (?P<value>{_NAME})\b", "{value}"),
        ("next purchase", r"\bsaving up to buy ", ""),
        ("next purchase", r"\bwhat to buy next: ", ""),
        ("{what}", r"\bmy (?:main |biggest |ultimate |new )?(?P<what>goal|dream|plan|aim) is to ", ""),
    )
)
# A verb phrase cut at "and" may be cut inside itself ("create a safe [and loving home]"): these
# keep a value only when its clause ends at punctuation or the sentence's end.
WHOLE_CLAUSE = frozenset({"goal", "dream", "plan", "aim"})
# `favorite X` names a kind of thing; these name none ("my favorite part is ...").
# Two names of one kind of thing: a favorite cuisine is a favorite food, one key, so a new one
# strikes the old one through.
_SAME_KIND = {"cuisine": "food"}
_VAGUE_KINDS = frozenset("one ones thing things part parts bit bits kind type way place time".split())  # noqa: SIM905
MAX_WORDS = 6
"""A value longer than this reads as a clause, not a value; the few good ones it loses ("the
social media manager of a marketing firm in New York") stay in the verbatim turn line."""
# Where a value ends: clause punctuation, a dash between spaces, an ellipsis, an emoji or other
# symbol, or a word that opens another clause.
_OPENERS = (
    "and|but|or|nor|because|cause|'cause|since|so|which|who|that|that's|where|for|with|after|before|"
    "when|while|now|over|than|instead|rather|though|tho|although|if|unless|until|as long as|"
    "especially|like|lol|haha|lmao|btw|plus|these days|nowadays|right now|at the moment|anymore|"
    "too|as well|personally|I|I'm|I've|I'd|it's|it|they|they're|theyre"
)
_CUT = re.compile(rf"\s+[-–—]+\s+|\.\.\.|[,;:!?()\[\]\"“”…]|[^\w\s'’.&/-]|\s(?:{_OPENERS})(?=\W|$)", re.I)
_LEAD = re.compile(
    r"^(?:(?:actually|probably|also|really|just|definitely|totally|still|called|named)\s+)+", re.I
)
_TRAIL = re.compile(
    r"(?:\s+(?:more|better|way better|a lot|lots|so much|very much|again|yet|today|lately|dude|man|"
    r"bro|honestly|in general|currently|now|though|tho|lol|haha|yesterday|recently|a while ago|"
    r"(?:last|next|this) (?:week|month|year|weekend|night|summer|winter|spring|fall)|"
    r"(?:on|this|last|next) (?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)|"
    r"(?:in|last|this|since) (?:January|February|March|April|May|June|July|August|September|"
    r"October|November|December)(?: \d{4})?))+$",
    re.I,
)
# Words just before a trigger that make it a question, a supposition or a denial, not a fact.
_UNSAID = frozenset(
    """
    if whether unless when whenever wish hope hoping maybe might could would should ever never not
    don't didn't do did if once until before can can't cannot want wanted
    """.split()  # noqa: SIM905
)
_ELONGATED = re.compile(r"([a-z])\1\1", re.I)


def _sentence_at(text: str, ends: list[int], pos: int) -> tuple[int, int]:
    """(start, end) of the sentence holding offset `pos`."""
    start = 0
    for end in ends:
        if pos < end:
            return start, end
        start = end
    return start, len(text)


def _clause_value(rest: str, whole: bool = False) -> str:
    """The value a trigger opens: `rest` up to the clause's end, edges trimmed; with `whole`,
    nothing when a word opening another clause, not punctuation, ends it."""
    cut = _CUT.search(rest)
    if whole and cut is not None and re.search(r"[A-Za-z]", cut.group()):
        return ""
    value = (rest[: cut.start()] if cut else rest).strip().rstrip(".").strip()
    value = _LEAD.sub("", value)
    value = _TRAIL.sub("", value)
    value = _without_vocative(value)
    return re.sub(r"\s+", " ", value).strip(" '\"’")


def _without_vocative(value: str) -> str:
    """`value` without a name the speaker addresses after it ("business finance Kevin"): a
    capitalized last word after a lower-case word that is no stopword ("the Godfather", "a town
    called Springfield" and "Computer Science" keep theirs)."""
    words = value.split(" ")
    addressed = len(words) >= 2 and re.fullmatch(r"[A-Z][a-z]+", words[-1]) is not None
    if addressed and words[-2].islower() and words[-2] not in STOPWORDS | {"called", "named"}:
        return " ".join(words[:-1])
    return value


def worth_keeping(value: str) -> bool:
    """A value the curator can stand behind: not junk by the shared rule, a phrase rather than a
    clause, no elongated chat words ("soooo")."""
    words = words_of(value)
    return (
        junk_reason(value) is None
        and 0 < len(words) <= MAX_WORDS
        and not _ELONGATED.search(value)
        and not ({"i", "i'm", "im", "me", "you"} & set(words))
    )


def keyed_facts(text: str) -> list[tuple[str, str]]:
    """(attribute, value) pairs a turn states about its speaker; one per attribute, first wins."""
    found: dict[str, str] = {}
    text = text.replace("’", "'")  # the same length: offsets hold
    ends = sentence_ends(text)
    for attr_t, rx, template in KEY_PATTERNS:
        for m in rx.finditer(text):
            start, end = _sentence_at(text, ends, m.start())
            sentence = text[start:end].rstrip()
            before = words_of(text[start : m.start()])[-2:]
            if sentence.endswith("?") or _UNSAID & set(before):
                continue
            what = (m.groupdict().get("what") or "").lower()
            what = _SAME_KIND.get(what, what)
            if what in _VAGUE_KINDS:
                continue
            attr = key_of("", attr_t.format(what=what))[1]
            if template:
                said = m["value"]
                value = template.format(
                    value=said if said[:1].isupper() else said.lower()
                )  # a name keeps its case
            else:
                value = _clause_value(text[m.end() : end], attr in WHOLE_CLAUSE)
            if attr not in found and worth_keeping(value):
                found[attr] = value
    return list(found.items())
