"""What memdir creates is its owner's alone, whatever the umask (docs/api.md,
"Lifetime, guards, files"): files `safefs.FILE_MODE` (0600), folders `safefs.DIR_MODE` (0700).

memdir's own creations name their mode: the store's writes (`safefs`), folders through
`safefs.private_dirs`, a file to append to or lock through `create` below, a whole file through
`atomic.write_atomic`. What libraries write for memdir cannot be told a mode: libgit2 and git
in the journal, tantivy and SQLite in the index take the process umask, and under umask 0 (a
container's often is) they made 0777 folders of 0666 files in `.memdir/`. They run inside
`owner_only()`, which adds 077 to the umask while any such block runs. The umask belongs to
the process, so the blocks are counted: one ending never relaxes it under another still
running, and a file another thread makes meanwhile comes out private too, never less. The
command line owns its process and tightens the umask once at start (`tighten_umask`), as the
journal's committer process does, so every child they start (git among them) is private too.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from memdir.store.safefs import FILE_MODE

PRIVATE_UMASK = 0o077  # no group or other bit, on anything made while it holds

_lock = threading.Lock()
_depth = 0
_saved = 0


def tighten_umask() -> int:
    """Add PRIVATE_UMASK to this process's umask for good (a process memdir owns: the command
    line, the committer); returns the umask it had."""
    old = os.umask(PRIVATE_UMASK)
    os.umask(old | PRIVATE_UMASK)
    return old


@contextlib.contextmanager
def owner_only() -> Iterator[None]:
    """PRIVATE_UMASK added to the umask while the block runs (blocks nest, across threads too)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = tighten_umask()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                os.umask(_saved)


def create(path: str | os.PathLike[str], flags: int = os.O_WRONLY) -> int:
    """A descriptor of `path`, opened with `flags` and made FILE_MODE if this creates it (the
    umask can only take bits away); a file that exists keeps its mode."""
    return os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
