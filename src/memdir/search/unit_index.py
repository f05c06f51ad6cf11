"""Section-level search state: BM25 over units (`search/units.py`) and their dense vectors.

It lives beside the file index in `<root>/.memdir/index/` and follows it: `SearchIndex` hands
it every path it brings up to date, in the same step, so the two never disagree about what the
disk holds. Postings sit in a second tantivy index (`units/`; file-level BM25 statistics must
not count sections), rows and vectors in the file index's SQLite manifest (`units` table). It
exists only once a store has been searched by section, and vectors only once by meaning: a
store nobody searches that way pays nothing. Deleting it loses nothing.

A unit has one vector per embedding window (`Unit.embed_texts`) and scores by its best. In
memory the vectors are one float32 matrix, a unit's rows side by side, with a live mask per
unit: a file update marks its old units dead and appends the new ones (no reload), and the
matrix is compacted when half of it is dead. Another process's commit (SQLite's data_version
moves) reloads it whole.
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import tantivy

from memdir.search.analysis import ANALYZER_NAME, analyzer, or_query
from memdir.search.embed import Embedder, Vectors, get_embedder
from memdir.search.units import Unit, split_units
from memdir.store.paths import MemoryPath, parse_memory_path

UNITS_VERSION = "units-3"  # bump when units or their vectors change shape
UNIT_DIR = "units"
TEXT_FIELDS = ("text", "signage")
BOOSTS = {"text": 1.0, "signage": 0.05}


@dataclass(frozen=True)
class UnitRow:
    path: str
    ordinal: int
    heading: str
    start: int
    end: int


def _schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("ordinal", stored=True)
    # stored, so a ranking needs no lookup in the table per hit (what one cost:
    # benchmarks/results/2026-12-06-docstring-figures.md, "search/unit_index.py")
    sb.add_text_field("heading", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("start", stored=True)
    sb.add_integer_field("end", stored=True)
    sb.add_text_field("scope", tokenizer_name="raw", index_option="basic")
    for f in TEXT_FIELDS:
        sb.add_text_field(f, tokenizer_name=ANALYZER_NAME, index_option="freq")
    return sb.build()


def _scopes(path: str) -> list[str]:
    mp = parse_memory_path(path)
    return [MemoryPath(mp.parts[:k]).text for k in range(len(mp.parts) + 1)]


def _in_scope(path: str, scope: str) -> bool:
    return scope == "/memories" or path == scope or path.startswith(scope + "/")


class UnitIndex:
    """The units of one store. Built by :meth:`create`, reopened by :meth:`open`."""

    def __init__(self, dir: Path, db: sqlite3.Connection, dense: str | None, index: Any) -> None:
        self.dir = dir
        self.db = db
        self.dense = dense  # the embedder's name, or None: BM25 by section only
        self._index = index
        self._schema = _schema()
        self._rows: list[UnitRow] = []  # one per unit in the matrix
        self._row_of: dict[tuple[str, int], int] = {}
        self._alive = np.zeros(0, dtype=bool)  # per unit
        self._of_path: dict[str, list[int]] = {}
        self._starts = np.zeros(0, dtype=np.int64)  # each unit's first matrix row
        # one row per window; room to grow, so a file update appends without copying the rest
        self._buf: Vectors = np.zeros((0, 0), dtype=np.float32)
        self._used = 0
        self._version = -1

    # -- creating and opening ----------------------------------------------------------
    @classmethod
    def create(cls, dir: Path, db: sqlite3.Connection, dense: str | None) -> UnitIndex:
        tdir = dir / UNIT_DIR
        shutil.rmtree(tdir, ignore_errors=True)
        tdir.mkdir(parents=True)
        with db:
            db.execute("DROP TABLE IF EXISTS units")
            db.execute(
                "CREATE TABLE units (path TEXT, ordinal INTEGER, heading TEXT, start INTEGER,"
                " end_ INTEGER, vec BLOB, PRIMARY KEY (path, ordinal))"
            )
            db.execute("INSERT OR REPLACE INTO meta VALUES ('units', ?)", (UNITS_VERSION,))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('dense', ?)", (dense or "",))
        index = tantivy.Index(_schema(), path=str(tdir))
        index.register_tokenizer(ANALYZER_NAME, analyzer())
        index.config_reader(reload_policy="Manual")
        return cls(dir, db, dense, index)

    @classmethod
    def open(cls, dir: Path, db: sqlite3.Connection) -> UnitIndex | None:
        """The unit index as left on disk, or None when there is none or it cannot be trusted
        (it is then forgotten, and built again by the next search by section)."""
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('units', 'dense')").fetchall())
        tdir = dir / UNIT_DIR
        if meta.get("units") != UNITS_VERSION or not tantivy.Index.exists(str(tdir)):
            cls.forget(dir, db)
            return None
        try:
            index = tantivy.Index.open(str(tdir))
            index.register_tokenizer(ANALYZER_NAME, analyzer())
            index.config_reader(reload_policy="Manual")
            rows = db.execute("SELECT count(*) FROM units").fetchone()[0]
            if index.searcher().num_docs != rows:
                raise ValueError(f"unit index holds {index.searcher().num_docs} units, its table {rows}")
        except (ValueError, sqlite3.Error, OSError):
            cls.forget(dir, db)
            return None
        return cls(dir, db, meta.get("dense") or None, index)

    @staticmethod
    def forget(dir: Path, db: sqlite3.Connection) -> None:
        with db:
            db.execute("DELETE FROM meta WHERE key IN ('units', 'dense')")
            db.execute("DROP TABLE IF EXISTS units")
        shutil.rmtree(dir / UNIT_DIR, ignore_errors=True)

    @property
    def embedder(self) -> Embedder | None:
        return get_embedder(self.dense) if self.dense else None

    # -- updating ----------------------------------------------------------------------
    def replace(self, items: Sequence[tuple[str, str | None]]) -> int:
        """Make the units of each path match its text (None: the file is gone or unreadable);
        one tantivy commit and one transaction. Returns the number of units written."""
        if not items:
            return 0
        units = [u for path, text in items if text is not None for u in split_units(path, text)]
        embedder = self.embedder
        vectors: list[Vectors] | None = None
        if embedder is not None:
            texts = [u.embed_texts for u in units]
            flat = embedder.encode([t for group in texts for t in group])
            bounds = np.cumsum([0, *(len(g) for g in texts)])
            vectors = [flat[a:b] for a, b in itertools.pairwise(bounds)]
        writer = self._index.writer(heap_size=15_000_000, num_threads=1)
        try:
            for path, _ in items:
                writer.delete_documents_by_term("path", path)
            for u in units:
                writer.add_document(
                    tantivy.Document(
                        path=u.path,
                        ordinal=u.ordinal,
                        heading=u.heading,
                        start=u.start,
                        end=u.end,
                        scope=_scopes(u.path),
                        text=u.index_text,
                        signage=u.context,
                    )
                )
            writer.commit()
        finally:
            writer.wait_merging_threads()
        with self.db:
            self.db.executemany("DELETE FROM units WHERE path = ?", [(p,) for p, _ in items])
            self.db.executemany(
                "INSERT INTO units VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        u.path,
                        u.ordinal,
                        u.heading,
                        u.start,
                        u.end,
                        None if vectors is None else np.ascontiguousarray(vectors[i]).tobytes(),
                    )
                    for i, u in enumerate(units)
                ],
            )
        self._index.reload()
        if self._version != -1:  # the matrix is loaded: bring it along instead of reloading
            self._drop_rows({p for p, _ in items})
            self._append(units, vectors)
        return len(units)

    def _drop_rows(self, paths: set[str]) -> None:
        for path in paths:
            for i in self._of_path.pop(path, []):
                self._alive[i] = False
                self._row_of.pop((path, self._rows[i].ordinal), None)

    def _append(self, units: list[Unit], vectors: list[Vectors] | None) -> None:
        if vectors is None or not units:
            return
        n = len(self._rows)
        for i, u in enumerate(units):
            self._rows.append(UnitRow(u.path, u.ordinal, u.heading, u.start, u.end))
            self._row_of[(u.path, u.ordinal)] = n + i
            self._of_path.setdefault(u.path, []).append(n + i)
        counts = np.array([len(v) for v in vectors], dtype=np.int64)
        starts = self._used + np.concatenate([[0], np.cumsum(counts)[:-1]])
        block = np.vstack(vectors)
        need = self._used + len(block)
        if need > len(self._buf) or self._buf.shape[1] != block.shape[1]:
            grown = np.zeros((max(need, 2 * len(self._buf), 1024), block.shape[1]), dtype=np.float32)
            grown[: self._used] = self._buf[: self._used]
            self._buf = grown
        self._buf[self._used : need] = block
        self._used = need
        self._starts = np.concatenate([self._starts, starts])
        self._alive = np.concatenate([self._alive, np.ones(len(units), dtype=bool)])
        if self._alive.size > 64 and self._alive.sum() * 2 < self._alive.size:
            self._compact()

    @property
    def _matrix(self) -> Vectors:
        return self._buf[: self._used]

    def _counts(self) -> npt.NDArray[np.int64]:
        return np.diff(np.append(self._starts, self._used))

    def _index_paths(self) -> None:
        self._row_of = {(r.path, r.ordinal): i for i, r in enumerate(self._rows)}
        self._of_path = {}
        for i, r in enumerate(self._rows):
            self._of_path.setdefault(r.path, []).append(i)

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive)
        counts = self._counts()
        self._buf = self._matrix[np.repeat(self._alive, counts)]
        self._used = len(self._buf)
        kept = counts[keep]
        self._starts = np.concatenate([[0], np.cumsum(kept)[:-1]]).astype(np.int64)
        self._rows = [self._rows[i] for i in keep]
        self._alive = np.ones(len(keep), dtype=bool)
        self._index_paths()

    def _load(self) -> None:
        """(Re)load rows and vectors from the table when it changed under another connection."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return
        dim = self.embedder.dim if self.embedder is not None else 0
        rows: list[UnitRow] = []
        blocks: list[Vectors] = []
        for path, ordinal, heading, start, end, vec in self.db.execute(
            "SELECT path, ordinal, heading, start, end_, vec FROM units WHERE vec IS NOT NULL"
        ):
            rows.append(UnitRow(path, ordinal, heading, start, end))
            blocks.append(np.frombuffer(vec, dtype=np.float32).reshape(-1, dim))
        self._rows = rows
        self._index_paths()
        counts = np.array([len(b) for b in blocks], dtype=np.int64)
        self._starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if blocks else counts
        self._buf = np.vstack(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
        self._used = len(self._buf)
        self._alive = np.ones(len(rows), dtype=bool)
        self._version = version

    # -- searching ---------------------------------------------------------------------
    def bm25(self, terms: list[str], scope: MemoryPath, top_k: int) -> list[tuple[UnitRow, float]]:
        if not terms:
            return []
        self._index.reload()
        searcher = self._index.searcher()
        query = or_query(self._schema, terms, BOOSTS, None if scope.is_root else scope.text)
        result = searcher.search(query, limit=top_k, count=False)
        out: list[tuple[UnitRow, float]] = []
        for score, addr in result.hits:
            doc = searcher.doc(addr)
            row = UnitRow(
                doc["path"][0],
                int(doc["ordinal"][0]),
                doc["heading"][0],
                int(doc["start"][0]),
                int(doc["end"][0]),
            )
            out.append((row, float(score)))
        return out

    def nearest(self, query: Vectors, scope: MemoryPath, top_k: int) -> list[tuple[UnitRow, float]]:
        """Units by cosine to the query vector, each at its best window, best first (exact:
        one matrix product and a maximum per unit)."""
        self._load()
        if not self._rows:
            return []
        scores = np.maximum.reduceat(self._matrix @ query, self._starts)
        mask = self._alive
        if not scope.is_root:
            inside = (_in_scope(r.path, scope.text) for r in self._rows)
            mask = mask & np.fromiter(inside, bool, len(self._rows))
        scores = np.where(mask, scores, -np.inf)
        k = min(top_k, int(mask.sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self._rows[i], float(scores[i])) for i in top]
