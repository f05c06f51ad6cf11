"""The checks a proposed fact must pass before anything is written (docs/curation.md).

A small model paraphrases, cites the wrong turn and gives one person's news to another ("I'm
swamped with the kids & work" became `Melanie | job: mother of two children and a teacher`). So
a fact is kept only when the turns it cites bear it out, by the rules `memdir.fact_quality`
defines for every curator and for `memdir study bench writes`:

- `locator`: every evidence locator is a turn of this chunk;
- `kind`: one of the schema's kinds;
- `junk value`: `junk_reason` finds nothing wrong with the value (a spoken opening, "So",
  "but", "and", is cut first, then a leading "I"/"my", which makes the statement first-person);
- `value not in turn`: the value stands in a cited turn as written (`occurs`), or failing
  that, all its content words are there (`support(...) == STRICT`); a value retold in the
  third person ("took her fam camping") or run on past its turn is first found again as the
  turn words it (`span.py`);
- `subject`: the subject is the speaker of a cited turn or a name written in one;
- `speaker named`: the value is only the name of someone speaking in the chunk, "friend" or
  not ("Melanie | relation: Caroline" from "Thanks, Caroline!"): it says who talks to whom, not
  a fact about either (how often a small model wrote them:
  benchmarks/results/2026-12-06-curation-split-local-model.md, "Serving the reply faster, and
  two validation rules");
- `small talk`: every content word of the value, the speakers' names aside, thanks, greets,
  cheers or agrees ("thanks", "stay safe", "that's awesome, Mel"): true of the turn, about
  nobody;
- `duplicate`: the same fact twice in one reply.

A first-person statement (the sentence holding the value says "I", "my", "me") is about its
speaker: a different subject is rewritten to the speaker, and counted. What fails is dropped
and counted by reason, never written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date as Date

from memdir.agents.output import RoleExtra
from memdir.agents.split.extract import FACTS_PER_TURN, KINDS, Proposed
from memdir.agents.split.span import found_in_turn
from memdir.agents.split.truthful import fixed_kind, subject_of, with_denial
from memdir.conventions import neutralize_locators
from memdir.fact_dates import day_fits
from memdir.fact_quality import (
    DEMONSTRATIVES,
    FIRST_PERSON,
    PRONOUNS,
    junk_reason,
    occurs,
    words_of,
)
from memdir.fact_truth import (
    Line,
    actor,
    false_reason,
    in_order,
    negated,
    past_form,
    stream_names,
    tokens_of,
    vacuous,
)
from memdir.stream import Chunk, Turn
from memdir.words import terms

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_SPOKEN = re.compile(r"[\w'’]+")  # a value's words as written, case kept (a name is capitalized)
_ATTRIBUTE_WORDS = 3
# Words a value that only names a speaker may add to the name ("my friend Cal").
_ADDRESS = frozenset(["friend", "buddy", "pal", "bud", "dear", "my", "our", "best", "good", "old"])
# Words a phrase cannot end with: a value ending so was cut before what it needed.
_OPEN_END = frozenset("of on in at to for with about from by into the a an my your his her our their".split())  # noqa: SIM905
# Words that open a new clause: a junk value is cut before one of them first.
_CLAUSE = frozenset(["and", "but", "or", "so", "because", "which", "who", "that", "when", "while", "since"])
# Words that thank, greet, cheer or agree: a value of these alone is small talk (`_small_talk`).
_SMALL_TALK = frozenset(
    t
    for w in """thanks thank congrats congratulations awesome great cool nice amazing wow agree
    agreed sure okay hey hi hello bye welcome sorry glad yay cheers haha lol totally absolutely
    definitely let mean means safe stay feel feels good sounds super special ya yeah yep doubt
    doubts""".split()  # noqa: SIM905 - a word list reads better as text
    for t in terms(w)
)
# Words a spoken sentence opens with before it says anything; cut from a value's start.
_OPENERS = frozenset(
    ["and", "but", "or", "so", "well", "yeah", "yes", "yep", "also", "plus", "oh", "wow", "anyway"]
)


@dataclass(frozen=True)
class Fact:
    """A validated fact, ready to file: `turn` is the cited turn its value stands in."""

    turn: Turn
    locators: tuple[str, ...]
    subject: str
    kind: str
    attribute: str
    value: str
    date: str


@dataclass
class Checked:
    kept: list[Fact] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    rewritten: int = 0  # first-person subjects set to the speaker
    trimmed: int = 0  # values cut to a clean span: a leading "I"/"my", a trailing clause
    recited: int = 0  # values found in another turn of the chunk than the one cited, re-cited
    dates_cleared: int = 0  # dates that were not an ISO day
    respanned: int = 0  # values retold or run on, taken as their turn words them (span.py)
    denials_kept: int = 0  # denied values filed with their denial ("don't eat meat")
    kinds_fixed: int = 0  # plans already done, filed as events

    def counts(self, proposed: int) -> RoleExtra:
        return {
            "facts_proposed": proposed,
            "facts_kept": len(self.kept),
            "facts_dropped": dict(sorted(self.dropped.items())),
            "subjects_rewritten": self.rewritten,
            "values_trimmed": self.trimmed,
            "evidence_recited": self.recited,
            "dates_cleared": self.dates_cleared,
            "values_respanned": self.respanned,
            "denials_kept": self.denials_kept,
            "kinds_fixed": self.kinds_fixed,
        }


def clean_value(value: str) -> str:
    """One line, with no character that would end a fact line's grammar early (`|`, `[`, `]`)."""
    value = value.replace("|", "/").replace("[", "(").replace("]", ")").replace("~~", "~")
    return " ".join(value.split()).strip(" .,;:!?\"'")


def clean_attribute(attribute: str, kind: str) -> str:
    words = re.sub(r"[^a-z0-9]+", " ", attribute.lower()).split()[:_ATTRIBUTE_WORDS]
    return " ".join(words) or kind


def _first_person(words: list[str]) -> bool:
    return any(w in FIRST_PERSON for w in words)


def _trim_first_person(value: str) -> tuple[str, bool]:
    """`value` without a leading "I", "I'm", "my"... ("my sister Lea" -> "sister Lea")."""
    return _cut_leading(value, lambda words: bool(words) and words[0] in FIRST_PERSON)


def _trim_opening(value: str) -> tuple[str, bool]:
    """`value` without the words a spoken sentence opens with before it says anything ("So
    I'm carving out some me-time" -> "I'm carving out some me-time"; "but I feel ...")."""
    return _cut_leading(value, lambda words: " ".join(words) in _OPENERS)


def _cut_leading(value: str, leads: Callable[[list[str]], bool]) -> tuple[str, bool]:
    """`value` without its leading words whose `words_of` `leads` holds for (one word is always
    left), and whether any was cut."""
    parts = value.split()
    cut = 0
    while cut < len(parts) - 1 and leads(words_of(parts[cut])):
        cut += 1
    return (" ".join(parts[cut:]), True) if cut else (value, False)


def _cut_to_clause(value: str) -> str | None:
    """The longest opening of a junk value that is no longer junk and still says something (two
    content words or more): "went to a support group and it was so powerful" -> "went to a
    support group". A span's opening is a span of the same turn, so it still `occurs` there."""
    parts = value.split()
    ends = range(len(parts) - 1, 1, -1)
    at_clause = [e for e in ends if parts[e - 1][-1] in ",;:" or parts[e].lower() in _CLAUSE]
    for end in [*at_clause, *ends]:
        head = " ".join(parts[:end]).rstrip(",;:")
        if junk_reason(head) is None and len(terms(head)) >= 2:
            return head
    return None


def _extend_left(value: str, text: str, most: int = 3) -> str | None:
    """A value that opens mid-phrase ("to Japan for a few months"), given the words before it
    in the turn, up to `most` and within its sentence, until it is no longer junk: "going to
    Japan for a few months". A leading "I"/"my" so taken in is cut again."""
    words = [w for w in words_of(value) if w]
    if not words or junk_reason(value) != "fragment" or words[0] in PRONOUNS | DEMONSTRATIVES:
        return None  # only an opening cut mid-phrase is grown; "it was so powerful" is not
    m = _where(words, text)
    if m is None:
        return None
    before = _SENTENCE.split(text[: m.start()])[-1].split()
    for k in range(1, min(most, len(before)) + 1):
        grown, _ = _trim_first_person(clean_value(" ".join([*before[-k:], text[m.start() : m.end()]])))
        if junk_reason(grown) is None:
            return grown
    return None


def _where(words: list[str], text: str) -> re.Match[str] | None:
    """Where `words` stand in `text` as a run, up to case and the punctuation between them."""
    return re.search(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)", text, re.IGNORECASE)


def _extend_right(value: str, text: str, most: int = 3) -> str | None:
    """A value the model cut mid-phrase at its end ("my other dream of working on"), given up to
    `most` words after it in its turn and sentence: "... of working on classic cars"."""
    words = [w for w in words_of(value) if w]
    m = _where(words, text) if words and words[-1] in _OPEN_END else None
    if m is None:
        return None
    after = re.split(r"[.!?;,]", text[m.end() :], maxsplit=1)[0].split()
    found = None
    for k in range(1, min(most, len(after)) + 1):
        grown = clean_value(text[m.start() : m.end()] + " " + " ".join(after[:k]))
        if words_of(grown)[-1] in _OPEN_END:
            continue
        found = grown
        if k == len(after) or after[k].lower() in _CLAUSE:  # the phrase ends here
            return grown
    return found


def _last_clause(value: str) -> str | None:
    """The longest ending of a junk value that opens at a clause boundary and is no longer junk,
    saying something (two content words or more): "shop and it's a step towards my other dream
    of working on classic cars" -> "a step towards my other dream of working on classic cars"."""
    parts = value.split()
    for start in range(1, len(parts) - 1):
        if parts[start - 1][-1] not in ",;:" and parts[start - 1].lower() not in _CLAUSE | {"it's", "its"}:
            continue
        tail = " ".join(parts[start:])
        tail, _ = _trim_first_person(tail)
        last = (words_of(tail) or [""])[-1]
        ends_open = last in _OPEN_END or last in FIRST_PERSON or last in PRONOUNS
        if junk_reason(tail) is None and len(terms(tail)) >= 2 and not ends_open:
            return tail
    return None


def _iso_day(text: str) -> str | None:
    try:
        return Date.fromisoformat(text).isoformat() if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else None
    except ValueError:
        return None


def _is(name: str, speaker: str) -> bool:
    """`name` names `speaker`: the whole name or the first name, any case."""
    want, whole = " ".join(words_of(name)), " ".join(words_of(speaker))
    return bool(want) and want in (whole, whole.split(" ")[0])


def check(chunk: Chunk, proposed: list[Proposed]) -> Checked:
    by_locator = {t.locator: t for t in chunk.turns}
    speakers = list(dict.fromkeys(t.speaker for t in chunk.turns))
    names = [w for s in speakers for w in words_of(s)]  # the words of their names
    chunk_names = stream_names(chunk.turns)
    out = Checked()
    seen: set[tuple[str, str, str, str]] = set()
    per_turn: Counter[str] = Counter()
    for p in proposed:
        reason = _check_one(p, by_locator, speakers, names, chunk_names, out)
        if isinstance(reason, str):
            out.dropped[reason] += 1
            continue
        key = (reason.subject.lower(), reason.kind, reason.attribute, " ".join(words_of(reason.value)))
        if key in seen:
            out.dropped["duplicate"] += 1
            continue
        if per_turn[reason.turn.locator] >= FACTS_PER_TURN:
            out.dropped["over cap"] += 1
            continue
        seen.add(key)
        per_turn[reason.turn.locator] += 1
        out.kept.append(reason)
    return out


def _small_talk(value: str, names: list[str]) -> bool:
    """Whether every content word of `value`, the speakers' names aside, is one that thanks,
    greets, cheers or agrees ("thanks", "Hey Melanie", "that's awesome, Mel", "let me know",
    "mean a lot"): it is true of the turn and says nothing about anyone."""
    said = set(terms(" ".join(w for w in _SPOKEN.findall(value) if not _names(w, names))))
    return bool(said) and said <= _SMALL_TALK


def _names(word: str, names: list[str]) -> bool:
    """Whether `word` is written as a speaker's name or the start of one ("Cal" for Calvin,
    not "car" for Caroline)."""
    return word[0].isupper() and len(word) >= 3 and any(n.startswith(word.lower()) for n in names)


def _only_speaker_named(value: str, names: list[str]) -> bool:
    """Whether `value` is a speaker's name, or the start of one written as a name ("Cal" for
    Calvin), with at most words of address ("my friend")."""
    rest = [w for w in _SPOKEN.findall(value) if w.lower() not in _ADDRESS]
    return bool(rest) and all(_names(w, names) for w in rest)


def _check_one(
    p: Proposed,
    by_locator: dict[str, Turn],
    speakers: list[str],
    names: list[str],
    chunk_names: frozenset[str],
    out: Checked,
) -> Fact | str:
    """The fact, or the reason it is dropped."""
    if not p.evidence or any(loc not in by_locator for loc in p.evidence):
        return "locator"
    if p.kind not in KINDS:
        return "kind"
    cited = [by_locator[loc] for loc in dict.fromkeys(p.evidence)]
    value = clean_value(p.value)
    if _only_speaker_named(value, names):
        return "speaker named"
    if _small_talk(value, names):
        return "small talk"
    if not any(occurs(value, t.text) for t in by_locator.values()):
        others = [t for t in by_locator.values() if t not in cited]
        found = found_in_turn(value, [*cited, *others])
        if found is not None:
            value = clean_value(found[0])
            out.respanned += 1
    value, opened = _trim_opening(value)
    value, trimmed = _trim_first_person(value)
    if junk_reason(value) is not None:
        mended = (
            _cut_to_clause(value)
            or next((v for t in cited if (v := _extend_left(value, t.text)) is not None), None)
            or _last_clause(next((v for t in cited if (v := _extend_right(value, t.text))), value))
        )
        if mended is None:
            return "junk value"
        value, trimmed = mended, True
    holder = next((t for t in cited if occurs(value, t.text)), None)
    if holder is None:
        elsewhere = [t for t in by_locator.values() if occurs(value, t.text)]
        if len(elsewhere) == 1:  # copied from a neighbour of the turn it cited: cite the turn it is in
            holder, cited = elsewhere[0], elsewhere
            out.recited += 1
        else:  # its words in order under the gap rule, never a bag of the turn's words
            holder = next((t for t in cited if in_order(value, t) is not None), None)
            if holder is None:
                head = _in_order_head(value, cited)
                if head is None:
                    return "value not in turn"
                value, holder, trimmed = head[0], head[1], True
    return _truthful(p, value, holder, cited, trimmed or opened, chunk_names, speakers, out)


def _in_order_head(value: str, cited: list[Turn]) -> tuple[str, Turn] | None:
    """The longest opening of `value` whose words stand in order in a cited turn and say
    something ("traditions and culture" from "Fascinated by the traditions and can't wait to get
    a taste of the culture" -> "traditions"): what the turn bears out, never a bag of its words."""
    parts = value.split()
    for end in range(len(parts) - 1, 0, -1):
        head = " ".join(parts[:end]).rstrip(",;:")
        last = words_of(head)[-1] if words_of(head) else ""
        if junk_reason(head) is not None or vacuous(head) or past_form(last) or last.endswith("ing"):
            continue  # "moved to Paris" is not "moved": a verb cut from what it did
        holder = next((t for t in cited if in_order(head, t) is not None), None)
        if holder is not None:
            return head, holder
    return None


def _truthful(
    p: Proposed,
    value: str,
    holder: Turn,
    cited: list[Turn],
    trimmed: bool,
    chunk_names: frozenset[str],
    speakers: list[str],
    out: Checked,
) -> Fact | str:
    """The fact with who, what and when taken from the turn (`truthful.py`), or why it is
    dropped: the value stands only in a question (`asked`), is denied and the denial is too far
    to keep (`negated`), its clause names nobody a line can hold (`subject`), or a truth rule
    still fails (`fact_truth.REASONS`)."""
    found = in_order(value, holder)
    if found is None:
        return "asked"
    if negated(found, value):
        grown = with_denial(found, value)
        if grown is None:
            return "negated"
        value, out.denials_kept = grown, out.denials_kept + 1
        found = in_order(value, holder) or found
    who = actor(found, chunk_names)
    if who.who == "addressee":
        return "said to the other"
    subject = subject_of(who, holder, speakers, value)
    first = (tokens_of(value) or [""])[0]
    if who.who == "named" and len(who.words) == 1 and first[:1].isupper() and first.lower() in chunk_names:
        subject = first  # "Maria lives in Rome" after "my sister": the value names her
    if subject is None:
        return "subject"
    subject = neutralize_locators(subject).replace("|", "/")
    if not _is(p.subject, subject):
        out.rewritten += 1
    kind = fixed_kind(p.kind, found, value)
    day = _iso_day(p.date.strip())
    if (p.date.strip() and day is None) or (day and not day_fits(day, holder.text, holder.date)):
        out.dates_cleared += 1
        day = None
    line = Line(subject, kind, value, day or holder.date)
    reason = false_reason(line, [holder], speakers, names=chunk_names)
    if reason is not None:
        return reason
    out.kinds_fixed += kind != p.kind
    out.trimmed += trimmed
    return Fact(
        holder,
        tuple(cited_loc.locator for cited_loc in cited),
        subject,
        kind,
        clean_attribute(p.attribute, kind),
        value,
        day or "",
    )
