"""The stores one UI serves, each behind a short id used in its URLs.

A source is opened as a bare `Store` (no index, no journal observer: a reader writes nothing)
and, for search only, as a `Memory` without its journal; both are built once and kept. A URL
names a source by id only, so no request can name a folder on disk.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from memdir.api.memory import Memory
from memdir.errors import NotFoundError
from memdir.store.journal import Journal
from memdir.store.store import Store


@dataclass(frozen=True)
class Source:
    """One store: its id, what the page calls it, its root, and, for a benchmark store, the
    (benchmark, sample) whose turns its locators cite; `tenant` when a token guards it."""

    sid: str
    label: str
    root: Path
    bench: tuple[str, str] | None = None
    tenant: str | None = None
    run: str | None = None


class Sources:
    """Every source by id; stores and search handles opened on first use and kept."""

    def __init__(self, sources: list[Source]) -> None:
        self.by_id: dict[str, Source] = {}
        for s in sources:
            self.add(s)
        self._stores: dict[str, Store] = {}
        self._memories: dict[str, Memory] = {}
        self._lock = threading.Lock()

    def add(self, source: Source) -> None:
        self.by_id.setdefault(source.sid, source)

    def get(self, sid: str) -> Source:
        found = self.by_id.get(sid)
        if found is None:
            raise NotFoundError(f"no store {sid!r} is served here; pick one from the start page")
        return found

    def store(self, sid: str) -> Store:
        src = self.get(sid)
        with self._lock:
            if sid not in self._stores:
                self._stores[sid] = Store(src.root)
            return self._stores[sid]

    def journal(self, sid: str) -> Journal:
        return Journal(self.store(sid).root)

    def memory(self, sid: str) -> Memory:
        """The Memory API over the source, for search (its index lives in the store's derived
        state, `.memdir/`, which deleting loses nothing); no journal, so it records no step."""
        src = self.get(sid)
        with self._lock:
            if sid not in self._memories:
                self._memories[sid] = Memory(src.root, create=False, journal=False, role="ui")
            return self._memories[sid]
