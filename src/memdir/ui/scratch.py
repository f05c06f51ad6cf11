"""The server's private folder: past snapshots and growth plots, bounded, locked per store, and
removed when the server stops.

A past snapshot (for `diff --facts` between two steps) is a whole store written out from the
journal, so the folder could grow by a store's size with every pair of steps asked for, until
exit. It is a cache: at most `MAX_SNAPSHOTS` snapshots and `MAX_SNAPSHOT_BYTES` on disk, the
least recently used deleted first, never one a request is still reading (each request pins the
snapshots it reads). Growth plots are kept for each store's current journal head only.

Slow work (writing a snapshot out, replaying the journal for the plots) runs under its store's
own lock, so one store's replay never makes another store's pages wait (a server of tenants
serves many stores); the lock of the cache's bookkeeping is held only for dictionary updates
and renames.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.analytics import growth, growth_plots
from memdir.analytics.growth import GrowthRecord
from memdir.api import history
from memdir.store.journal import Journal, JournalStep
from memdir.store.store import Store

MAX_SNAPSHOTS = 8
MAX_SNAPSHOT_BYTES = 512 << 20
GROWTH_EVERY = 10  # the replay measures every 10th step (and the last)


@dataclass
class _Held:
    path: Path
    size: int
    pins: int = 0


class Scratch:
    """The private folder at `root` and what the history pages keep in it."""

    def __init__(
        self, root: Path, *, max_snapshots: int = MAX_SNAPSHOTS, max_bytes: int = MAX_SNAPSHOT_BYTES
    ) -> None:
        self.root = root
        self.max_snapshots = max_snapshots
        self.max_bytes = max_bytes
        self._lock = threading.Lock()  # the dictionaries below; never held over slow work
        self._store_locks: dict[Path, threading.Lock] = {}
        self._snapshots: OrderedDict[tuple[Path, str], _Held] = OrderedDict()  # oldest use first
        self._heads: dict[Path, Path] = {}  # store root -> its growth folder, at its drawn head

    @contextlib.contextmanager
    def store_lock(self, root: Path) -> Iterator[None]:
        """Held while a store's snapshot is written or its journal replayed."""
        with self._lock:
            lock = self._store_locks.setdefault(root, threading.Lock())
        with lock:
            yield

    # -- snapshots -----------------------------------------------------------------------
    @contextlib.contextmanager
    def snapshot(self, journal: Journal, step: JournalStep) -> Iterator[Store]:
        """The store as it was after `step`, as a bare `Store` (a past view cannot write the
        present), kept on disk while the caller reads it."""
        key = (journal.root, step.commit)
        if not self._pin(key):
            with self.store_lock(journal.root):
                if not self._pin(key):  # another request may have written it meanwhile
                    self._write(journal, step, key)
        try:
            yield Store(self._snapshots[key].path)
        finally:
            with self._lock:
                self._snapshots[key].pins -= 1
            self._evict()

    def _pin(self, key: tuple[Path, str]) -> bool:
        with self._lock:
            held = self._snapshots.get(key)
            if held is None:
                return False
            held.pins += 1
            self._snapshots.move_to_end(key)
            return True

    def _write(self, journal: Journal, step: JournalStep, key: tuple[Path, str]) -> None:
        base = self.root / "snapshots"
        base.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".writing-", dir=base))
        try:
            history.materialize(journal, step.commit, tmp)
            dest = base / f"{_tag(journal.root)}-{step.commit}"
            tmp.rename(dest)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        with self._lock:
            self._snapshots[key] = _Held(dest, _size(dest), pins=1)

    def _evict(self) -> None:
        """Delete the least recently used snapshots no request holds, down to the caps. Each
        is renamed out of the way under the lock (so its name is free for a new copy at once)
        and removed after it."""
        gone: list[Path] = []
        with self._lock:
            total = sum(h.size for h in self._snapshots.values())
            for key, held in list(self._snapshots.items()):
                if len(self._snapshots) <= self.max_snapshots and total <= self.max_bytes:
                    break
                if held.pins:
                    continue
                del self._snapshots[key]
                total -= held.size
                trash = held.path.with_name(f".gone-{uuid.uuid4().hex}")
                held.path.rename(trash)
                gone.append(trash)
        for path in gone:
            shutil.rmtree(path, ignore_errors=True)

    def held(self) -> list[Path]:
        """The snapshots on disk, least recently used first."""
        with self._lock:
            return [h.path for h in self._snapshots.values()]

    # -- growth plots ----------------------------------------------------------------------
    def growth_file(self, journal: Journal, head: str, title: str, name: str) -> bytes:
        """growth.json or a plot of the journal at `head`, drawn on first request; a store's
        plots of an older head are deleted when its new head's are drawn."""
        with self.store_lock(journal.root):
            out = self.root / "growth" / f"{_tag(journal.root)}-{head}"
            if not (out / growth_plots.PLOTS[-1]).is_file():
                g = growth.replay(journal, every=GROWTH_EVERY)
                growth_plots.write(g, out, title=title)
                with self._lock:
                    old = self._heads.get(journal.root)
                    self._heads[journal.root] = out
                if old is not None and old != out:
                    shutil.rmtree(old, ignore_errors=True)
            return (out / name).read_bytes()

    def growth_data(self, journal: Journal, head: str, title: str) -> GrowthRecord:
        """The growth.json this scratch folder wrote (`analytics/growth_plots.py`)."""
        data: GrowthRecord = json.loads(self.growth_file(journal, head, title, "growth.json"))
        return data

    def close(self) -> None:
        """Remove the folder and everything in it (the server is stopping)."""
        shutil.rmtree(self.root, ignore_errors=True)


def _tag(root: Path) -> str:
    """A short name for a store's root, for the folder names of its snapshots and plots."""
    return hashlib.sha256(os.fsencode(root)).hexdigest()[:12]


def _size(folder: Path) -> int:
    total = 0
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_size
    return total
