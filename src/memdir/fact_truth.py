"""Whether a written fact says what its cited turn says, about whom and when: the truth rules
every curator validates by and `memdir study bench writes` scores by (docs/metrics.md, "Truth
of a line").

`fact_quality` asks whether a line's words occur in the turn it cites. That let false lines
through with a real citation: "My sister Maria lives in Rome now." filed as the speaker's home,
"I don't eat meat at all." as a diet of "eat meat", "My sister moved to Rome ... and I stayed
in Paris." as "moved to Paris", a day the turn never named. A line is true here when all hold,
checked in this order, the first that fails naming it false:

- `unsupported`: its value's content words stand in one sentence of a cited turn in the
  value's order, each within `GAP` more words of the one before than the value puts between
  them (`in_order`), and that sentence states rather than asks;
- `wrong subject`: the line's subject is who that clause speaks of (`actor`): its speaker for
  "I", "we", "my job"; the named person or the relative for "my sister Maria", "my mother",
  "Jo"; someone else for "she", "he", "they"; the other speaker for "you". A line may still
  name the other person inside its value ("Alice | event: sister moved to Rome");
- `negated`: the clause denies the value ("don't", "not", "never", "no longer", "quit",
  "stopped") and the line states it as a live positive value;
- `wrong date`: the line's day is neither the turn's day nor one the turn names
  (`fact_dates.day_fits`);
- `wrong kind`: a `plan` whose value is an act already done ("posted", "went to Rome") with no
  word of intent before it; or a keyed value the turn names as another attribute ("my favourite
  food is Peruvian" filed as a diet; "Peruvian is still my favorite food" as a diet's value);
- `vacuous`: nothing in the value a question could ask about: after reactions and filler
  ("great", "tough times", "got your back"), the generic verbs ("saw", "posted", "enabled"),
  and the speakers' names, no word is left.

The word lists are here and stated in docs/metrics.md; no model scores a line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memdir.conventions import DISTILLED_KINDS, DistilledFact, KeyedFact
from memdir.fact_dates import day_fits
from memdir.fact_quality import FIRST_PERSON, occurs
from memdir.stream import Turn
from memdir.words import STOPWORDS, sentences, stem, terms

REASONS = ("unsupported", "wrong subject", "negated", "wrong date", "wrong kind", "vacuous")
GAP = 3
"""How many more words a turn may put between two of a value's words than the value does."""

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*|[,;:()]|\s[-–—]\s")
_DASH = re.compile(r"\s[-–—]+\s")
_BOUNDARY = frozenset(",;:()-–—") | frozenset(
    "and but because while when although though since whereas or that which who".split()  # noqa: SIM905
)
# Who a clause is about, by the words that can be its subject or own its noun ("my job"); an
# object ("keep me updated", "show him") says nothing of who does or has it.
_SELF = frozenset("i i'm im i've i'd i'll my we we're we've we'd we'll our".split())  # noqa: SIM905
_OTHER = frozenset("he she they her his their he's she's they're".split())  # noqa: SIM905
_YOU = frozenset("you you're you've you'd you'll your".split())  # noqa: SIM905
# A sentence opening with one of these and naming nobody tells the other what to do or wish for.
_IMPERATIVE = frozenset("have enjoy keep take stay let check try remember break rock".split())  # noqa: SIM905
RELATIVES = frozenset(
    """
    sister sisters brother brothers sibling siblings mother mom mum mommy mama father dad daddy papa
    parent parents husband wife spouse son sons daughter daughters kid kids child children baby
    boyfriend girlfriend partner fiance fiancee fiancé fiancée friend friends bestie bff buddy pal
    cousin cousins aunt uncle grandma grandmother grandpa grandfather grandparents granddaughter
    grandson niece nephew roommate boss coworker coworkers colleague colleagues neighbor neighbour
    neighbors mentor students student teacher coach dog dogs cat cats pet pets puppy kitten
    in-laws stepmom stepdad stepson stepdaughter ex
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_NEGATIONS = frozenset("not never no nobody nothing nor neither cannot quit stopped without".split())  # noqa: SIM905
_NEGATION_PHRASES = ("no longer", "gave up", "give up", "giving up", "anymore", "any more")
# Openings that contain a negation word and affirm ("I can't wait to", "not only", and two
# negations that cancel: "I can't start the day without a green tea").
_AFFIRMING = re.compile(
    r"\b(?:can(?:no|')t|couldn't|could not) wait\b|\bnot only\b|\bno doubt\b|\bnever been happier\b"
    r"|\b(?:can(?:no|')t|cannot|couldn't|could not)\b[\w\s']{0,40}\bwithout\b"
    r"|\bnever forget\b|\bstopped by\b|\bno matter\b|\bcouldn't be (?:happier|prouder|more)\b",
    re.I,
)
_INTENT = frozenset(
    """
    will 'll gonna going plan plans planning planned want wants wanna hope hoping hopes might may
    would thinking intend intending aim aiming goal dream wish considering about soon next tomorrow
    someday eventually later upcoming future trying try excited forward thrilled eager ready
    determined keen
    """.split()  # noqa: SIM905
)
_IRREGULAR_PAST = frozenset(
    """
    went made got took saw did had was were came bought brought caught found gave kept left lost
    met paid ran sold sent spent taught thought told won wrote ate drank drove flew grew knew
    rode sang swam threw began became built felt heard held led read said sat slept spoke stood
    """.split()  # noqa: SIM905
)
# What carries no subject matter of its own: reactions, compliments, filler and generic verbs.
_EMPTY = frozenset(
    stem(w)
    for w in """
    great good nice cool awesome amazing wonderful fantastic incredible beautiful lovely cute fun
    funny glad happy sad sorry proud excited thanks thank congrats congratulations wow lol haha
    laughing laugh laughed love loved tough hard rough times time day days pic pics picture
    pictures photo photos thing things stuff lot lots way back moment moments vibe vibes guy guys
    okay ok sure totally pretty bit whole same real true crazy wild important special exciting
    interesting inspiring awesome best better worse worst big small little new old tons ton
    saw see seen seeing posted post posting enabled enable made make making did done doing went
    tried try trying had having took take taking gave give came come coming felt feel feeling
    looked look looking seemed seem started start kept keep found find shared share sharing sent
    send wanted want needed need thought knew know showed show heard hear used use let put
    check checked checking means mean meant appreciate appreciated hope hoping wish wishes care
    support supported sounds sound cheers hug hugs luck glad enjoy enjoyed enjoying matter matters
    goes going gone happen happened happening stay stayed fine keep awesome idea ideas agree
    agreed ya yea yeah gonna kinda life lives living amazing rewarding thankful grateful stoked
    last weekend week month year today yesterday recently lately since talked talk chatted chat
    come came motivated worth worthwhile later already forward bud here's there's won't can't
    help helped value sense
    """.split()  # noqa: SIM905 - a word list reads better as text
)


@dataclass(frozen=True)
class Line:
    """A written fact as the truth rules read it: who, what kind, what, when, live or past."""

    subject: str
    kind: str  # a distilled kind ("event", "plan", ...) or a keyed attribute ("home")
    value: str
    day: str | None
    live: bool = True


def line_of(parsed: KeyedFact | DistilledFact) -> Line:
    """A keyed line (live or struck) or a distilled line as the rules read it: a keyed
    attribute stands where a distilled line has its kind, `(since unknown)` gives no day."""
    if isinstance(parsed, KeyedFact):
        day = None if parsed.since == "unknown" else parsed.since
        return Line(parsed.subject, parsed.attribute, parsed.value, day, parsed.live)
    return Line(parsed.subject, parsed.kind, parsed.value, parsed.date)


@dataclass(frozen=True)
class Found:
    """Where a value stands in a turn: its sentence's tokens and the first matched token."""

    turn: Turn
    tokens: list[str]
    start: int


def tokens_of(text: str) -> list[str]:
    return [t.strip() or "-" for t in _TOKEN.findall(text)]


def content(word: str) -> str | None:
    """The stem a word is matched by, or None for a stopword (`words.STOPWORDS`)."""
    w = word.lower().strip("'’-")
    return None if w in STOPWORDS or len(w) < 2 or not w[0].isalnum() else stem(w)


def in_order(value: str, turn: Turn, drop: Sequence[str] = ()) -> Found | None:
    """Where the value's content words (less `drop`, e.g. names the line adds) stand in order in
    one stating sentence of `turn` under the `GAP` rule, or None."""
    vtok = tokens_of(value)
    want = [(i, c) for i, w in enumerate(vtok) if (c := content(w)) and w.lower() not in drop]
    if not want:
        return None
    for sentence in _stating(turn.text):
        toks = tokens_of(sentence)
        stems = [content(t) for t in toks]
        hit = _align(want, stems)
        if hit is not None:
            return Found(turn, toks, hit)
    spanning = occurs(value, turn.text) and not any(occurs(value, s) for s in sentences(turn.text))
    if spanning:  # a span of the turn across its sentences is still its words; a question is not
        toks = tokens_of(turn.text)
        hit = _align(want, [content(t) for t in toks])
        return Found(turn, toks, hit) if hit is not None else None
    return None


def _stating(text: str) -> list[str]:
    """The sentences of `text` that state: a sentence ending in "?" is left out, but for what it
    says before a dash ("Here's my new mansion - pretty cool huh?")."""
    out: list[str] = []
    for sentence in sentences(text):
        if not sentence.rstrip().endswith("?"):
            out.append(sentence)
        elif _DASH.search(sentence):
            out.extend(p for p in _DASH.split(sentence) if not p.rstrip().endswith("?"))
    return out


def _align(want: list[tuple[int, str]], stems: list[str | None]) -> int | None:
    """The token index of the first word of an in-order match of `want` in `stems`."""

    def rest(k: int, at: int) -> bool:
        if k == len(want):
            return True
        allowed = want[k][0] - want[k - 1][0] - 1 + GAP
        for j in range(at + 1, min(len(stems), at + 2 + allowed)):
            if stems[j] == want[k][1] and rest(k + 1, j):
                return True
        return False

    for i, s in enumerate(stems):
        if s == want[0][1] and rest(1, i):
            return i
    return None


def _clauses(before: list[str]) -> list[list[tuple[int, str]]]:
    """The tokens before a value (with their places in the sentence) cut into clauses at
    punctuation and conjunctions, the last clause first."""
    out: list[list[tuple[int, str]]] = [[]]
    for i, t in enumerate(before):
        if t in _BOUNDARY or t.lower() in _BOUNDARY:
            out.append([])
        else:
            out[-1].append((i, t))
    return out[::-1]


@dataclass(frozen=True)
class Actor:
    """Who a clause speaks of: "speaker", "addressee", "other" (he, she, they) or "named"
    (`words`: the relative and the name, e.g. ("sister", "Maria"))."""

    who: str
    words: tuple[str, ...] = ()
    owner: str = ""  # whose relative ("Caroline" of "Caroline's sister"), where known


def actor(found: Found, names: frozenset[str]) -> Actor:
    """The first person the value's clause names before the value (the clauses before it in
    its sentence when it names none); its speaker when the sentence names no one."""
    toks = found.tokens
    speaker_names = {n.lower() for n in found.turn.speaker.split()}
    own = [t.lower().replace("’", "'") for t in toks[found.start : found.start + 8]]
    if {"your", "yours", "yourself"} & set(own):  # "opening your own shop": the value says whose
        return Actor("addressee")
    if {"i", "i'm", "i've", "i'd", "i'll"} & set(own):  # "all the books I might read": the speaker's
        return Actor("speaker")
    first = (toks[:1] or [""])[0].lower()
    if first in _IMPERATIVE and not (_SELF | _YOU | _OTHER) & {t.lower() for t in toks[: found.start]}:
        return Actor("addressee")  # "Have a great time and learn a lot!": a wish for the other
    for clause in _clauses(toks[: found.start]):
        words = [t for _, t in clause]
        for i, (_, t) in enumerate(clause):
            low = t.lower().replace("’", "'")
            relative = _relative_after(words, i) if low in ("my", "our") else None
            if relative is not None:
                place = clause[relative][0]
                after = toks[place + 1 : place + 2]  # the name may open the value: "my friend | Dana"
                named = [toks[place].lower(), *(w for w in after if w[:1].isupper() and w != "I")]
                return Actor("named", tuple(named))
            if low in _SELF or (low in FIRST_PERSON and i == 0):
                return Actor("speaker")
            if low in _YOU:
                return Actor("addressee")
            if low in _OTHER:
                return Actor("other")
            if i == 0 and t[:1].isupper() and low.removesuffix("'s") in names:  # the clause's subject
                if len(clause) == 1 and low not in speaker_names:  # "Wow, Dave, that car ...": spoken to
                    return Actor("addressee")
                return Actor("named", (t.removesuffix("'s"),))
    return Actor("speaker")


def _relative_after(clause: list[str], i: int) -> int | None:
    """The index of a relative named within two words after "my" at `i` ("my older sister")."""
    for j in range(i + 1, min(len(clause), i + 4)):
        if clause[j].lower() in RELATIVES:
            return j
        if not clause[j].islower():
            return None
    return None


def _same(name: str, other: str) -> bool:
    a, b = name.lower().split(), other.lower().split()
    return bool(a) and bool(b) and (a == b or a[0] == b[0])


def _words(text: str) -> set[str]:
    """The words of `text`, lower case, a possessive's "'s" cut ("my mother's cat": mother)."""
    return {w.lower().replace("’", "'").removesuffix("'s") for w in tokens_of(text)}


def subject_fits(subject: str, value: str, who: Actor, speaker: str, speakers: Sequence[str]) -> bool:
    """Whether a line about `subject` may say `value` of the clause's actor `who`."""
    said = _words(value)
    if who.who == "speaker":
        return _same(subject, speaker)
    if who.who == "addressee":
        return not _same(subject, speaker)
    if who.who == "other":
        return not _same(subject, speaker) or bool(said & (RELATIVES | {n.lower() for n in speakers}))
    # named: the person, "Alice's sister", or the speaker with the relative named in the value
    words = {w.lower() for w in who.words}
    subj = {w.lower().removesuffix("'s") for w in tokens_of(subject)}
    # the speaker may hold it when the value names the relative, or opens with one ("my friends,
    # family and mentors" -> "Caroline | relation: family")
    opens = (tokens_of(value) or [""])[0].lower() in RELATIVES | {"family"}
    return bool(words & subj) or ((bool(words & said) or opens) and _same(subject, speaker))


def negated(found: Found, value: str) -> bool:
    """Whether the value's clause denies it before it, and the value does not carry the denial."""
    clause = [t for _, t in _clauses(found.tokens[: found.start])[0]]
    text = " ".join(clause).lower().replace("’", "'")
    if _AFFIRMING.search(text + " " + value):
        return False
    cue = any(w in _NEGATIONS or w.endswith("n't") for w in text.split()) or any(
        p in text for p in _NEGATION_PHRASES
    )
    own = " ".join(tokens_of(value)).lower()
    carries = any(w in _NEGATIONS or w.endswith("n't") for w in own.split()) or any(
        p in own for p in _NEGATION_PHRASES
    )
    return cue and not carries


def done_not_planned(found: Found, value: str) -> bool:
    """A plan whose value opens with a verb in the past, or follows one within three words ("ran
    my first | marathon"), with no word of intent before it or in it."""
    clause = [t.lower() for _, t in _clauses(found.tokens[: found.start])[0]]
    first = (tokens_of(value) or [""])[0].lower()
    past = any(past_form(w) for w in [*clause[-3:], first])
    intent = any(w in _INTENT or w.endswith("'ll") for w in clause + [t.lower() for t in tokens_of(value)])
    return past and not intent


def past_form(word: str) -> bool:
    """A verb in the past as written: irregular ("went") or a word of five letters or more in -ed."""
    w = word.lower()
    return w in _IRREGULAR_PAST or (w.endswith("ed") and len(w) > 4)


_COPULA = frozenset({"is", "are", "was", "were"})  # not ":" ("my taste has changed: Mexican ...")
_ADVERB = frozenset(
    {"still", "now", "currently", "really", "definitely", "honestly", "always", "just", "totally"}
)
_OWNER = frozenset({"my", "our", "his", "her", "their", "your"})


def _owned(toks: list[str], copula: int) -> list[str] | None:
    """The words between an owner and the copula at `copula` ("my favourite food is"), or None."""
    j, words = copula - 1, list[str]()
    while j >= 0 and toks[j] not in _OWNER and len(words) < 3:
        words.insert(0, toks[j])
        j -= 1
    return words if j >= 0 and toks[j] in _OWNER and words else None


def named_attribute(found: Found, value: str) -> list[str] | None:
    """The attribute the speaker names the value by, if they do: before it in its clause ("my
    favourite food is Peruvian"), or within it ("Peruvian is still my favorite food")."""
    toks = [t.lower() for t in found.tokens]
    i = found.start - 1
    while i >= 0 and toks[i] in _ADVERB:
        i -= 1
    if i >= 1 and toks[i] in _COPULA and (words := _owned(toks, i)):
        return words
    vtok = [t.lower() for t in tokens_of(value)]
    for k, t in enumerate(vtok):
        if t in _COPULA:
            rest = [w for w in vtok[k + 1 :] if w not in _ADVERB]
            if len(rest) >= 2 and rest[0] in _OWNER:
                return rest[1:4]
    return None


def names_another_attribute(attribute: str, found: Found, value: str) -> bool:
    """Does the turn name the value as an attribute that shares no word with `attribute`?"""
    named = named_attribute(found, value)
    if not named:
        return False
    said = {terms(w.replace("favourite", "favorite"))[0] for w in named if terms(w)}
    return bool(said) and not said & set(terms(attribute.replace("favourite", "favorite")))


def vacuous(value: str, names: Sequence[str] = ()) -> bool:
    """Nothing in `value` a question could ask about (a number counts; names of the speakers
    do not)."""
    spoken = [n.lower() for full in names for n in full.split() if len(n) >= 3]

    def named(word: str) -> bool:  # a name, or the start of one written as a name ("Mel"; not "car")
        w = word.lower()
        return len(w) >= 3 and (w in spoken or (word[:1].isupper() and any(n.startswith(w) for n in spoken)))

    left = [t for w in tokens_of(value) if not named(w) for t in terms(w) if t not in _EMPTY]
    return not left


def false_reason(
    line: Line,
    cited: Sequence[Turn],
    speakers: Sequence[str] = (),
    *,
    names: frozenset[str] = frozenset(),
    subject_known: bool = False,
) -> str | None:
    """Why `line` is false (one of `REASONS`), or None when it is true of the turns it cites.
    `names`: lower-cased person names the stream writes (speakers, people they name);
    `subject_known`: the subject was checked elsewhere (a reference fact names it)."""
    drop = [w.lower() for w in tokens_of(line.subject)] + [n.lower() for s in speakers for n in s.split()]
    found = next((f for t in cited if (f := in_order(line.value, t)) is not None), None) or next(
        (f for t in cited if (f := in_order(line.value, t, drop)) is not None), None
    )  # the names a line adds to its value ("Melanie ran a race") are tried without, second
    if found is None:
        return "unsupported"
    known = names | {n.lower() for s in speakers for n in s.split()}
    if not subject_known and not subject_fits(
        line.subject, line.value, actor(found, known), found.turn.speaker, speakers
    ):
        return "wrong subject"
    if line.live and negated(found, line.value):
        return "negated"
    if not day_fits(line.day or "", found.turn.text, found.turn.date):
        return "wrong date"
    if line.kind == "plan" and done_not_planned(found, line.value):
        return "wrong kind"
    if line.kind not in DISTILLED_KINDS and names_another_attribute(line.kind, found, line.value):
        return "wrong kind"
    if vacuous(line.value, [*speakers, line.subject]):
        return "vacuous"
    return None


def reference_subject(text: str, filed_under: str, names: frozenset[str]) -> Actor:
    """Who a reference fact written in the third person is about: the relative it opens with
    ("Caroline's sister Maria moved ...": her sister, `owner` Caroline), the person it opens
    with when the stream names them ("Caroline attended ..."), else the person it is filed
    under (LoCoMo files an observation under a speaker: "The support group made Caroline ...")."""
    toks = tokens_of(text)
    head = (toks[0] if toks else "").replace("’", "'")
    if head.endswith("'s") and head.removesuffix("'s").lower() in names:
        relative = _relative_after(["my", *toks[1:4]], 0)
        if relative is not None:
            after = toks[relative + 1 : relative + 2]
            named = (toks[relative].lower(), *(w for w in after if w[:1].isupper()))
            return Actor("named", named, owner=head.removesuffix("'s"))
    if head[:1].isupper() and head.removesuffix("'s").lower() in names:
        return Actor("named", (head.removesuffix("'s"),))
    return Actor("named", (filed_under,))


def reference_fits(subject: str, value: str, ref: Actor) -> bool:
    """Whether a line's subject is the person a reference fact is about, or that person's
    owner with the relative named in the value ("Melanie | plan: kids are so excited ..."), or
    a line whose value names that person ("Deborah | relation: Max is my mother's cat")."""
    subj = {w.lower().removesuffix("'s") for w in tokens_of(subject)}
    if {w.lower() for w in ref.words if w[:1].isupper()} & _words(value):
        return True
    if ref.owner and _same(subject, ref.owner):
        named = {w.lower() for w in ref.words} | RELATIVES | {"family"}
        return bool(_words(value) & named)
    if len(ref.words) == 1 and ref.words[0].lower() not in RELATIVES:
        return _same(subject, ref.words[0])
    return bool(subj & {w.lower() for w in ref.words})


def stream_names(turns: Sequence[Turn]) -> frozenset[str]:
    """The person names a stream writes: its speakers, and capitalized words written after the
    first word of a sentence (lower-cased), less the few capitals that are not names."""
    found = {n.lower() for t in turns for n in t.speaker.split()}
    for t in turns:
        for sentence in sentences(t.text):
            for w in tokens_of(sentence)[1:]:
                if w[:1].isupper() and w != "I" and not w.isupper():
                    found.add(w.lower().removesuffix("'s"))
    return frozenset(found)
