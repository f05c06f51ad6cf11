"""The verbatim-dump variant: a whole conversation written as the dump, one step, zero model cost.

The file format (session files, turn lines, the root index, reading a dump back) is the product's,
`memdir.agents.dump_format`, which the ingest strategy writes too; this is the study's builder.
"""

from __future__ import annotations

from memdir.agents.dump_format import ROOT_INDEX, session_name, session_text
from memdir.store.store import Store
from memdir_study.bench.types import Sample


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
