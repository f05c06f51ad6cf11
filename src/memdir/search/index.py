"""The BM25 index of a store: derived from the files, never the other way round.

tantivy holds the postings (a fraction of SQLite FTS5's time per OR-query at 50,000 files:
benchmarks/results/2026-12-06-docstring-figures.md, "search/index.py") and a SQLite manifest
holds `{path: (size, mtime_ns)}` as indexed. Writes through the tools reach the index through
:func:`observer`, which notes their paths for the next search (one commit for all the steps
since the last); edits made outside the tools are caught by :meth:`SearchIndex.sync`, which
compares the manifest with the change notices or a stat walk of the store before every search.
Every update is "make this path match the disk", so replaying one is harmless and a crash
between the tantivy commit and the manifest write only costs a re-read. Deleting
`<root>/.memdir/index/` loses nothing: the next search rebuilds it; so does a schema change or
an index that fails to open.

Concurrency: tantivy allows one writer per index, so every index write holds a file lock
(`<root>/.memdir/index.lock`, separate from the store's writer lock: searches must not wait
for a long tool step); readers reload before each search to see other processes' commits.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import tantivy

from memdir.errors import MemdirError
from memdir.search.analysis import (
    ANALYSIS_VERSION,
    ANALYZER_NAME,
    analyzer,
    doc_fields,
    or_query,
    query_terms,
)
from memdir.search.scan import scan
from memdir.search.unit_index import UnitIndex, UnitRow
from memdir.search.watch import Changes, Watcher
from memdir.store.oslock import OsLock
from memdir.store.paths import ROOT, STATE_DIR, MemoryPath, parse_memory_path
from memdir.store.per_root import PerRoot
from memdir.store.private import owner_only
from memdir.store.store import Step, Store, StoreObserver

log = logging.getLogger(__name__)

INDEX_DIR = "index"
LOCK_FILE = "index.lock"
MAX_OPEN = 32
# `text` is the whole file as one BM25 document (file name, frontmatter name, description and
# metadata, body): scoring fields apart would rank a file by which field a word sits in rather
# than how often it occurs. `signage` (file name, name, description) adds a gentle bonus for a
# word the file advertises; benchmarks/bm25_index.py measures both against bm25s.
TEXT_FIELDS = ("text", "signage")
BOOSTS = {"text": 1.0, "signage": 0.05}
_SCHEMA_KEY = (
    f"tantivy-{tantivy.__version__ if hasattr(tantivy, '__version__') else '?'}/analysis-{ANALYSIS_VERSION}"
)


@dataclass(frozen=True)
class Hit:
    path: str
    score: float


@dataclass
class SyncReport:
    """What a sync or rebuild changed, and how long it took."""

    added: int = 0
    modified: int = 0
    removed: int = 0
    files: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    walked: bool = False  # a stat walk of the whole store ran (no change notices to go by)

    @property
    def changed(self) -> int:
        return self.added + self.modified + self.removed


def _schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("scope", tokenizer_name="raw", index_option="basic")
    for f in TEXT_FIELDS:
        sb.add_text_field(f, tokenizer_name=ANALYZER_NAME, index_option="freq")
    return sb.build()


def _scopes(mp: MemoryPath) -> list[str]:
    """The path itself and each folder above it: a search scoped to any of them finds it."""
    return [MemoryPath(mp.parts[:k]).text for k in range(len(mp.parts) + 1)]


def _clear(folder: Path, tries: int = 5) -> None:
    """Remove the index folder, again while another holder writes into it as it goes (a reader
    takes tantivy's meta lock by creating its lock file), which leaves the folder's last
    rmdir to fail; the final try raises, so a folder that cannot be cleared says why."""
    for attempt in range(tries):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        time.sleep(0.02 * (attempt + 1))
    shutil.rmtree(folder)


class SearchIndex:
    """The index of one store. Use :meth:`for_store` to share one per store in a process."""

    registry: ClassVar[PerRoot[SearchIndex]] = PerRoot(MAX_OPEN)

    def __init__(self, store: Store) -> None:
        self.store = store
        self.dir = store.state_dir / INDEX_DIR
        self._flock = OsLock(store.state_dir / LOCK_FILE, timeout=300)
        self._mutex = threading.RLock()
        self._index: Any = None
        self._schema = _schema()
        self._db: sqlite3.Connection | None = None
        self._id = ""
        self._manifest: dict[str, tuple[int, int]] = {}
        self._data_version = -1
        self.units: UnitIndex | None = None  # section-level search, once a search by section asked
        self._watcher: Watcher | None = None
        self._watch_tried = False  # Watcher.start ran (None after it: no notices here)
        self._walk_next = True
        self._pending: set[str] = set()  # paths tool steps changed since the last sync (defer)

    @classmethod
    def for_store(cls, store: Store) -> SearchIndex:
        """The shared index of `store`'s root; the least recently used are closed past
        MAX_OPEN (an evaluation may touch hundreds of stores; a closed one reopens on use)."""
        return cls.registry.get(store.root, lambda: cls(store))

    @classmethod
    def exists_for(cls, store: Store) -> bool:
        return os.path.isfile(_manifest_file(store.root))

    # -- opening, and rebuilding what cannot be opened --------------------------------
    @property
    def _manifest_path(self) -> Path:
        return self.dir / "manifest.sqlite"

    def _identity(self) -> str:
        try:
            return (self.dir / "id").read_text(encoding="ascii")
        except OSError:
            return ""

    def _stale_handle(self) -> bool:
        """True when the index on disk is not the one we opened: deleted, or rebuilt by another
        process (an id, not an inode: a rebuilt file may reuse the inode of the deleted one)."""
        return not self._id or self._identity() != self._id

    def _ensure_open(self) -> None:
        """Open the index (under the lock), replacing it when it is missing, foreign or broken."""
        if self._index is not None and not self._stale_handle():
            return
        self._close()
        try:
            self._open_existing()
        except Exception as exc:  # any failure to open means: rebuild from the files
            if self._manifest_path.exists() or (self.dir / "tantivy").exists():
                log.warning("search index at %s unusable (%s); rebuilding from the files", self.dir, exc)
            self._close()
            self._create_empty()

    def _open_existing(self) -> None:
        tdir = self.dir / "tantivy"
        if not self._manifest_path.is_file() or not tantivy.Index.exists(str(tdir)):
            raise FileNotFoundError("no index yet")
        identity = self._identity()
        db = self._connect()
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None or row[0] != _SCHEMA_KEY:
                raise MemdirError(f"index schema {row[0] if row else None!r} is not {_SCHEMA_KEY!r}")
            index = tantivy.Index.open(str(tdir))
            index.register_tokenizer(ANALYZER_NAME, analyzer())
            index.config_reader(reload_policy="Manual")
            indexed = db.execute("SELECT count(*) FROM files WHERE indexed = 1").fetchone()[0]
            if index.searcher().num_docs != indexed or not identity:
                raise MemdirError(f"index holds {index.searcher().num_docs} files, manifest {indexed}")
        except BaseException:
            db.close()
            raise
        self._db, self._index, self._id = db, index, identity
        self.units = UnitIndex.open(self.dir, db)

    def _create_empty(self) -> None:
        _clear(self.dir)
        (self.dir / "tantivy").mkdir(parents=True)
        db = self._connect()
        db.executescript(
            "CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, indexed INTEGER);"
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
        )
        db.execute("INSERT INTO meta VALUES ('schema', ?)", (_SCHEMA_KEY,))
        db.commit()
        index = tantivy.Index(self._schema, path=str(self.dir / "tantivy"))
        index.register_tokenizer(ANALYZER_NAME, analyzer())
        index.config_reader(reload_policy="Manual")
        self._id = uuid.uuid4().hex
        (self.dir / "id").write_text(self._id, encoding="ascii")
        self._db, self._index, self.units = db, index, None
        self._walk_next = True  # a new, empty index: the next sync reads the whole store

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self._manifest_path, timeout=60, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        self._data_version = -1
        return db

    def _close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db, self._index, self._manifest, self._data_version, self._id = None, None, {}, -1, ""
        self.units = None

    def close(self) -> None:
        with self._mutex:
            self._close()
            if self._watcher is not None:
                self._watcher.close()
            self._watcher, self._watch_tried, self._walk_next = None, False, True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._mutex, self._flock, owner_only():  # tantivy and SQLite take the umask (private.py)
            self._ensure_open()
            yield

    # -- the manifest ----------------------------------------------------------------
    def _load_manifest(self) -> dict[str, tuple[int, int]]:
        """The manifest as indexed; re-read only when another connection has committed."""
        assert self._db is not None
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            rows = self._db.execute("SELECT path, size, mtime_ns FROM files")
            self._manifest = {p: (s, m) for p, s, m in rows}
            self._data_version = version
        return self._manifest

    # -- updating --------------------------------------------------------------------
    def defer(self, paths: Iterable[str]) -> None:
        """Note paths a tool step changed; the next :meth:`sync` (every search runs one) reads
        them. A tantivy commit costs several times the rest of a journaled write (figures:
        benchmarks/results/2026-12-06-docstring-figures.md, "search/index.py"), and a manager
        writes many times between searches: so writes only note, and a search pays one commit
        for all of them. Nothing is lost when the process dies first: the index is derived, and
        the first sync of a process walks the whole store."""
        with self._mutex:
            self._pending.update(paths)

    def apply(self, paths: Iterable[str]) -> int:
        """Make the index match the disk for each path (added, edited, gone); one commit."""
        with self._locked():
            return self._apply(sorted(set(paths)))

    def _apply(self, paths: list[str], heap: int = 15_000_000) -> int:
        assert self._db is not None
        if not paths:
            return 0
        self._load_manifest()
        writer = self._index.writer(heap_size=heap, num_threads=1)
        rows: list[tuple[str, int, int, int]] = []
        gone: list[str] = []
        texts: list[tuple[str, str | None]] = []
        try:
            for p in paths:
                writer.delete_documents_by_term("path", p)
                found = self._read(p)
                if found is None:
                    gone.append(p)
                    texts.append((p, None))
                    continue
                (size, mtime), doc, text = found
                if doc is not None:
                    writer.add_document(doc)
                rows.append((p, size, mtime, int(doc is not None)))
                texts.append((p, text))
            writer.commit()
        finally:
            writer.wait_merging_threads()
        if self.units is not None:  # before the manifest: a crash in between only costs a re-read
            self.units.replace(texts)
        with self._db:
            self._db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in gone])
            self._db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", rows)
        for p in gone:
            self._manifest.pop(p, None)
        self._manifest.update({p: (s, m) for p, s, m, _ in rows})
        self._index.reload()
        return len(paths)

    def _read(self, path: str) -> tuple[tuple[int, int], Any, str | None] | None:
        """((size, mtime_ns), document, text), both None if unreadable; None when no such .md
        file."""
        # Through the store's descriptor chain (safefs), not by path: a folder swapped for a
        # link between a check and the open must not let the index read outside the root.
        try:
            mp = parse_memory_path(path)
            st = self.store.safe.lstat(mp.parts, mp.text)
        except (MemdirError, OSError):
            return None
        if st is None or not stat.S_ISREG(st.st_mode) or not mp.name.endswith(".md"):
            return None
        key = (st.st_size, st.st_mtime_ns)
        try:
            text = self.store.safe.read(mp.parts, mp.text).decode("utf-8", errors="replace")
        except (MemdirError, OSError):
            return key, None, None
        f = doc_fields(mp.name, text)
        doc = tantivy.Document(path=mp.text, scope=_scopes(mp), text=f.whole, signage=f.signage)
        return key, doc, text

    def _disk_manifest(self) -> dict[str, tuple[int, int]]:
        return scan(self.store.root)

    def _changes(self) -> Changes | None:
        """The change notices since the last search, or None: walk the whole store (the first
        search of a process, after the index went away, or where there are no notices)."""
        with self._mutex:
            if not self._watch_tried:
                # watches go in before the walk that follows, so no edit falls between them
                self._watcher, self._watch_tried = Watcher.start(self.store.root), True
            if self._watcher is None:
                return None
            changes = self._watcher.drain()
            if self._walk_next or self._index is None or self._stale_handle():
                return None
            return changes

    def _disk_part(self, changes: Changes) -> dict[str, tuple[int, int]]:
        """{path: (size, mtime_ns)} of what the notices name that is on disk now."""
        out: dict[str, tuple[int, int]] = {}
        for folder in changes.folders:
            out.update(scan(self.store.root, folder))
        for path in changes.files - out.keys():
            try:
                mp = parse_memory_path(path)
                st = self.store.safe.lstat(mp.parts, mp.text)
            except (MemdirError, OSError):
                continue
            if st is not None and stat.S_ISREG(st.st_mode) and mp.text == path:
                out[path] = (st.st_size, st.st_mtime_ns)
        return out

    def sync(self) -> SyncReport:
        """Catch up with the tools' deferred writes and with edits made outside the tools: from
        the change notices queued since the last search where the kernel gives them
        (search/watch.py), else from one stat walk; then only what changed is read."""
        start = time.perf_counter()
        changes = self._changes()
        with self._mutex:
            pending, self._pending = self._pending, set()
        if changes is not None:
            changes.files |= pending
            if changes.empty:
                return SyncReport(files=len(self._manifest), seconds=time.perf_counter() - start)
        try:
            return self._sync(changes, pending, start)
        except BaseException:
            with self._mutex:  # not applied: the next sync reads them again, and walks
                self._pending |= pending
                self._walk_next = True
            raise

    def _sync(self, changes: Changes | None, written: set[str], start: float) -> SyncReport:
        # `written` (the tools' deferred paths) are read whatever their stat says: a second
        # same-size write inside the clock's tick keeps its mtime.
        # The walk runs before taking the lock, so writers never wait for it. A file changed
        # after it is seen here only gets refreshed once more: every update re-reads the disk.
        disk = self._disk_manifest() if changes is None else self._disk_part(changes)
        with self._locked():
            known = self._load_manifest()
            if changes is not None:  # compare only what the notices name
                named = disk.keys() | changes.files
                named |= {p for p in known if any(p.startswith(f + "/") for f in changes.folders)}
                known = {p: known[p] for p in named if p in known}
            added = disk.keys() - known.keys()
            removed = known.keys() - disk.keys()
            modified = {p for p in disk.keys() & known.keys() if disk[p] != known[p]}
            rebuilt = not known and bool(disk) and changes is None
            heap = 100_000_000 if len(added) > 1000 else 15_000_000
            self._apply(sorted(added | removed | modified | written), heap=heap)
            files = len(disk) if changes is None else len(self._manifest)
            if changes is None:
                self._walk_next = False
        seconds, walked = time.perf_counter() - start, changes is None
        return SyncReport(len(added), len(modified), len(removed), files, seconds, rebuilt, walked)

    def rebuild(self) -> SyncReport:
        """Throw the index away and index every file again (section units and vectors too,
        where a search by section had built them)."""
        with self._mutex, self._flock:  # both reentrant: sync() takes them again
            self._ensure_open()
            had_units, dense = self.units is not None, self.units.dense if self.units else None
            self._close()
            self._create_empty()
            report = self.sync()
            if had_units:
                self.enable_units(dense is not None)
        report.rebuilt = True
        return report

    def enable_units(self, dense: bool) -> SyncReport:
        """Build section units (and their vectors, with `dense`) for every indexed file, unless
        they are there already. Returns what was built (all zero when nothing was)."""
        start = time.perf_counter()
        from memdir.search.embed import configured, get_embedder

        with self._mutex:  # built already: no cross-process lock for every search
            have = self.units
            if have is not None and not self._stale_handle() and (not dense or have.dense == configured()):
                return SyncReport(files=len(self._manifest))
        with self._locked():
            assert self._db is not None

            name = configured() if dense else None
            if self.units is not None and (not dense or self.units.dense == name):
                return SyncReport(files=len(self._load_manifest()))
            if name:
                get_embedder(name)  # fails here, saying what to install, before any change
            units = UnitIndex.create(self.dir, self._db, name)
            paths = sorted(self._load_manifest())
            for i in range(0, len(paths), 256):
                batch: list[tuple[str, str | None]] = []
                for p in paths[i : i + 256]:
                    found = self._read(p)
                    batch.append((p, None if found is None else found[2]))
                units.replace(batch)
            self.units = units
        return SyncReport(
            added=len(paths), files=len(paths), seconds=time.perf_counter() - start, rebuilt=True
        )

    # -- searching -------------------------------------------------------------------
    def search(self, query: str, scope: str = ROOT.text, top_k: int = 10, *, sync: bool = True) -> list[Hit]:
        """Files under `scope` ranked by BM25 for the terms of `query` (any text; never a syntax
        error). With `sync`, external edits are picked up first."""
        terms = query_terms(query)
        scope_mp = parse_memory_path(scope)
        if sync:
            self.sync()
        if not terms or top_k < 1:
            return []
        try:
            return self._search(terms, scope_mp, top_k)
        except ValueError as exc:  # tantivy reports a broken segment as ValueError
            log.warning("search index failed (%s); rebuilding from the files", exc)
            self.rebuild()
            return self._search(terms, scope_mp, top_k)

    def query(self, terms: list[str], scope: MemoryPath = ROOT) -> Any:
        """The tantivy query: OR of every term over every text field, restricted to `scope`."""
        return or_query(self._schema, terms, BOOSTS, None if scope.is_root else scope.text)

    def _search(self, terms: list[str], scope: MemoryPath, top_k: int) -> list[Hit]:
        with self._mutex:
            if self._index is None or self._stale_handle():
                with self._flock:
                    self._ensure_open()
            self._index.reload()
            searcher = self._index.searcher()
            result = searcher.search(self.query(terms, scope), limit=top_k, count=False)
            return [Hit(searcher.doc(addr)["path"][0], float(score)) for score, addr in result.hits]

    def section_rankings(
        self, terms: list[str], vector: Any, scope: str, n: int
    ) -> dict[str, list[tuple[UnitRow, float]]]:
        """The `n` best units under `scope` by BM25 (when `terms`) and by cosine to `vector`
        (when given), each best first. :meth:`enable_units` must have run (search/hybrid.py)."""
        scope_mp = parse_memory_path(scope)
        out: dict[str, list[tuple[UnitRow, float]]] = {}
        with self._mutex:
            if self.units is None or self._stale_handle():
                raise MemdirError("the section index is not built; search through memdir.search.hybrid")
            if terms:
                out["bm25"] = self.units.bm25(terms, scope_mp, n)
            if vector is not None:
                out["dense"] = self.units.nearest(vector, scope_mp, n)
        return out

    def num_docs(self) -> int:
        with self._locked():
            self._index.reload()
            n: int = self._index.searcher().num_docs
            return n


@functools.lru_cache(maxsize=MAX_OPEN * 8)
def _manifest_file(root: Path) -> str:
    """Where `root`'s index manifest is: looked for on every write step, so joined once."""
    return str(root / STATE_DIR / INDEX_DIR / "manifest.sqlite")


class IndexObserver(StoreObserver):
    """Keeps an existing index in step with each tool step, at the next search
    (:meth:`SearchIndex.defer`). A store that was never searched has no index, and its writes
    cost nothing here: the first search builds it.

    Where the index follows a store, so does the listing's description cache
    (store/descriptions.py): derived state the store has asked for. It lives beside the index,
    not in its manifest, because the manifest exists only once a search built the index, and an
    index present makes every write pay a tantivy commit; the cache costs writes nothing."""

    keeps_description_cache = True

    def on_step(self, store: Store, step: Step) -> None:
        if not SearchIndex.exists_for(store):
            return
        paths = {c.path for c in step.changes} | {c.new_path for c in step.changes if c.new_path}
        SearchIndex.for_store(store).defer(paths)


def observer(store: Store) -> IndexObserver:
    return IndexObserver()
