"""The description a listing shows beside each file, and a cache of it shared by processes.

A folder listing shows every file's frontmatter description (docs/study.md, Tool contracts), so
an uncached root view parses hundreds of YAML heads. The cache keeps, per memory path, the
description read from the file together with the file's `(size, mtime_ns, ctime_ns, inode)` as
the walk stat it; a listing uses a row only while the file's stat is still exactly that. ctime
joins size and mtime because no program can set it: a `touch -r`, a tar extraction or an
`rsync -t` can give new content an old mtime, never an old ctime; the inode because a file
renamed over another is another inode even where a rename leaves ctime alone (git keys its
index by the same fields).

Racy rows, as git calls them (its index's racy-clean rule): a file rewritten with the same size
within one timestamp tick of the read that cached it keeps its stat, and a row taken from the
first version would then be stale. So a row is stored only for a file whose mtime and ctime lie
strictly before the filesystem's own clock read just before the file was read: any later write
is stamped at or after that clock, so it changes the stat. The clock is the cache file's mtime
set to "now" (`os.utime`), stamped by the same filesystem and kernel clock as the memory files,
so coarse timestamps (one tick, a FAT 2 s) and a network server's clock need no margin. A file
too recent to trust is read again by every listing until a listing finds it older than its clock.

The cache is SQLite in WAL mode at `<root>/.memdir/descriptions.sqlite` (readers never wait;
writers wait briefly and give up, leaving the rows for the next listing), like the index
manifest (search/index.py). Deleting it loses nothing. It is never needed for a correct listing:
any failure here means the listing reads the files, as with no cache at all. A store whose
observers do not ask for it (a bare `Store`, the index switched off) lists uncached.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from memdir.errors import ToolError
from memdir.store import frontmatter
from memdir.store.paths import MemoryPath
from memdir.store.per_root import PerRoot
from memdir.store.private import owner_only
from memdir.store.safefs import private_dirs
from memdir.store.store import Store

log = logging.getLogger(__name__)

HEAD_BYTES = 16384  # enough for any frontmatter a listing shows (parsed up to HEAD_CHARS characters)
HEAD_CHARS = 4096
CACHE_FILE = "descriptions.sqlite"
MAX_OPEN = 32  # caches kept open per process, least recently used closed first (as the index)
PRUNE_SLACK = 256  # rows added since the last sweep before a listing sweeps those of files gone
BUSY_TIMEOUT_S = 2.0  # a listing waits this long at most to store its rows, then skips it

Key = tuple[int, int, int, int]  # (size, mtime_ns, ctime_ns, inode) as the walk stat the file


def head_description(data: bytes) -> str | None:
    """The description in a file's head (its first HEAD_BYTES bytes): a head cut inside a
    multibyte character is read up to it; other bytes that are not UTF-8 mean none."""
    try:
        head = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) < HEAD_BYTES or exc.start < len(data) - 3:
            return None
        head = data[: exc.start].decode("utf-8")
    return frontmatter.parse(head[:HEAD_CHARS]).description


def _read_description(store: Store, mp: MemoryPath) -> tuple[bool, str | None]:
    """(read, description) of the file at `mp`, through the store's link-safe reader (a folder
    swapped for a link mid-listing cannot lead out); a hard-linked, linked or unreadable file is
    not read, so it has no description, and no row is kept for it."""
    try:
        data = store.safe.read(mp.parts, mp.text, limit=HEAD_BYTES)
    except ToolError:
        return False, None
    return True, head_description(data)


def read_description(store: Store, mp: MemoryPath) -> str | None:
    """The description a listing shows for the file at `mp`, read from the file (no cache)."""
    return _read_description(store, mp)[1]


class DescriptionCache:
    """The description cache of one store. Use :meth:`for_store` to share one per root."""

    registry: ClassVar[PerRoot[DescriptionCache]] = PerRoot(MAX_OPEN)

    def __init__(self, path: Path) -> None:
        self.path = path
        self._mutex = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._rows: dict[str, tuple[Key, str | None]] = {}
        self._data_version = -1
        self._identity = (-1, -1)  # (st_dev, st_ino) of the file the connection has open
        self._swept_at = 0  # rows held after the last sweep of rows of files gone

    @classmethod
    def for_store(cls, store: Store) -> DescriptionCache:
        return cls.registry.get(store.root, lambda: cls(store.state_dir / CACHE_FILE))

    def close(self) -> None:
        with self._mutex:
            self._close()

    def _close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db, self._rows, self._data_version = None, {}, -1

    # -- the table -------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        """The connection, reopened when the file was deleted or replaced meanwhile (another
        process, or a person clearing derived state), so rows go where other processes look."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None
        if self._db is not None and st is not None and (st.st_dev, st.st_ino) == self._identity:
            return self._db
        self._close()
        try:
            db = self._connect()
        except sqlite3.DatabaseError:  # not a database (a cut file, garbage): it is only a cache
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            db = self._connect()
        st = os.stat(self.path)
        self._db, self._identity = db, (st.st_dev, st.st_ino)
        return db

    def _connect(self) -> sqlite3.Connection:
        private_dirs(self.path.parent)  # the state folder, deleted meanwhile: loses nothing
        with owner_only():  # SQLite makes the file (and its WAL, with its mode) under the umask
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS descriptions (path TEXT PRIMARY KEY, size INTEGER, "
                "mtime_ns INTEGER, ctime_ns INTEGER, ino INTEGER, description TEXT)"
            )
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    def _load(self) -> dict[str, tuple[Key, str | None]]:
        """The rows; read again only when another connection has committed since."""
        db = self._open()
        version = db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            rows = db.execute("SELECT path, size, mtime_ns, ctime_ns, ino, description FROM descriptions")
            self._rows = {p: ((s, m, c, i), d) for p, s, m, c, i, d in rows}
            self._data_version = version
        return self._rows

    def _clock(self) -> int:
        """The filesystem's "now": the cache file's mtime, set by the kernel to its clock."""
        os.utime(self.path)
        return os.stat(self.path).st_mtime_ns

    # -- a listing's descriptions ------------------------------------------------------
    def describe(self, store: Store, files: Sequence[tuple[MemoryPath, str, Key]]) -> list[str | None]:
        """The description of each file (its memory path, the path's text and its stat key), as
        :func:`read_description` would read it now."""
        try:
            with self._mutex:
                rows = self._load()
                cached = [rows.get(text) for _, text, _ in files]
        except (sqlite3.Error, OSError) as exc:
            log.warning("description cache unavailable (%s); listing reads the files", exc)
            return [read_description(store, mp) for mp, _, _ in files]
        out: list[str | None] = []
        misses: list[tuple[str, Key, str | None]] = []
        clock: int | None = None
        for (mp, text, key), row in zip(files, cached, strict=True):
            if row is not None and row[0] == key:
                out.append(row[1])
                continue
            if clock is None:
                clock = self._clock_or_zero()
            read, desc = _read_description(store, mp)
            out.append(desc)
            if read and max(key[1], key[2]) < clock:  # not racy: a later write would change the stat
                misses.append((text, key, desc))
        if misses:
            self._store(misses)
        return out

    def _clock_or_zero(self) -> int:
        try:
            return self._clock()
        except OSError:
            return 0  # no clock: nothing is stored, everything is read

    def _store(self, misses: list[tuple[str, Key, str | None]]) -> None:
        rows = [(p, *k, d) for p, k, d in misses]
        try:
            with self._mutex:
                db = self._open()
                with db:
                    db.executemany("INSERT OR REPLACE INTO descriptions VALUES (?, ?, ?, ?, ?, ?)", rows)
                self._rows.update({p: (k, d) for p, k, d in misses})
        except (sqlite3.Error, OSError) as exc:  # busy or read-only: the next listing tries again
            log.debug("description cache not updated (%s)", exc)

    def prune(self, top: MemoryPath, depth: int, present: set[str]) -> None:
        """Drop rows of files gone: those at most `depth` levels below `top` that a complete
        walk of those levels did not find (`present`: the memory paths of its .md files). A
        row of a file deleted or moved is never used again; a sweep runs only once
        PRUNE_SLACK rows were added since the last, so the table stays near the store's size
        at no cost per listing. Dropping a row only ever costs a read."""
        with self._mutex:
            if len(self._rows) <= self._swept_at + PRUNE_SLACK:
                return
            below = top.text + "/"
            gone = [
                p
                for p in self._rows
                if p.startswith(below) and p not in present and p.count("/", len(below)) < depth
            ]
            try:
                if gone:
                    db = self._open()
                    with db:
                        db.executemany("DELETE FROM descriptions WHERE path = ?", [(p,) for p in gone])
            except (sqlite3.Error, OSError) as exc:
                log.debug("description cache not pruned (%s)", exc)
                return
            for p in gone:
                self._rows.pop(p, None)
            self._swept_at = len(self._rows)


def cache_for(store: Store) -> DescriptionCache | None:
    """The store's description cache when one of its observers keeps derived state that asks
    for it (`keeps_description_cache`: the search index's), else None: a bare `Store` and a
    store with the index off list uncached, and leave no state behind."""
    if not any(o.keeps_description_cache for o in store.observers):
        return None
    try:
        return DescriptionCache.for_store(store)
    except OSError as exc:  # no state folder can be made (a read-only store): list uncached
        log.debug("no description cache for %s (%s)", store.root, exc)
        return None
