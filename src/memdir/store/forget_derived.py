"""The state folder after a forget: every file under `<root>/.memdir/` that still holds the
forgotten words loses them, whoever wrote it (a call log, a description cache, a working copy,
a landing's plan).

The search index is rebuilt by the caller and the journal rewritten (`journal/redact.py`); the
rest is looked for byte by byte, so a cache added later is covered without being named here.
A file of lines (JSON lines, logs, text) keeps its other lines; any other file holding the
words is deleted, which loses nothing the files cannot rebuild (ARCHITECTURE.md, "Derived
state"). The ingest ledger holds digests, never words, so it is never touched here.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from memdir.store.atomic import write_atomic
from memdir.store.journal.format import JOURNAL_DIR
from memdir.store.paths import STATE_DIR

SKIP = {JOURNAL_DIR}  # rewritten and pruned on its own
LINE_FILES = (".jsonl", ".log", ".json", ".txt", ".md", ".yaml", ".yml")
MAX_BYTES = 1 << 30  # a file this big is read in one piece at most


def _files(state: Path) -> Iterator[Path]:
    """Every regular file under `state`, links not followed, the journal left out."""
    stack = [state]
    while stack:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for ent in entries:
            if here == state and ent.name in SKIP:
                continue
            st = ent.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(ent.path))
            elif stat.S_ISREG(st.st_mode) and st.st_size <= MAX_BYTES:
                yield Path(ent.path)


def holding(root: Path, forms: list[bytes]) -> list[Path]:
    """The state folder's files that hold any of `forms` (for a dry run)."""
    out: list[Path] = []
    if not forms:
        return out
    for path in _files(Path(root) / STATE_DIR):
        with contextlib.suppress(OSError):
            data = path.read_bytes()
            if any(f in data for f in forms):
                out.append(path)
    return out


def sweep(root: Path, forms: list[bytes]) -> list[str]:
    """Take `forms` out of every file of the state folder; the paths changed (relative to it)."""
    state = Path(root) / STATE_DIR
    done: list[str] = []
    for path in holding(root, forms):
        data = path.read_bytes()
        if path.name.endswith(LINE_FILES):
            kept = b"".join(
                line for line in data.splitlines(keepends=True) if not any(f in line for f in forms)
            )
            write_atomic(path, kept, mode=0o600)
        else:
            path.unlink()
        done.append(str(path.relative_to(state)))
    return sorted(done)
