"""The deterministic curator, an offline baseline policy: the management role with no model,
through the same tools.

It partitions along what questions name (docs/study.md, design rule 1): a folder per person
(the subject; questions name people), and in it
- `facts.md`: the person's keyed facts, a `## attribute` section per attribute. Each keyed fact
  is routed by (subject, attribute) alone to one section of one file, so a key's whole dated
  history (the live line above its struck-through past values, docs/conventions.md) is in one
  place and a stale value can never stand as live in another file (rule 3);
- a folder per topic (`work/`, `travel/`, ...) holding a file per day, `2023-05-01.md`: what the
  person said about that topic that day, verbatim as fact lines with their locators, a line per
  sentence. Every fact is kept.
Why files this small: `view`, `toc` and `section_read` each meter the whole file they open, so
what a question costs is the size of the files it leads to. A (person, topic, day) file stays
the same size however long the conversation grows; a file per person grows with it (the old
layout read several times the dump's bytes: benchmarks/results/2026-12-06-docstring-figures.md,
"agents/offline/curator.py"), and a (person, day) file is half a session, about half the dump's
cost. Fanout is capped (rule 2): every folder has a `MEMORY.md` index, and a folder that would
pass the cap sends further days a level down, into a year folder, then a month folder. Turns
that state a keyed fact in a simple first-person pattern ("I now prefer tea", "I live in
Boston", "I work as a nurse") also write or supersede its keyed line. It is a baseline, labelled
so in every record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from memdir.agents.offline.extract import keyed_facts
from memdir.agents.offline.navigate import ATTRIBUTES_SAY
from memdir.agents.offline.speakers import (
    USER,
    USER_MARK,
    introduced_name,
    is_assistant,
    is_user,
    user_in_index,
)
from memdir.agents.offline.text import slug, terms, topic_of
from memdir.conventions import distilled_line, key_of, neutralize_locators, parse_keyed, turn_numbers
from memdir.errors import MemdirError
from memdir.fact_quality import junk_reason
from memdir.fact_truth import Line, false_reason
from memdir.models.base import LoggedCall
from memdir.store.spec import DEFAULT_FANOUT_CAP
from memdir.stream import Chunk, Turn
from memdir.tools.profiles import Harness
from memdir.tools.view import MAX_VIEW_BYTES
from memdir.words import sentences

PEOPLE = "/memories/people"
FACTS = "facts.md"
MONTHS = 12
YEARS = 10
ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# A day file past this continues in DAY-2.md, DAY-3.md, ...: the curator views a file whole before
# it appends, and `view` shows at most MAX_VIEW_BYTES; with a turn at most 256 KiB, a part never
# passes the cap by more than one line.
DAY_PART_BYTES = MAX_VIEW_BYTES // 2
ROOT_LINE = (
    "- people/: a folder per person: facts.md holds their keyed facts (current and past values, one\n"
    "  section per attribute); a folder per topic holds what they said, one file per day.\n"
    "  Start at /memories/people/MEMORY.md."
)
ROOT_INDEX = f"""---
description: Root index of this memory; core memory, always loaded.
---
# Memory

{ROOT_LINE}
"""
PEOPLE_INDEX = """---
description: Index of the people folder; a folder per person.
---
# People
"""


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def day_of(turn: Turn) -> tuple[str, str, str]:
    """(year folder, file stem, month bucket) a turn is filed under: its date, else its session."""
    if turn.date and ISO_DAY.fullmatch(turn.date):
        return turn.date[:4], turn.date, turn.date[:7]
    group = (turn_numbers(turn.locator) or (0, 0))[0]
    lo = (group - 1) // 25 * 25 + 1 if group > 0 else 0
    return "undated", f"session-{group}", f"sessions-{lo}-{lo + 24}"


# Keys a person holds many values of at once: a second liking struck the first through as past
# (REALTALK Chat_1: "I prefer wide bodies" ended "a stroll in the park", a false end date). A
# new value supersedes only when its turn says a change (`_CHANGE`: "I now prefer tea").
MANY_VALUED = frozenset({"preference"})
_CHANGE = re.compile(r"\b(?:now|anymore|any more|no longer|instead|switched|these days|changed)\b", re.I)


def _restated(live: str, said: str, text: str) -> bool:
    """The live value said again in more or fewer words ("Subaru Outback to work", then "I still
    drive a Subaru Outback"): the content words of one are all among the other's, both open
    with the same one (a word put before a value makes another: "manager", then "assistant
    manager"), and the turn marks no change (`_CHANGE`, "new")."""
    first, then = terms(live), terms(said)
    a, b = set(first), set(then)
    changed = _CHANGE.search(text) is not None or re.search(r"\bnew\b", text, re.I) is not None
    return bool(a and b) and (a <= b or b <= a) and first[0] == then[0] and not changed


@dataclass
class CurationResult:
    tool_calls: list[LoggedCall] = field(default_factory=list)
    superseded: int = 0
    keyed_written: int = 0
    keyed_refused: int = 0  # junk values, and values false of their turn (fact_truth), not written
    facts_written: int = 0


def _index(description: str, title: str) -> str:
    return f"---\ndescription: {description}\n---\n# {title}\n"


def _file(name: str, description: str, title: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {title}\n"


def _lines_of(text: str) -> list[str]:
    parts = text.split("\n")
    return parts[:-1] if text.endswith("\n") else parts


class Curator:
    """Integrates chunks into a store through a `manage` harness.

    Within one chunk it remembers the lines of the files it viewed or wrote (it is the only
    writer during the chunk's step), so a second turn of the same day costs one insert, not a
    view and an insert; a str_replace makes it view the file again."""

    def __init__(self, harness: Harness, fanout_cap: int = DEFAULT_FANOUT_CAP) -> None:
        self.h = harness
        self.result = CurationResult()
        # Days a topic folder, then a year folder holds directly: the rest of the cap is left for
        # its MEMORY.md and the folders below it (a decade of years; twelve months).
        self.room = (max(1, fanout_cap - 1 - YEARS), max(1, fanout_cap - 1 - MONTHS))
        self._seen: dict[str, list[str]] = {}

    def _call(self, name: str, **args: Any) -> str:
        self.result.tool_calls.append({"name": name, "args": args})
        return self.h.call_or_raise(name, args)

    def _peek(self, path: str) -> list[str] | None:
        """The lines of `path`, or None when it does not exist."""
        if path not in self._seen:
            self.result.tool_calls.append({"name": "view", "args": {"path": path}})
            res = self.h.call("view", {"path": path})
            if res.is_error:
                return None
            self._seen[path] = [
                row.split("\t", 1)[1] if "\t" in row else "" for row in res.text.split("\n")[1:]
            ]
        return self._seen[path]

    def _lines(self, path: str) -> list[str]:
        lines = self._peek(path)
        if lines is None:
            raise MemdirError(f"the offline curator could not view {path}, a file it needs")
        return lines

    def _create(self, path: str, text: str) -> None:
        self._call("create", path=path, file_text=text)
        self._seen[path] = _lines_of(text)

    def _insert(self, path: str, at: int, text: str) -> None:
        self._call("insert", path=path, insert_line=at, insert_text=text)
        self._lines(path)[at:at] = _lines_of(text + "\n")

    def _replace(self, path: str, old: str, new: str) -> None:
        self._call("str_replace", path=path, old_str=old, new_str=new)
        self._seen.pop(path, None)

    def _ensure_file(self, path: str, text: str) -> bool:
        """Create `path` with `text` unless it exists; True when it was created."""
        if self._peek(path) is not None:
            return False
        self._create(path, text)
        return True

    def _append_line(self, path: str, line: str) -> None:
        self._insert(path, len(self._lines(path)), line)

    def _ensure_folder(self, folder: str, description: str, title: str, parent_line: str) -> None:
        """A folder with its MEMORY.md, listed in the parent folder's index when first made."""
        if self._ensure_file(f"{folder}/MEMORY.md", _index(description, title)):
            self._append_line(f"{folder.rsplit('/', 1)[0]}/MEMORY.md", parent_line)

    def integrate(self, chunk: Chunk) -> CurationResult:
        self.open_roots()
        for speaker, turns in self.people(chunk).items():
            self._integrate_person(speaker, turns)
        return self.result

    def people(self, chunk: Chunk) -> dict[str, list[Turn]]:
        """The chunk's turns per person, persons in order of first turn (docs/conventions.md,
        "People"): the user's turns under their name once known (the user's turns then carry
        it as their speaker), the assistant's beside the person it answers (the turn before,
        else after, else the user), never a person of its own."""
        user = self._user(chunk)
        named = [user if is_user(t.speaker) else t.speaker for t in chunk.turns]
        out: dict[str, list[Turn]] = {}
        for i, turn in enumerate(chunk.turns):
            if is_assistant(turn.speaker):
                near = [n for n in named[i::-1] + named[i:] if not is_assistant(n)]
                out.setdefault(near[0] if near else user, []).append(turn)
            else:
                out.setdefault(named[i], []).append(replace(turn, speaker=named[i]))
        return out

    def user_name(self, chunk: Chunk) -> str:
        """Who the user is in this chunk: their name once known, else `user` (`_user`)."""
        return self._user(chunk)

    def _user(self, chunk: Chunk) -> str:
        """The user's name: as the people index records it, else as a user's turn of this chunk
        introduces them (then recorded there), else `user`. Earlier chunks filed under `user`
        stay in `people/user/`, and its index line says whose they are."""
        index = f"{PEOPLE}/MEMORY.md"
        known = user_in_index(self._lines(index))
        if known is not None:
            return known
        said = (introduced_name(t.text) for t in chunk.turns if is_user(t.speaker))
        name = next((n for n in said if n is not None), None)
        if name is None:
            return USER
        folder = self.person(name).rsplit("/", 1)[1]
        for line in list(self._lines(index)):
            if line.startswith(f"- {folder}/:"):
                self._replace(index, line, f"{line}{USER_MARK}")
            elif line.startswith(f"- {slug(USER)}/:"):
                self._replace(
                    index, line, f"- {slug(USER)}/: the user before they gave their name: {name} ({folder}/)"
                )
        return name

    # The filing, shared with split curation's filer (agents/split/filer.py): where a person's
    # keyed facts and lines go is decided here alone, whoever extracted them.
    def open_roots(self) -> None:
        """The root and people indexes, made (or the root's people line restored) first."""
        root = "/memories/MEMORY.md"
        if not self._ensure_file(root, ROOT_INDEX) and not any("people/" in ln for ln in self._lines(root)):
            self._append_line(root, ROOT_LINE)
        self._ensure_file(f"{PEOPLE}/MEMORY.md", PEOPLE_INDEX)

    def person(self, speaker: str) -> str:
        """The person's folder, made and listed in the people index when first needed."""
        name = slug(speaker)
        folder = f"{PEOPLE}/{name}"
        self._ensure_folder(
            folder,
            f"{speaker}: keyed facts (current and past values) and all {speaker} said, by topic and date",
            speaker,
            f"- {name}/: {speaker}",
        )
        return folder

    def file_keyed(self, speaker: str, attr: str, value: str, turn: Turn) -> None:
        """The live value of (person, attribute), superseding a different one (`_keyed`)."""
        folder = self.person(speaker)
        self._keyed(folder, speaker, slug(speaker).replace("-", " "), attr, value, turn)

    def file_line(self, speaker: str, turn: Turn, line: str) -> str:
        """`line` appended to the person's file for the topic and day of `turn`; its path."""
        return self.file_lines(speaker, turn, [line])

    def file_lines(self, speaker: str, turn: Turn, lines: list[str]) -> str:
        """`lines` appended together (one insert) to the person's file for the topic and day of
        `turn`; its path."""
        topic = topic_of(turn.text)
        block = "\n".join(lines)
        path = self._part(self._shelf(self.person(speaker), speaker, topic, turn), block, speaker, topic)
        self._append_line(path, block)
        self.result.facts_written += len(lines)
        return path

    def file_verbatim(self, speaker: str, turn: Turn, beside: Turn | None = None) -> None:
        """The turn as said, a line per sentence (`memdir.words.sentences`; a sentence said twice,
        once), each with the speaker, the turn's date and locator: every fact is kept, whatever
        was extracted from it. One line of a long turn carries a fact said in one of its
        sentences only in part, drowned in the rest (benchmarks/results/2026-12-06-horizon.md,
        "Retention: long turns"). An assistant's turn goes `beside` the person's turn it
        answers, in that turn's file."""
        dated = f"- {turn.date}: " if turn.date else "- "
        said = neutralize_locators(one_line(turn.text))  # the user's `[S1T1]` cites nothing here
        lines = [
            f"{dated}{turn.speaker}: {s} [{turn.locator}]" for s in dict.fromkeys(sentences(said) or [said])
        ]
        self.file_lines(speaker, beside or turn, lines)

    def _integrate_person(self, speaker: str, turns: list[Turn]) -> None:
        folder = self.person(speaker)
        subject = slug(speaker).replace("-", " ")
        for turn in turns:
            for attr, value in [] if is_assistant(turn.speaker) else keyed_facts(turn.text):
                self._keyed(folder, speaker, subject, attr, value, turn)
        self.file_said(speaker, turns)

    def file_said(self, speaker: str, turns: list[Turn]) -> None:
        """A person's turns of one chunk (as `people` groups them) verbatim, each assistant turn
        beside the person's turn it answers."""
        beside: Turn | None = None
        for turn in turns:
            if is_assistant(turn.speaker):
                self.file_verbatim(speaker, turn, beside)
            else:
                self.file_verbatim(speaker, turn)
                beside = turn

    def _keyed(self, folder: str, speaker: str, subject: str, attr: str, value: str, turn: Turn) -> None:
        """Write the live line of (subject, attribute) in its one section, superseding the old one.
        A junk value (`fact_quality.junk_reason`), or one the turn does not say of the subject
        then (`fact_truth`: a relative's, a denied one, a bag of the turn's words), is not
        written: it would strike a true one. The rules are the split curator's and the
        benchmark's."""
        said = replace(turn, speaker=speaker) if is_user(turn.speaker) else turn  # "user" by their name
        line_said = Line(subject, attr, value, turn.date)
        if junk_reason(value) is not None or false_reason(line_said, [said], [said.speaker]) is not None:
            self.result.keyed_refused += 1
            return
        path = f"{folder}/{FACTS}"
        desc = f"{speaker}'s keyed facts, current and past values, one section per attribute"
        if self._ensure_file(path, _file("facts", desc, f"{speaker}: keyed facts")):
            line = f"- {FACTS}: keyed facts (current and past values), {ATTRIBUTES_SAY}"
            self._append_line(f"{folder}/MEMORY.md", line)
        date = turn.date or "unknown"
        attr, value = neutralize_locators(attr), neutralize_locators(value)  # words of the turn
        live = f"- {subject} | {attr}: {value} (since {date}) [{turn.locator}]"
        lines = self._lines(path)
        key = key_of(subject, attr)
        for line in lines:  # the whole file: one live line per key, wherever it stands
            kf = parse_keyed(path, 0, line)
            if kf is not None and kf.live and kf.key == key:
                if kf.value.strip().lower() == value.lower() or _restated(kf.value, value, turn.text):
                    return  # already the current value
                if attr in MANY_VALUED and not _CHANGE.search(turn.text):
                    # "I prefer wide bodies" ends no earlier liking: beside it, superseding nothing
                    line = distilled_line(speaker, attr, value, turn.date, [turn.locator])
                    self.file_line(speaker, turn, line)
                    return
                locs = ", ".join(kf.locators)
                struck = f"- ~~{kf.subject} | {kf.attribute}: {kf.value}~~ ({kf.since} until {date}) [{locs}]"
                self._replace(path, line, f"{live}\n{struck}")
                self.result.superseded += 1
                self.result.keyed_written += 1
                return
        heading = f"## {attr}"
        if heading in lines:
            self._insert(path, lines.index(heading) + 1, live)
        else:
            self._append_line(path, f"{heading}\n{live}")
            self._list_attribute(folder, attr)
        self.result.keyed_written += 1

    def _list_attribute(self, folder: str, attr: str) -> None:
        """Name a new attribute on the facts line of the person's index, where searchers look."""
        for line in self._lines(f"{folder}/MEMORY.md"):
            if line.startswith(f"- {FACTS}:") and ATTRIBUTES_SAY in line:
                sep = " " if line.endswith(":") else ", "
                self._replace(f"{folder}/MEMORY.md", line, f"{line}{sep}{attr}")
                return

    def _part(self, path: str, line: str, speaker: str, topic: str) -> str:
        """The part of `path`'s day with room for `line`: the last part listed in the day's index
        (`DAY.md`, then `DAY-2.md`, ...), or a new one when that is full or cannot be viewed."""
        here, stem = path.rsplit("/", 1)[0], path.rsplit("/", 1)[1][:-3]
        index = self._lines(f"{here}/MEMORY.md")
        n = 1
        while any(ln.startswith(f"- {stem}-{n + 1}.md:") for ln in index):
            n += 1
        last = path if n == 1 else f"{here}/{stem}-{n}.md"
        held = self._peek(last)
        if (
            held is not None
            and sum(len(ln.encode()) + 1 for ln in held) + len(line.encode()) <= DAY_PART_BYTES
        ):
            return last
        part = f"{stem}-{n + 1}"
        self._create(
            f"{here}/{part}.md",
            _file(
                part,
                f"What {speaker} said about {topic} on {stem}, part {n + 1}",
                f"{speaker} on {topic}, {stem}",
            ),
        )
        self._append_line(f"{here}/MEMORY.md", f"- {part}.md: {speaker} on {topic}, {stem}, part {n + 1}")
        return f"{here}/{part}.md"

    def _shelf(self, folder: str, speaker: str, topic: str, turn: Turn) -> str:
        """The one file a turn goes to, `TOPIC/DAY.md`, found through the indexes. A folder takes
        new days while the fanout cap leaves room (for its MEMORY.md and the folders below it);
        then new days go a level down, into a year folder, then a month folder. A day already
        filed stays where it is."""
        year, stem, month = day_of(turn)
        here = f"{folder}/{topic}"
        self._ensure_folder(
            here,
            f"What {speaker} said about {topic}, one file per day",
            f"{speaker} on {topic}",
            f"- {topic}/: what {speaker} said about {topic}, one file per day",
        )
        for depth, below in enumerate((year, month, None)):
            index = self._lines(f"{here}/MEMORY.md")
            if any(ln.startswith(f"- {stem}.md:") for ln in index):
                return f"{here}/{stem}.md"
            if below is not None and any(ln.startswith(f"- {below}/:") for ln in index):
                here = f"{here}/{below}"
                continue
            days = sum(1 for ln in index if re.match(r"- [^/\s]+\.md:", ln))
            if below is None or days < self.room[depth]:
                break
            self._ensure_folder(
                f"{here}/{below}",
                f"What {speaker} said about {topic} in {below}, one file per day",
                f"{speaker} on {topic}, {below}",
                f"- {below}/: {topic} in {below}",
            )
            here = f"{here}/{below}"
        path = f"{here}/{stem}.md"
        self._create(
            path, _file(stem, f"What {speaker} said about {topic} on {stem}", f"{speaker} on {topic}, {stem}")
        )
        session = (turn_numbers(turn.locator) or (0, 0))[0]
        entry = f"- {stem}.md: {speaker} on {topic}, {stem}" + (f" (session {session})" if session else "")
        self._append_line(f"{here}/MEMORY.md", entry)
        return path
