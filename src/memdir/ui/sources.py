"""The stores one UI serves, each behind a short id used in its URLs.

A source is opened as a bare `Store` (no index, no journal observer: a reader writes nothing)
and, for search only, as a `Memory` without its journal; both are built once and kept. A URL
names a source by id only, so no request can name a folder on disk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memdir.api.memory import Memory
from memdir.errors import NotFoundError
from memdir.mcp.tenants import TenantToken
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

    def bind_tenants(self, tokens: Iterable[TenantToken]) -> None:
        """One source per tenant of a tenants file, its id the tenant's name: a tenant added
        since is served from now on, and one whose name is bound to another root now is served
        from that root (its old store let go), never from the one its name had before."""
        roots = {t.tenant: Path(t.real_root) for t in tokens}
        with self._lock:
            for tenant, root in roots.items():
                known = self.by_id.get(tenant)
                if known is not None and known.tenant == tenant and known.root == root:
                    continue
                self.by_id[tenant] = Source(tenant, tenant, root, tenant=tenant)
                self._stores.pop(tenant, None)
                memory = self._memories.pop(tenant, None)
                if memory is not None:
                    memory.close()

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
            store = self._stores[sid]
        store.finish_landing()  # one another process was stopped in since: every page sees it whole
        return store

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
