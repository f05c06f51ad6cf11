"""The store's vocabulary, defined once: source locators, fact identity and citations.

Every layer reads these: the stream and the loaders (locators of turns), the preservation
guard (tools) and `memdir diff --facts` (analytics), which must give one verdict on every
rewrite, the offline searcher, the evaluation (evidence hits, resolving citations) and the
skill setting (serving cited entries). A second copy of any of them is how two parts of the
system came to disagree on what a fact or a citation is, so this module is a leaf: it imports
nothing from memdir, and everything else imports it. The rules are docs/conventions.md.

- **Locators** (docs/conventions.md, "Source locators"): `S6T5` (session 6, turn 5: LoCoMo,
  REALTALK, the generated benchmark), `B3M12` (block 3, message 12: PersonaMem), `E12` (episode
  12 of a skill chain); in a file they stand in brackets, one or several: `[S6T5, S7T2]`.
- **Facts** (docs/conventions.md, "Fact lines"): a fact line carries a locator; two fact lines
  are one fact when their locator sets and their normalized words agree. The rule is that
  a reorganization may move and rename but never drop a fact (docs/study.md, design rule
  4), so the identity ignores what moving and re-styling change (position, list and heading
  markers, emphasis, locator order, case) and keeps what a fact says and where it came from.
- **Keyed facts** (docs/conventions.md, "Keyed facts and dated supersede"):
  `- SUBJECT | ATTRIBUTE: VALUE (since DATE) [LOC]`, struck through with `(FROM until DATE)`
  when superseded; one live value per key. `memdir check` and the one-live-value guard read them here.
- **Sync marks** (docs/sync.md): the notes a sync writes around the two versions of lines two
  stores edited differently, which `memdir check` reports until a person or an agent keeps one.
- **Citations** (docs/conventions.md, "Citations"): a path, optionally narrowed to lines
  (`:12-18`, `:12`, `#L12-L18`) or to a section (`> # A > ## B`).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# -- locators ---------------------------------------------------------------------------
MAX_DIGITS = 9
"""The longest number a locator holds. Longer ones are not locators: nothing then calls int()
on 5,000 digits (Python refuses past 4,300), and every number read fits a session count."""
MAX_NUMBER = 10**MAX_DIGITS - 1
_N = rf"\d{{1,{MAX_DIGITS}}}"
SESSION_TURN = rf"S{_N}T{_N}"
BLOCK_MESSAGE = rf"B{_N}M{_N}"
EPISODE = rf"E{_N}"
TURN = rf"(?:{SESSION_TURN}|{BLOCK_MESSAGE})"
"""A locator of one turn of a dialogue stream (what `stream.Turn.locator` holds)."""
ONE = rf"(?:{TURN}|{EPISODE})"
"""Any one locator, unbracketed."""

LOCATOR = re.compile(rf"\[({ONE}(?:,\s*{ONE})*)\]")
"""A bracketed locator group, as facts carry them; group 1 is its inside (`S6T5, S7T2`)."""
BARE = re.compile(rf"\b({ONE})\b")
"""One locator anywhere in text, bracketed or not (evidence in a cited passage)."""
_TURN_FULL = re.compile(rf"{TURN}")
_NUMBERS = re.compile(r"\d+")


# Locator-shaped text whatever its numbers' length: what user text must not carry into a line
# (`neutralize_locators`), and what `check` reports when a number is past the bound.
_ANY = r"(?:S\d+T\d+|B\d+M\d+|E\d+)"
SHAPED = re.compile(rf"\[({_ANY}(?:,\s*{_ANY})*)\]")
_LONG_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1}}}")


def neutralize_locators(text: str) -> str:
    """`text` with each locator-shaped group in parentheses: `[S1T1]` -> `(S1T1)`.

    A turn's words written into a fact line must not cite: a `[S1T1]` a user typed would make
    the line cite a turn nobody said there (docs/conventions.md, "Source locators"). The
    parentheses keep the words readable, and `locators` matches brackets only."""
    return SHAPED.sub(r"(\1)", text) if "[" in text else text


def overlong_locators(text: str) -> Iterator[tuple[int, str]]:
    """(line number, group) of each locator-shaped group whose numbers pass MAX_DIGITS: text
    that looks like a citation but cites nothing."""
    if "[" not in text or not _LONG_NUMBER.search(text):  # most files: one scan, no line split
        return
    for lineno, line in enumerate(lines(text), start=1):
        for m in SHAPED.finditer(line):
            if not LOCATOR.fullmatch(m.group(0)):
                yield lineno, m.group(0)


def turn_numbers(locator: str) -> tuple[int, int] | None:
    """(session, turn) of `S6T5`, (block, message) of `B3M12`; None for anything else."""
    if not _TURN_FULL.fullmatch(locator):
        return None
    group, item = _NUMBERS.findall(locator)
    return int(group), int(item)


def locators(text: str) -> tuple[str, ...]:
    """Every locator in the bracketed groups of `text`, sorted and de-duplicated (a set)."""
    found: set[str] = set()
    for m in LOCATOR.finditer(text):
        found.update(part.strip() for part in m.group(1).split(","))
    return tuple(sorted(found))


# -- lines ------------------------------------------------------------------------------
LINE_BREAKS = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
"""Every code point `str.splitlines` (or a YAML reader) ends a line at."""


def lines(text: str) -> list[str]:
    """The lines of a memdir file: split at `\n` only, as the tools number them. `splitlines`
    also splits at `\r`, U+2028 and others, so one line of a file would read as two, the second
    free to look like anything (a grep hit, a listing entry)."""
    return text.split("\n")


def one_line(text: str) -> str:
    """`text` shown on one line: each run of line breaks (any of LINE_BREAKS) with the spaces
    around it becomes one space. For what a listing shows beside a name (a description)."""
    if not LINE_BREAKS.search(text):
        return text
    return re.sub(rf"\s*{LINE_BREAKS.pattern}\s*", " ", text).strip()  # \s holds every break


# -- fact identity ----------------------------------------------------------------------
Fact = tuple[tuple[str, ...], str]
"""A fact's identity: (its locators as a sorted set, its normalized words)."""

_LEAD = re.compile(r"^(?:\s*>)*\s*(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)?")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"\*\*|__|~~|[*`]|(?<!\w)_|_(?!\w)")
_TRAIL_HASHES = re.compile(r"\s#+\s*$")


def normalize(line: str) -> str:
    """The words of a line with locators and markdown removed: what 'the same fact' compares.

    Dropped: locator groups; leading blockquote, heading, list, task-box and ordered-list
    markers; closing heading hashes; emphasis, strike-through and code marks; link targets
    (the link text stays). Then whitespace is collapsed and case folded. Pipes, colons, dates
    and other punctuation stay, since they carry meaning in keyed facts.
    """
    text = LOCATOR.sub(" ", line)
    text = _LEAD.sub("", text, count=1)
    text = _TRAIL_HASHES.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _MARKS.sub("", text)
    return " ".join(text.split()).casefold()


def fact_identity(line: str) -> Fact | None:
    """The identity of the fact on `line`, or None when the line carries no locator."""
    locs = locators(line)
    return (locs, normalize(line)) if locs else None


# -- dates -----------------------------------------------------------------------------

_ISO_DAY = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")


def spoken_date(day: datetime.date) -> str:
    """A day as people write it in answers (`7 May 2023`): the store keeps ISO days, which sort
    and supersede, but an answer is read by a person and scored against golds in this form."""
    return f"{day.day} {day:%B} {day.year}"


def spoken_dates(text: str) -> str:
    """`text` with every valid ISO day written as `spoken_date` does; anything else unchanged."""

    def one(m: re.Match[str]) -> str:
        try:
            return spoken_date(datetime.date(int(m[1]), int(m[2]), int(m[3])))
        except ValueError:
            return m[0]

    return _ISO_DAY.sub(one, text)


# -- keyed facts (dated supersede) -----------------------------------------------------

_DATE = r"(?:\d{4}-\d{2}-\d{2}|unknown)"
_LOC_TAIL = rf"\s*(?P<loc>{LOCATOR.pattern})\s*$"
LIVE = re.compile(
    r"^\s*[-*+]\s+(?P<subject>[^|~\n]+?)\s*\|\s*(?P<attribute>[^:\n]+?)\s*:\s*(?P<value>.+?)\s*"
    rf"\(since\s+(?P<since>{_DATE})\){_LOC_TAIL}"
)
"""`- SUBJECT | ATTRIBUTE: VALUE (since DATE) [LOC]`."""

SUPERSEDED = re.compile(
    r"^\s*[-*+]\s+~~\s*(?P<subject>[^|~\n]+?)\s*\|\s*(?P<attribute>[^:\n]+?)\s*:\s*(?P<value>.+?)\s*~~\s*"
    rf"\((?P<since>{_DATE})\s+until\s+(?P<until>{_DATE})\){_LOC_TAIL}"
)
"""`- ~~SUBJECT | ATTRIBUTE: VALUE~~ (FROM-DATE until DATE) [LOC]`."""


def key_of(subject: str, attribute: str) -> tuple[str, str]:
    """A keyed fact's key, compared case-insensitively after collapsing spaces."""
    return (" ".join(subject.split()).casefold(), " ".join(attribute.split()).casefold())


@dataclass(frozen=True)
class KeyedFact:
    """One line of the dated-update convention: a live value or a superseded one."""

    path: str
    lineno: int
    subject: str
    attribute: str
    value: str
    live: bool
    since: str
    until: str | None
    locators: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str]:
        return key_of(self.subject, self.attribute)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.lineno}"


def parse_keyed(path: str, lineno: int, line: str) -> KeyedFact | None:
    """The keyed fact on this line, or None when the line is not in the keyed format."""
    m = SUPERSEDED.match(line)
    if m:
        return KeyedFact(
            path,
            lineno,
            m["subject"],
            m["attribute"],
            m["value"],
            False,
            m["since"],
            m["until"],
            locators(m["loc"]),
        )
    m = LIVE.match(line)
    if m:
        return KeyedFact(
            path, lineno, m["subject"], m["attribute"], m["value"], True, m["since"], None, locators(m["loc"])
        )
    return None


def keyed_line(
    subject: str, attribute: str, value: str, since: str, until: str | None, locs: Iterable[str]
) -> str:
    """The line `parse_keyed` reads back: live when `until` is None, else struck through."""
    loc = ", ".join(locs)
    if until is None:
        return f"- {subject} | {attribute}: {value} (since {since}) [{loc}]"
    return f"- ~~{subject} | {attribute}: {value}~~ ({since} until {until}) [{loc}]"


def keyed_facts(path: str, text: str) -> Iterator[KeyedFact]:
    for lineno, line in enumerate(lines(text), start=1):
        if "|" in line and LOCATOR.search(line):
            kf = parse_keyed(path, lineno, line)
            if kf is not None:
                yield kf


def looks_keyed(line: str) -> bool:
    """A list line shaped like `- SUBJECT | ATTRIBUTE: ...` with a locator that the keyed
    grammar nevertheless refuses (a missing `(since DATE)`, a bad date): worth a warning. A
    distilled line (`DISTILLED`) has that shape by design and is not one."""
    return (
        bool(re.match(r"^\s*[-*+]\s+(?:~~)?[^|\n]+\|[^:\n]+:", line))
        and bool(LOCATOR.search(line))
        and not DISTILLED.match(line)
    )


# -- distilled lines (events and plans) -------------------------------------------------

DISTILLED_KINDS = ("event", "plan", "fact", "preference", "relation")
DISTILLED = re.compile(
    r"^\s*[-*+]\s+(?:(?P<date>\d{4}-\d{2}-\d{2}):\s+)?(?P<subject>[^|~\n:]+?)\s*\|\s*"
    rf"(?P<kind>{'|'.join(DISTILLED_KINDS)})\s*:\s*(?P<value>.+?){_LOC_TAIL}"
)
"""`- DATE: SUBJECT | KIND: VALUE [LOC]`: a fact distilled from a turn that is not one live value
of a key (an event, a plan; a second value of a key within one chunk), filed on the day it was
said. Not a keyed fact: no supersede, any number per subject."""


@dataclass(frozen=True)
class DistilledFact:
    subject: str
    kind: str
    value: str
    date: str | None
    locators: tuple[str, ...]


def parse_distilled(line: str) -> DistilledFact | None:
    m = DISTILLED.match(line)
    if m is None:
        return None
    return DistilledFact(m["subject"], m["kind"], m["value"], m["date"], locators(m["loc"]))


def distilled_line(subject: str, kind: str, value: str, date: str | None, locs: Iterable[str]) -> str:
    """The line `parse_distilled` reads back."""
    dated = f"{date}: " if date else ""
    return f"- {dated}{subject} | {kind}: {value} [{', '.join(locs)}]"


def live_by_key(facts: Iterable[KeyedFact]) -> dict[tuple[str, str], list[KeyedFact]]:
    out: dict[tuple[str, str], list[KeyedFact]] = {}
    for f in facts:
        if f.live:
            out.setdefault(f.key, []).append(f)
    return out


# -- sync marks ------------------------------------------------------------------------
SYNC_MARK = "<!-- memdir sync:"
"""How every note a sync writes into a memory file begins (an HTML comment: no locator, so
never a fact line, and no git conflict marker)."""
SYNC_ONE = f"{SYNC_MARK} these lines were edited differently on two stores; one version: -->"
SYNC_OTHER = f"{SYNC_MARK} the other version: -->"
SYNC_END = f"{SYNC_MARK} end of the two versions; keep what is true and delete these notes -->"


def sync_conflicts(text: str) -> Iterator[int]:
    """The line number of each pair of versions a sync kept in `text` (its opening note)."""
    if SYNC_MARK not in text:
        return
    for lineno, line in enumerate(lines(text), start=1):
        if line.strip() == SYNC_ONE:
            yield lineno


# -- citations --------------------------------------------------------------------------
ROOT = "/memories"
_LINE_RANGE = rf"(?::|#L)(?P<start>{_N})(?:\s*-\s*L?(?P<end>{_N}))?"
_HEADING = r"#{1,6} [^>\n\"',\]]+?"
CITATION = re.compile(
    rf"{ROOT}(?:/[\w.\-]+)+"
    rf"(?:{_LINE_RANGE}|(?:\s*>\s*{_HEADING})+(?=\s*(?:>|$|[\"',\]\n])))?"
)
"""A citation written in prose (an answer without its JSON object): `/memories/...` paths only."""
_FORM = re.compile(rf"(?P<path>.+?)(?:(?<=\.md){_LINE_RANGE}|\s*>\s*(?P<section>#.*))?", re.DOTALL)
_WRAP = "`'\"[]"
_SECTION_LINES = re.compile(
    rf"(?P<section>#.*?)\s*(?::\s*|#L)(?P<start>{_N})(?:\s*-\s*L?(?P<end>{_N}))?", re.DOTALL
)


@dataclass(frozen=True)
class CitationTarget:
    """What a citation names: a file, narrowed to lines `start..end` or to a section path."""

    path: str
    start: int | None = None
    end: int | None = None
    section: str | None = None


def memory_path(raw: str) -> str:
    """A cited path as a `/memories/...` path: quotes and brackets dropped, a path without
    `/memories` taken as relative to it."""
    p = raw.strip().strip(_WRAP).strip()
    return p if p.startswith(ROOT) else f"{ROOT}/{p.lstrip('/')}"


def parse_citation(text: str) -> CitationTarget:
    """`/memories/a.md:3-5` (or `#L3-L5`) -> lines 3..5; `/memories/a.md > # A > ## B` -> that
    section; anything else -> the whole of what it names. Never fails: a citation that names
    nothing is found out when it is resolved."""
    raw = text.strip().strip(_WRAP).strip()
    m = _FORM.fullmatch(raw)
    if m is None:  # only the empty string
        return CitationTarget(memory_path(raw))
    if m["section"] is not None:
        section = m["section"].strip()
        # both forms at once, `a.md > # A > ## B: 7` (a 1.5B model merged the prompt's two
        # examples): the lines, which must lie inside that section
        ranged = _SECTION_LINES.fullmatch(section)
        if ranged is not None:
            start = int(ranged["start"])
            end = int(ranged["end"]) if ranged["end"] else start
            return CitationTarget(memory_path(m["path"]), start, end, section=ranged["section"].strip())
        return CitationTarget(memory_path(m["path"]), section=section)
    if m["start"] is not None:
        start = int(m["start"])
        return CitationTarget(memory_path(m["path"]), start, int(m["end"]) if m["end"] else start)
    return CitationTarget(memory_path(raw))


def find_citations(text: str) -> list[str]:
    """Every citation written in `text`, in order."""
    return [m.group(0).strip() for m in CITATION.finditer(text)]
