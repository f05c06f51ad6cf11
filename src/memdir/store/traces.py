"""Where given bytes still are under a memory root: every file (derived state included) and
every object of its journal, each read whole as git gives it (`git cat-file --batch-all-objects
--batch`), since a packed or compressed object never shows its text on disk. The proof that a
secret never landed (docs/secrets.md) and that a forgotten text is gone asks this one question.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from memdir.errors import MemdirError
from memdir.store.paths import STATE_DIR

JOURNAL = "journal.git"


def traces(root: Path, needles: Iterable[bytes]) -> dict[bytes, list[str]]:
    """{needle: where it was found} for each needle found: a path relative to `root`, or
    `journal:<object id>` for a journal object. A needle found nowhere is left out."""
    wanted = [n for n in needles if n]
    found: dict[bytes, list[str]] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            p = Path(folder, name)
            if p.is_symlink() or not p.is_file():
                continue
            data = p.read_bytes()
            for n in wanted:
                if n in data:
                    found.setdefault(n, []).append(str(p.relative_to(root)))
    for oid, data in journal_objects(root / STATE_DIR / JOURNAL):
        for n in wanted:
            if n in data:
                found.setdefault(n, []).append(f"journal:{oid}")
    return found


def journal_objects(git_dir: Path) -> Iterable[tuple[str, bytes]]:
    """(id, content) of every object in the repository at `git_dir`, loose or packed, reachable
    or not; nothing when there is no repository."""
    if not git_dir.is_dir():
        return
    git = shutil.which("git")
    if git is None:
        raise MemdirError("git is not installed, so the journal's objects cannot be read; install git")
    out = subprocess.run(
        [git, "--git-dir", str(git_dir), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    at = 0
    while at < len(out):
        eol = out.index(b"\n", at)
        oid, _kind, size = out[at:eol].decode().split()
        start = eol + 1
        yield oid, out[start : start + int(size)]
        at = start + int(size) + 1
