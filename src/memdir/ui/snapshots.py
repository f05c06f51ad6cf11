"""Past steps of a store, read from its journal for the history pages.

A step's files are read as git blobs (never checked out); a whole snapshot, for `diff --facts`
between two steps, is written out into the server's private folder and read there as a bare
`Store` (`ui/scratch.py`, which also keeps the growth plots), so a past view can never write
the present.
"""

from __future__ import annotations

from collections.abc import Iterator

from memdir.errors import NotFoundError
from memdir.store.journal import Journal, JournalStep
from memdir.store.paths import PREFIX


def pick(journal: Journal, index: int) -> tuple[JournalStep, list[JournalStep]]:
    steps = journal.steps()
    if not steps:
        raise NotFoundError(
            "this store has no journal yet: steps are recorded from its first write through memdir"
        )
    if not 0 <= index < len(steps):
        raise NotFoundError(f"no step {index}: the history has steps 0 to {len(steps) - 1}")
    return steps[index], steps


def diff(journal: Journal, step: JournalStep) -> str:
    """The step's patch against the step before it (the baseline against nothing)."""
    return journal.patch(step.commit)


def files_at(journal: Journal, step: JournalStep) -> dict[str, str]:
    """{/memories path: blob} of the store as it was after `step`."""
    return {f"{PREFIX}/{p}": sha for p, sha in journal.files_at(step.commit).items()}


def read_at(journal: Journal, step: JournalStep, path: str, files: dict[str, str]) -> Iterator[bytes]:
    """The bytes of `path` as it was after `step` (`files`: `files_at` of that step), a chunk
    at a time: a page of it is read as the live file page reads (`store/window.py`)."""
    sha = files.get(path)
    if sha is None:
        raise NotFoundError(f"{path} did not exist after step {step.index}")
    return journal.blob_chunks(sha)
