"""The verbatim dump: one file per session, every turn kept as written, zero model cost.

Each session file's description states only the session number, its date and its speakers
(nothing a model wrote). Turns are written as fact lines in the conventions' form,
`- 2023-05-02: Calvin: text [S3T1]`, so the dump is also the fact baseline that
`diff --facts` holds a reorganized store to. The dump sits at the root, next to the root
MEMORY.md that lists it, which is where the foldering pass finds the files to move.
"""

from __future__ import annotations

from memdir.bench.types import Sample
from memdir.store import frontmatter
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


def turn_line(turn: Turn) -> str:
    dated = f"{turn.date}: " if turn.date else ""
    return f"- {dated}{turn.speaker}: {' '.join(turn.text.split())} [{turn.locator}]"


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
        + "\n".join(map(turn_line, turns))
        + "\n"
    )


def write_dump(store: Store, sample: Sample) -> list[str]:
    """Write the dump into `store` in one step; returns the session files' paths."""
    sessions = sample.session_turns()
    width = max(2, len(str(max(sessions, default=1))))
    paths: list[str] = []
    listing: list[str] = []
    with store.step("verbatim_dump", role="builder", variant="verbatim-dump"):
        for n, turns in sessions.items():
            name = session_name(n, width)
            date = sample.session_dates.get(n) or next((t.date for t in turns if t.date), None)
            path = f"/memories/{name}.md"
            store.create(path, session_text(n, name, date, turns))
            paths.append(path)
            listing.append(f"- {name}.md: session {n}" + (f" ({date})" if date else ""))
        store.create("/memories/MEMORY.md", ROOT_INDEX.format(listing="\n".join(listing)))
    return paths
