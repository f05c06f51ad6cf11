"""The store's past, read from its journal: the steps, and any step's snapshot as files.

The journal (`store/journal/`) commits every writing step, so the store as it was after step
N is that commit's tree. A snapshot is materialized into a private folder, not read through
the live store: a past view must never be able to write the present.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from memdir.api.results import Operation
from memdir.errors import MemdirError
from memdir.store.journal import Journal, JournalStep, group
from memdir.store.safefs import private_dirs


def steps(journal: Journal) -> list[JournalStep]:
    """Every step, oldest first ([] for a store nothing has written through memdir yet)."""
    return journal.steps()


def operations(journal: Journal) -> list[Operation]:
    """Every operation, in the order of its first step (`memdir history` lists the same)."""
    out: list[Operation] = []
    for g in group(journal.steps()):
        op, first = g.operation, datetime.fromtimestamp(g.first.time, UTC)
        steps, files = tuple(g.steps), tuple(sorted(g.paths()))
        out.append(Operation(id=op.id, kind=op.kind, label=op.label, time=first, steps=steps, files=files))
    return out


def pick(history: list[JournalStep], ref: int | str) -> JournalStep:
    """The step `ref` names: its index (negative counts from the newest) or a commit prefix."""
    if not history:
        raise MemdirError("the store has no history yet; it starts with the first write through memdir")
    if isinstance(ref, int) and not isinstance(ref, bool):
        if -len(history) <= ref < len(history):
            return history[ref]
        raise MemdirError(f"no step {ref}: the history has steps 0 to {len(history) - 1}")
    if isinstance(ref, str) and len(ref) >= 4:
        found = [s for s in history if s.commit.startswith(ref.lower())]
        if len(found) == 1:
            return found[0]
        if found:
            raise MemdirError(f"commit prefix {ref!r} names {len(found)} steps; give more of it")
    raise MemdirError(f"no step {ref!r}: name a step by its index or by 4+ hex digits of its commit")


def materialize(journal: Journal, commit: str, dest: Path) -> int:
    """Write the snapshot `commit` names under `dest`; returns how many files it holds. A
    snapshot whose objects are gone (power loss, a hand edit) is an error naming its step."""
    try:
        return _materialize(journal, commit, dest)
    except MemdirError as exc:
        index = next((s.index for s in journal.steps() if s.commit == commit), None)
        step = f"step {index} (commit {commit[:12]})" if index is not None else f"commit {commit[:12]}"
        raise MemdirError(f"the store as it was at {step} cannot be read: {exc}") from None


def _materialize(journal: Journal, commit: str, dest: Path) -> int:
    files = journal.files_at(commit)
    by_sha: dict[str, list[str]] = {}
    for path, sha in files.items():
        parts = path.split("/")
        if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
            continue  # the journal holds none; never written outside `dest` if it did
        by_sha.setdefault(sha, []).append(path)
    written = 0
    for sha, data in journal.blobs(sorted(by_sha)):
        for path in by_sha[sha]:
            target = dest.joinpath(*path.split("/"))
            private_dirs(target.parent)
            # read-only and its owner's: a past snapshot is for reading, by no one else
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            written += 1
    return written
