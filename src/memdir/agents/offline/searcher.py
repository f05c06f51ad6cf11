"""The lexical searcher, an offline baseline policy: the answering role with no model, through the
same read-only tools.

It navigates before it reads. The root listing (names, sizes, descriptions; no file body opened)
shows which folders the question names, a person's folder say; the searcher reads that folder's
`MEMORY.md`, and when the index lists a keyed-fact section the question cues (someone's home,
job, diet) it reads that section: `toc`, then `section_read`. Candidate lines come from grep for
the question's content words (or bm25_full_search when the profile has it; with `section_search`, the
sections it ranks by meaning and keywords are read, and only them), inside the named
folders when there are any (their name is then no longer a search word: every line there is
about them), else over the store. The best-ranked files are then read: a small file whole, a
larger one by the section around its best hit (`toc`, `section_read`), whole only when no section
holds it. Every line read is scored by idf-weighted term overlap with the question and the
answer is the best-supported sentence, citing its line. Current keyed values beat struck-through
past ones unless the question asks about the past ("before", "previously", "did she use to"), and
then a value the question names is where it starts ("before Porto"), not the answer. When the
question names a person, that person's live keyed fact of the attribute it cues ("eat" cues
diet) comes first, and their own lines beat lines that merely mention them; an assistant's line
is never the answer while a person's line matches (the assistant's turns are kept only as
context, docs/conventions.md, "People"). A baseline, labelled so in every output.
"""

from __future__ import annotations

import datetime
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memdir.agents.offline import navigate
from memdir.agents.offline.navigate import Entry
from memdir.agents.offline.speakers import is_assistant
from memdir.agents.offline.text import STOPWORDS, WORD, terms
from memdir.conventions import LOCATOR, TURN, parse_keyed, spoken_date
from memdir.models.base import LoggedCall
from memdir.search.hybrid import is_navigation
from memdir.tools.profiles import Harness
from memdir.words import sentences

HIT = re.compile(r"^(?P<path>/memories/\S+?\.md):(?P<line>\d+): (?P<text>.*)$")
NUMBERED = re.compile(r"^\s*(?P<n>\d+)\t(?P<text>.*)$")
TOC_ROW = re.compile(r"^\s*(?P<label>#{1,6} .*?)\s+\[lines (?P<a>\d+)-(?P<b>\d+)\]$")
TRAILING_LOCATOR = re.compile(rf"\s*{LOCATOR.pattern}\s*$")  # the group that ends a fact line
PAST_WORDS = re.compile(
    r"\b(used to|did\s+(?:\S+\s+){1,3}?use to|before|previous(ly)?|past|originally|first|old|earlier|"
    r"former(ly)?)\b",
    re.I,
)
DATE_Q = re.compile(r"^\s*(when|what (date|day|year|month))\b", re.I)
CHUNK_TURN = re.compile(rf"^\[(?P<loc>{TURN})\] (?P<rest>.*)$")  # a turn as a chunk shows it
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
# The speaker a turn line names: `- 2023-05-01: Alice: text [S1T2]` (keyed lines hold a `|`).
SPEAKER = re.compile(r"^(?:[-*]\s+)?(?:\d{4}-\d{2}-\d{2}:\s*)?(?P<speaker>[A-Za-z][\w .'-]{0,40}?):\s+")
# A verbatim dump's session heading: its turn lines carry the date only where it is not this one
# (agents/dump_format.py, the paper's line format), so a turn read there is dated by it.
SESSION_HEADING = re.compile(r"^# Session \d+ \((?P<date>\d{4}-\d{2}-\d{2})\)$")
SESSION_DESCRIPTION = re.compile(r"^Session \d+, (?P<date>\d{4}-\d{2}-\d{2}), ")  # as a listing shows it
SECTION_HIT = re.compile(r"^\d+\. (?P<path>/memories/\S+?\.md) lines? (?P<a>\d+)(?:-(?P<b>\d+))?", re.M)
CHUNK_TOOLS = ("bm25_chunk_retrieve", "hybrid_chunk_retrieve")
TOP_FILES = 3
GREP_MAX = 300
SMALL_FILE = 2048
"""A file up to this size (as a listing shows it) is read whole. `toc` and `section_read` each
read the whole file, so on a file this small a toc saves nothing; on a larger one the section
keeps what is read to what the question is about."""


@dataclass
class Line:
    path: str
    n: int
    text: str
    score: float = 0.0


@dataclass
class SearchResult:
    answer: str
    citations: list[str]
    lines: list[Line] = field(default_factory=list)
    tool_calls: list[LoggedCall] = field(default_factory=list)


def _pattern(words: list[str]) -> str:
    return r"\b(?:" + "|".join(re.escape(w) for w in sorted(set(words))) + ")"


class LexicalSearcher:
    def __init__(self, harness: Harness) -> None:
        self.h = harness
        self.calls: list[LoggedCall] = []
        self.sizes: dict[str, int] = {}  # file sizes the listings showed
        self.opened: set[str] = set()  # files a keyed section was read from
        self.session_dates: dict[str, str] = {}  # a dump's session file: the date its heading gives
        self._seen: dict[tuple[str, tuple[tuple[str, Any], ...]], tuple[str, bool]] = {}

    def _call(self, name: str, **args: Any) -> tuple[str, bool]:
        self.calls.append({"name": name, "args": args})
        res = self.h.call(name, args)
        return res.text, res.is_error

    def retrieve(self, question: str) -> list[Line]:
        """Every line read while looking, scored against the question; best first."""
        q_terms = terms(question)
        if not q_terms:
            q_terms = [w.lower() for w in WORD.findall(question) if w.lower() not in STOPWORDS][:5]
        if not q_terms:
            return []
        chunk_tool = next((t for t in CHUNK_TOOLS if t in self.h.specs), None)
        if "grep" not in self.h.specs and chunk_tool:
            return self._from_chunks(chunk_tool, question, q_terms)
        found: dict[tuple[str, int], Line] = {}
        file_rank: Counter[str] = Counter()
        entries = self._listing("/memories")
        scopes = navigate.named_folders(entries, question)
        for folder in scopes:
            index, _ = self._once("view", path=f"{folder}/MEMORY.md")
            self._listing(folder)  # the sizes of the files below it
            for path, attr in navigate.keyed_sections(index, folder, question):
                for ln in self._read_section(path, f"## {attr}"):
                    found.setdefault((ln.path, ln.n), ln)
        names = navigate.name_stems(scopes)
        probe = [t for t in q_terms if t not in names] or q_terms
        for scope in scopes or ["/memories"]:
            if "section_search" in self.h.specs:  # by meaning and keywords: read what it ranks
                text, err = self._call("section_search", query=question, path=scope, top_k=TOP_FILES)
                for i, sec in enumerate(SECTION_HIT.finditer("" if err else text)):
                    file_rank[sec["path"]] += 10.0 / (i + 1)  # type: ignore[assignment]
                    for ln in self._read_lines(sec["path"], int(sec["a"]), int(sec["b"] or sec["a"])):
                        found.setdefault((ln.path, ln.n), ln)
            elif "bm25_full_search" in self.h.specs:
                text, err = self._call("bm25_full_search", query=" ".join(probe), path=scope, top_k=TOP_FILES)
                if not err:
                    for i, path in enumerate(dict.fromkeys(re.findall(r"/memories/\S+?\.md", text))):
                        file_rank[path] += 10.0 / (i + 1)  # type: ignore[assignment]
            text, err = self._call("grep", pattern=_pattern(probe), path=scope, max_results=GREP_MAX)
            if not err:
                for row in text.split("\n")[1:]:
                    m = HIT.match(row)
                    if m:
                        found.setdefault(
                            (m["path"], int(m["line"])), Line(m["path"], int(m["line"]), m["text"])
                        )
        hits = list(found.values())
        self._score(hits, question, q_terms)
        for ln in hits:
            file_rank[ln.path] += ln.score  # type: ignore[assignment]
        for path, _ in file_rank.most_common(TOP_FILES):
            if path in self.opened:
                continue  # read already, by the section its index pointed to
            best = max((ln for ln in hits if ln.path == path), key=lambda x: x.score, default=None)
            for ln in self._read(path, best.n if best else None):
                found.setdefault((ln.path, ln.n), ln)
        lines = [self._dated(ln) for ln in found.values()]
        self._score(lines, question, q_terms)
        return sorted(lines, key=lambda x: (-x.score, -_date_key(x.text), x.path, x.n))

    def _dated(self, ln: Line) -> Line:
        """A dump's turn line without a date of its own, dated by its session's heading (seen in
        any read of its file), as a fact line shows it: `- date: Speaker: text [S1T2]`."""
        date = self.session_dates.get(ln.path)
        if date is None or DATE.match(ln.text.lstrip("-* ")) or speaker_of(ln.text) is None:
            return ln
        said = re.sub(r"^[-*]\s+", "", ln.text)
        return Line(ln.path, ln.n, f"- {date}: {said}", ln.score)

    def _once(self, name: str, **args: Any) -> tuple[str, bool]:
        """A signpost read once per searcher (the chooser retrieves several probes in a row)."""
        key = (name, tuple(sorted(args.items())))
        if key not in self._seen:
            self._seen[key] = self._call(name, **args)
        return self._seen[key]

    def _listing(self, folder: str) -> list[Entry]:
        text, err = self._once("view", path=folder)
        entries = [] if err else navigate.parse_listing(text)
        self.sizes.update({e.path: e.size for e in entries if not e.is_dir})
        for e in entries:
            if not e.is_dir and (d := SESSION_DESCRIPTION.match(e.description)):
                self.session_dates.setdefault(e.path, d["date"])
        return entries

    def _from_chunks(self, tool: str, question: str, q_terms: list[str]) -> list[Line]:
        """The chunk-retrieval profiles: one retrieval, every line of the returned chunks scored
        (each chunk comes back in full, so its line numbers are the file's). BM25 gets the
        question's terms; hybrid the question itself, whose wording the embedding reads."""
        query = " ".join(q_terms) if tool == "bm25_chunk_retrieve" else question
        text, err = self._call(tool, query=query)
        if err:
            return []
        lines: list[Line] = []
        for block in re.split(r"^=== ", text, flags=re.M)[1:]:
            head, _, body = block.partition("\n")
            path, date = head.split(" ", 1)[0], ""
            for n, row in enumerate(body.split("\n"), start=1):
                if heading := re.fullmatch(r"## (\d{4}-\d{2}-\d{2})", row):
                    date = heading[1]
                elif turn := CHUNK_TURN.match(row):  # seen as a fact line: `- date: Speaker: text [S1T2]`
                    lines.append(
                        Line(path, n, f"- {date + ': ' if date else ''}{turn['rest']} [{turn['loc']}]")
                    )
        self._score(lines, question, q_terms)
        return sorted(lines, key=lambda x: (-x.score, -_date_key(x.text), x.path, x.n))

    def _toc(self, path: str) -> list[tuple[str, int, int]]:
        """(section path, first line, last line) of every heading of `path`, from its toc."""
        toc, err = self._call("toc", path=path)
        if err:
            return []
        spans: list[tuple[str, int, int]] = []
        stack: list[tuple[int, str]] = []
        for row in toc.split("\n")[1:]:
            m = TOC_ROW.match(row)
            if not m:
                continue
            level = len(m["label"].split(" ", 1)[0])
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m["label"]))
            spans.append((" > ".join(lbl for _, lbl in stack), int(m["a"]), int(m["b"])))
        return spans

    def _read_section(self, path: str, heading: str) -> list[Line]:
        """The section an index pointed to (`## home` of a keyed-facts file): toc, section_read."""
        self.opened.add(path)
        spans = [s for s in self._toc(path) if s[0].rsplit(" > ", 1)[-1] == heading]
        return (
            self._numbered(path, *self._call("section_read", path=path, section_path=spans[0][0]))
            if spans
            else []
        )

    def _read(self, path: str, line: int | None) -> list[Line]:
        """A small file whole; a larger one by the narrowest section holding `line`, whole when none does."""
        if path not in self.sizes:
            self._listing(path.rsplit("/", 1)[0])  # its size, when the root listing did not reach it
        size = self.sizes.get(path)
        if size is None or size > SMALL_FILE:
            inside = [s for s in self._toc(path) if line is not None and s[1] <= line <= s[2]]
            if inside:
                sec = min(inside, key=lambda s: s[2] - s[1])
                return self._numbered(path, *self._call("section_read", path=path, section_path=sec[0]))
        return self._numbered(path, *self._call("view", path=path))

    def _read_lines(self, path: str, start: int, end: int) -> list[Line]:
        """The lines of a section `section_search` ranked, and no more."""
        self.opened.add(path)
        return self._numbered(path, *self._call("view", path=path, start_line=start, end_line=end))

    def _numbered(self, path: str, text: str, err: bool) -> list[Line]:
        if err:
            return []
        out: list[Line] = []
        for row in text.split("\n")[1:]:
            m = NUMBERED.match(row)
            if m:
                out.append(Line(path, int(m["n"]), m["text"]))
                if head := SESSION_HEADING.match(m["text"]):
                    self.session_dates[path] = head["date"]
        return out

    def _score(self, lines: list[Line], question: str, q_terms: list[str]) -> None:
        docs = [set(terms(ln.text)) for ln in lines]
        n = max(len(docs), 1)
        df = Counter(t for d in docs for t in set(q_terms) if t in d)
        wants_past = bool(PAST_WORDS.search(question))
        named = navigate.proper_names(question)
        for ln, d in zip(lines, docs, strict=True):
            s = sum(math.log(1 + n / df[t]) for t in set(q_terms) if t in d)
            keyed = parse_keyed(ln.path, ln.n, ln.text)
            who = speaker_of(ln.text)
            if keyed and navigate.cued(keyed.attribute.strip(), question):
                s = (s + 1.0) * 1.5
                if _names(keyed.subject, named):
                    s *= 2.0  # the named person's own value of what is asked
            if who is not None and is_assistant(who):
                s *= 0.1  # context the assistant said, never the person's fact
            elif who is not None and _names(who, named):
                s *= 1.5  # the person's own line, not one that merely mentions them
            if keyed and wants_past and (said := set(terms(keyed.value))) and said <= set(q_terms):
                s *= 0.1  # "where did Ana live before Porto": Porto is where the question starts
            if keyed and keyed.live:
                s *= 0.7 if wants_past else 1.5
            elif ln.text.startswith("- ~~"):
                s *= 1.5 if wants_past else 0.3
            elif ln.text.lstrip().startswith("#") or ln.text.startswith(("name:", "description:", "---")):
                s *= 0.2
            ln.score = s

    def search(self, question: str) -> SearchResult:
        lines = self.retrieve(question)
        # a folder index's line points at content and is never the answer (an index entry such as
        # `maya/: Maya (the user)` answered "Where does the user live?")
        said = [ln for ln in lines if ln.score > 0 and not is_navigation(ln.path)]
        people = [ln for ln in said if not is_assistant(speaker_of(ln.text) or "")]
        if not said:
            return SearchResult("The store does not say.", [], lines, self.calls)
        best = (people or said)[0]
        return SearchResult(extract(best.text, question), [f"{best.path}:{best.n}"], lines, self.calls)


def speaker_of(line: str) -> str | None:
    """Who said a turn line (`- 2023-05-01: Alice: ...` gives "Alice"), or None for other lines."""
    m = SPEAKER.match(line)
    return m["speaker"].strip() if m else None


def _names(who: str, named: set[str]) -> bool:
    """`who` (a speaker or keyed subject) is a person the question names: all its words are."""
    parts = {p for p in re.split(r"[\s-]+", who.lower()) if p}
    return bool(parts) and parts <= named


def _date_key(text: str) -> int:
    m = DATE.search(text)
    return int(m.group(1).replace("-", "")) if m else 0


def extract(line: str, question: str) -> str:
    """The answer inside a line: a keyed value, or the sentence sharing most words with the question."""
    keyed = parse_keyed("", 0, line)
    if keyed is not None:
        return (
            keyed.value.strip()
            if keyed.live
            else f"{keyed.value.strip()} ({keyed.since} until {keyed.until})"
        )
    body = TRAILING_LOCATOR.sub("", line).strip()
    body = re.sub(r"^[-*]\s+", "", body).replace("~~", "")
    date = DATE.match(body)
    body = re.sub(r"^\d{4}-\d{2}-\d{2}:\s*", "", body)
    body = SPEAKER.sub("", body)  # "Alice: ..." speaker prefix
    # the speaker's own name says nothing in their line ("Hi, I'm Alice." is no answer about Alice)
    q = set(terms(question)) - set(terms(speaker_of(line) or ""))
    best = max(sentences(body) or [body], key=lambda s: (len(q & set(terms(s))), -len(s)))
    if date and DATE_Q.search(question):
        return spoken_date(datetime.date.fromisoformat(date.group(1)))  # the session's date
    return best
