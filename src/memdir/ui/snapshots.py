"""Past steps of a store, read from its journal for the history pages.

A step's files are read as git blobs (never checked out); a whole snapshot, for `diff --facts`
between two steps, is materialized once per commit into the server's private folder by
`api/history.materialize` and read there as a bare `Store`, so a past view can never write the
present. Growth plots are drawn once per journal head by `analytics/growth_plots`.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

from memdir.analytics import growth, growth_plots
from memdir.api import history
from memdir.errors import MemdirError, NotFoundError
from memdir.store.journal import Journal, JournalStep
from memdir.store.paths import PREFIX
from memdir.store.store import Store

_LOCK = threading.Lock()
GROWTH_EVERY = 10


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
    return journal.git("show", "--format=", "--no-color", "--no-ext-diff", "--find-renames", step.commit)


def files_at(journal: Journal, step: JournalStep) -> dict[str, str]:
    """{/memories path: blob} of the store as it was after `step`."""
    return {f"{PREFIX}/{p}": sha for p, sha in journal.files_at(step.commit).items()}


def read_at(journal: Journal, step: JournalStep, path: str) -> str:
    files = files_at(journal, step)
    sha = files.get(path)
    if sha is None:
        raise NotFoundError(f"{path} did not exist after step {step.index}")
    for _sha, data in journal.blobs([sha]):
        return data.decode("utf-8", "replace")
    raise NotFoundError(f"{path}: its content is missing from the journal")


def _scratch(root: Path | None) -> Path:
    if root is None:
        raise MemdirError("this server has no private folder for snapshots")
    return root


def snapshot_store(journal: Journal, step: JournalStep, scratch: Path | None) -> Store:
    """The store as it was after `step`, materialized once into the server's private folder."""
    base = _scratch(scratch) / "snapshots"
    dest = base / step.commit
    with _LOCK:
        if not dest.is_dir():
            base.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix="step-", dir=base))
            history.materialize(journal, step.commit, tmp)
            tmp.rename(dest)
    return Store(dest)


def growth_dir(journal: Journal, head: str, scratch: Path | None, title: str) -> Path:
    """growth.json and the PNGs of the journal at `head`, drawn on first request."""
    out = _scratch(scratch) / "growth" / head
    with _LOCK:
        if not (out / growth_plots.PLOTS[-1]).is_file():
            g = growth.replay(journal, every=GROWTH_EVERY)
            growth_plots.write(g, out, title=title)
    return out
