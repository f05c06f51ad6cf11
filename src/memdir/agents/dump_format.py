"""The verbatim dump's file format: one file per session, every turn kept as written.

The product's ingest strategy (`strategy.py`, `memdir ingest --strategy dump|auto`) writes and reads it
batch by batch, and a whole conversation dumped at once is written in it too: one format,
defined here.

Each session file's description states only the session number, its date and its speakers
(nothing a model wrote). Turns are written as fact lines in the conventions' form,
`- Calvin: text [S3T1]`, so the dump is also the fact baseline that `diff --facts` holds a
reorganized store to. A turn's date is its session's (in the heading) unless it differs, and
only then is written on its line, `- 2023-05-03: Calvin: text [S3T9]`: one line per turn and
no more, which is the size the paper's Table 3 gives the dump (a date on every line made it
larger: benchmarks/results/2026-12-06-docstring-figures.md, "agents/dump_format.py"). The dump
sits at the root, next to the root MEMORY.md that lists it, which is where the foldering pass
finds the files to move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from memdir.conventions import MAX_DIGITS, TURN, neutralize_locators
from memdir.errors import MemdirError
from memdir.store import frontmatter
from memdir.store.paths import MemoryPath
from memdir.store.store import Store
from memdir.stream import Turn

ROOT_INDEX = """---
name: memory
description: Verbatim dump; one file per conversation session, turns as written with their locators
---
# Memory
{listing}
"""


def session_name(session: int, width: int) -> str:
    return f"session-{session:0{width}d}"


def turn_line(turn: Turn, session_date: str | None = None) -> str:
    """The turn's line in its session's file; the date only where it is not the session's."""
    dated = f"{turn.date}: " if turn.date and turn.date != session_date else ""
    said = neutralize_locators(" ".join(turn.text.split()))  # the user's `[S1T1]` cites nothing
    return f"- {dated}{turn.speaker}: {said} [{turn.locator}]"


def session_text(session: int, name: str, date: str | None, turns: list[Turn]) -> str:
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    who = " and ".join(speakers) if len(speakers) <= 2 else ", ".join(speakers)
    desc = f"Session {session}" + (f", {date}" if date else "") + f", {who}"
    head = f"# Session {session}" + (f" ({date})" if date else "")
    return (
        frontmatter.dump(name, desc).rstrip("\n")
        + "\n"
        + head
        + "\n"
        + "\n".join(turn_line(t, date) for t in turns)
        + "\n"
    )


# -- reading a dump back: the ingest strategy curates a dump's turns once it outgrows it ----------
SESSION_FILE = re.compile(r"session-(\d+)\.md")
_HEADING = re.compile(
    rf"# Session (?P<n>\d{{1,{MAX_DIGITS}}})(?: \((?P<date>.*)\))?"
)  # int() of 5,000 digits raises
_ISO_DATE = r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.+\-Z]*)?"  # a day, or a day and a time
_TURN_LINE = re.compile(rf"- (?P<rest>.*) \[(?P<loc>{TURN})\]")


@dataclass(frozen=True)
class DumpedSession:
    """One session file of a dump as read back: what `session_text` was given to write it."""

    session: int
    name: str
    date: str | None
    turns: tuple[Turn, ...]


def is_session_file(path: MemoryPath) -> bool:
    """A dump's session file: `session-N.md` directly at the root."""
    return len(path.parts) == 1 and SESSION_FILE.fullmatch(path.name) is not None


def is_dump_index(text: str) -> bool:
    """The root MEMORY.md a dump writes (whatever its listing holds)."""
    return text.startswith(ROOT_INDEX.split("{listing}", 1)[0])


def _split_turn(rest: str, session_date: str | None) -> tuple[str | None, str, str]:
    """(date, speaker, text) of a turn line's body, `DATE: SPEAKER: TEXT` or `SPEAKER: TEXT`.

    A date is recognized in ISO form (what the loaders give) or as the session's own date (a
    stream of memdir turns may date them in other words); a line without one is dated on its
    session's date, which `turn_line` leaves off. The speaker runs to the next `: `, so a
    speaker whose name holds `: ` reads back split there."""
    date = session_date
    m = re.match(rf"({_ISO_DATE}): ", rest)
    if m:
        date, rest = m.group(1), rest[m.end() :]
    elif session_date and rest.startswith(f"{session_date}: "):
        date, rest = session_date, rest[len(session_date) + 2 :]
    speaker, sep, text = rest.partition(": ")
    if not sep:
        raise ValueError("no `SPEAKER: ` before the text")
    return date, speaker, text


def parse_session(text: str, where: str) -> DumpedSession:
    """The session a file `session_text` wrote holds, turns with their locators and dates.

    Round trip: `session_text` of the result gives the file back, and each turn equals the one
    written, except that runs of whitespace in a turn's text are one space (a turn is one line of
    the dump), a locator-shaped group in it is in parentheses (it cites nothing) and a turn with
    no date in a dated session reads back on the session's date. A line that
    is neither the heading nor a turn line is an error naming the line: a dump edited by hand is
    not curated from a guess."""
    _meta, skip = frontmatter.split(text)
    lines = text.split("\n")
    session: int | None = None
    date: str | None = None
    turns: list[Turn] = []
    for i, line in enumerate(lines[skip:], start=skip + 1):
        head = _HEADING.fullmatch(line)
        if session is None and head:
            session, date = int(head.group("n")), head.group("date")
            continue
        if not line.strip():
            continue
        m = _TURN_LINE.fullmatch(line)
        try:
            if m is None or session is None:
                raise ValueError("not a turn line `- [DATE: ]SPEAKER: TEXT [LOCATOR]` under `# Session N`")
            when, speaker, said = _split_turn(m.group("rest"), date)
        except ValueError as exc:
            raise MemdirError(f"{where}:{i} is not the verbatim dump's: {exc}") from None
        turns.append(Turn(m.group("loc"), speaker, said, when))
    if session is None:
        raise MemdirError(f"{where} has no `# Session N` heading; it is not a session file of the dump")
    return DumpedSession(session, Path(where).stem, date, tuple(turns))


def read_dump(store: Store) -> dict[str, DumpedSession]:
    """{memory path: session} of every session file at the root of `store`, by session number."""
    found = {
        e.path.text: parse_session(store.read_text(e.path), e.path.text)
        for e in store.files()
        if is_session_file(e.path)
    }
    return dict(sorted(found.items(), key=lambda kv: kv[1].session))


@dataclass
class Merge:
    """A batch of turns merged into a dump: every session after it, and what the batch changed.

    A turn goes to its session's file (its locator names the session): a new session gets a new
    file, a session already dumped gets the turn appended. A turn whose line the file already
    holds (the same stream ingested twice) is skipped, so a dump never says a turn twice."""

    sessions: dict[str, DumpedSession]  # memory path -> session, every session file after the batch
    created: list[str] = field(default_factory=list)
    appended: list[str] = field(default_factory=list)
    fresh: list[Turn] = field(default_factory=list)  # the batch's turns the dump did not hold
    skipped: int = 0

    @property
    def changed(self) -> list[str]:
        return [*self.created, *self.appended]

    def text(self, path: str) -> str:
        s = self.sessions[path]
        return session_text(s.session, s.name, s.date, list(s.turns))

    def index(self) -> str:
        """The root MEMORY.md listing every session file, in session order."""
        rows = sorted(self.sessions.values(), key=lambda s: s.session)
        listing = [f"- {s.name}.md: session {s.session}" + (f" ({s.date})" if s.date else "") for s in rows]
        return ROOT_INDEX.format(listing="\n".join(listing))


def merge_turns(dumped: dict[str, DumpedSession], turns: list[Turn]) -> Merge:
    """`turns` merged into the dump `dumped` (as `read_dump` gives it); nothing is written."""
    sessions = dict(dumped)
    by_number = {s.session: path for path, s in sessions.items()}
    digits = [len(m.group(1)) for s in sessions.values() if (m := SESSION_FILE.fullmatch(f"{s.name}.md"))]
    width = min(digits, default=max(2, len(str(max((t.session for t in turns), default=1)))))
    merge = Merge(sessions)
    lines = {path: {turn_line(t) for t in s.turns} for path, s in sessions.items()}  # dated: a key
    for turn in turns:
        path = by_number.get(turn.session)
        if path is None:
            name = session_name(turn.session, width)
            path = by_number[turn.session] = f"/memories/{name}.md"
            sessions[path] = DumpedSession(turn.session, name, turn.date, ())
            lines[path] = set()
            merge.created.append(path)
        line = turn_line(turn)
        if line in lines[path]:
            merge.skipped += 1
            continue
        lines[path].add(line)
        s = sessions[path]
        sessions[path] = DumpedSession(s.session, s.name, s.date or turn.date, (*s.turns, turn))
        merge.fresh.append(turn)
        if path not in merge.changed:
            merge.appended.append(path)
    return merge
