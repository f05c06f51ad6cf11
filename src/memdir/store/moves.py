"""The renames made over a span of steps, composed from each file's first path to its last.

Health findings are keyed by path (analytics/health.py), so a finding about a file that an
episode only moved would otherwise count as new. `following_moves` attaches a `MoveLog` as an
observer of the store for the span, so every rename is seen however it was made: the `rename`
tool, a folder rename (which the store expands to its files), or the shell's edits, whose
renames `Store.record_external` infers. A folder counts as moved when every file under it went
along with it, i.e. its old path no longer exists once the step is done.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memdir.store.store import Step, Store, StoreObserver


class MoveLog(StoreObserver):
    """`moves`: first path -> current path, for every file or folder moved while attached."""

    def __init__(self) -> None:
        self.moves: dict[str, str] = {}

    def on_step(self, store: Store, step: Step) -> None:
        for change in step.changes:
            if change.kind == "rename" and change.new_path:
                self.add(change.path, change.new_path)
                for old_dir, new_dir in _moved_folders(change.path, change.new_path):
                    if not store.exists(old_dir) and store.is_dir(new_dir):
                        self.add(old_dir, new_dir)

    def add(self, old: str, new: str) -> None:
        """Compose: a -> b then b -> c is a -> c; a move back home is no move."""
        first = next((k for k, v in self.moves.items() if v == old), old)
        if first == new:
            self.moves.pop(first, None)
        else:
            self.moves[first] = new


def _moved_folders(old: str, new: str) -> Iterator[tuple[str, str]]:
    """The folder pairs a file move could have carried: the ancestors above the longest path
    tail both paths share (`/m/a/b/x.md -> /m/c/b/x.md`: `/m/a/b -> /m/c/b`, `/m/a -> /m/c`)."""
    o, n = old.split("/"), new.split("/")
    while len(o) > 2 and len(n) > 2 and o[-1] == n[-1]:
        o, n = o[:-1], n[:-1]
        if o != n:
            yield "/".join(o), "/".join(n)


@contextlib.contextmanager
def following_moves(store: Store) -> Iterator[MoveLog]:
    """A `MoveLog` attached to `store` for the span of the `with` block."""
    log = MoveLog()
    store.observers.append(log)
    try:
        yield log
    finally:
        store.observers.remove(log)
