"""The run folder both studies write: append-only JSONL tables and a manifest, with one set of rules.

A run of the conversational study (eval/folder.py) and a run of the skill chain (skills/folder.py)
are folders of records: tables of rows appended as work finishes (answers and model calls; task
rows and aborted cells) and a `manifest.json` of the settings that made them. Everything either
study reports is derived from its folder afterwards, so the folder's rules are the study's rules,
and they are kept here once:

- A row is one JSON object on a line that ends in a newline. An append interrupted by a kill
  leaves at most a last line without one: readers skip it, and `repair` cuts it before anyone
  appends again, so a cut never glues two rows into one. A complete line that is not JSON is
  damage no writer here makes, and it is refused rather than silently dropped from a report.
- One writer at a time per table, across threads and processes (see `JsonlTable`).
- Rewrites (`repair`, `withdraw`) and the manifest go through `store.atomic.write_atomic`: a kill
  leaves the old file or the new one, never half of either.
- A resumed run must share the settings of the run it continues (`require_same`): answers made
  under other settings would be reported as if they were made under these.
- The abort rule (docs/study.md): a cell whose model calls fail is aborted whole, never reported
  partially. The conversational study withdraws the cell's rows (`withdraw`); the skill chain,
  whose rows cannot be asked again, lists the cell in its aborted table and its report leaves
  the cell's rows out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import TypeAdapter, ValidationError

from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.store.atomic import write_atomic
from memdir.store.oslock import OsLock

LOCK_TIMEOUT = 120.0  # seconds; a writer holds the lock only for one append or one rewrite


class JsonlTable:
    """One append-only table of JSON rows, a line each.

    Writers are serialized by an OS file lock (`store/oslock.py`, an flock) on a lock
    file beside the table, not on the table itself: `repair` and `withdraw` replace the table
    with a new file, and a lock held on the old file would not stop a writer that opened the new
    one. The lock excludes other processes and, since each thread takes it on its own descriptor,
    other threads too; it is the lock the skill chain already used (`.tasks.lock`) and the one
    the stores use for their writer lock. Readers take no lock: appends only add whole lines at
    the end, and a line still being written looks to a reader like a cut one, which it skips.

    `ensure_ascii` keeps each table's bytes as its study has always written them (the chain's
    rows are ASCII-escaped, the conversational study's are not).
    """

    def __init__(self, path: Path, *, lock: Path | None = None, ensure_ascii: bool = False) -> None:
        self.path = path
        self.ensure_ascii = ensure_ascii
        lock_path = lock if lock is not None else path.with_name(f".{path.stem}.lock")
        self._lock = OsLock(lock_path, timeout=LOCK_TIMEOUT)

    def line(self, row: Mapping[str, object]) -> str:
        return json.dumps(row, ensure_ascii=self.ensure_ascii, default=str) + "\n"

    def append(self, rows: Iterable[Mapping[str, object]]) -> None:
        """Append rows in one write under the lock, so another writer's rows never land between
        them; the file is created even when `rows` is empty."""
        data = "".join(self.line(r) for r in rows).encode("utf-8")
        with self._lock, open(self.path, "ab") as fh:
            fh.write(data)

    def rows(self) -> list[JsonObject]:
        """Every complete row, in order; a last line cut short by an interruption is skipped.
        A row is JSON as stored: each study reads it into its record (`row_problem`, pydantic)."""
        return [row for _, row in self._read()]

    def repair(self) -> None:
        """Cut a last line left short by an interruption (its work is done again on resume)."""
        with self._lock:
            if not self.path.exists():
                return
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                write_atomic(self.path, data[: data.rfind(b"\n") + 1])

    def withdraw(self, match: Mapping[str, object]) -> int:
        """Remove every row whose values equal all of `match` (an aborted cell is never reported
        partially), in one atomic rewrite: on any failure the table is as it was. Kept rows keep
        their bytes; a cut last line goes too. Returns how many rows were withdrawn."""
        with self._lock:
            rows = self._read()
            keep = [line for line, row in rows if any(row.get(k) != v for k, v in match.items())]
            write_atomic(self.path, b"".join(keep))
            return len(rows) - len(keep)

    def _read(self) -> list[tuple[bytes, JsonObject]]:
        """[(line with its newline, row)] of the table's complete lines as they are now."""
        data = self.path.read_bytes() if self.path.exists() else b""
        rows: list[tuple[bytes, JsonObject]] = []
        # split on b"\n" alone: a row's text may hold other line separators (U+2028 in a quote);
        # what follows the last b"\n" is a cut line, left out
        for n, text in enumerate(data.split(b"\n")[:-1], start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except ValueError:  # not JSON, or not UTF-8
                row = None
            if not isinstance(row, dict):
                raise MemdirError(
                    f"{self.path}:{n} is not a JSON object; the table was damaged by something other "
                    "than an interrupted append"
                )
            rows.append((text + b"\n", row))
        return rows


def read_manifest(path: Path) -> JsonObject | None:
    """A run folder's manifest as stored, or None before the run's first start."""
    if not path.exists():
        return None
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(manifest, dict):
        raise MemdirError(f"{path} is not a JSON object")
    return manifest


def write_manifest(path: Path, manifest: Mapping[str, object], *, indent: int = 2, end: str = "") -> None:
    """Write a manifest atomically. `indent` and `end` keep each study's bytes as they were
    (the conversational study: indent 2, no final newline; the chain: indent 1 and a newline)."""
    write_atomic(path, (json.dumps(manifest, indent=indent) + end).encode("utf-8"))


def differing(stored: Mapping[str, object], mine: Mapping[str, object]) -> dict[str, tuple[object, object]]:
    """{setting: (stored value, this run's value)} for each setting that differs; a setting
    missing on one side counts as None there."""
    keys = sorted(set(stored) | set(mine))
    return {k: (stored.get(k), mine.get(k)) for k in keys if stored.get(k) != mine.get(k)}


def require_same(
    out: Path,
    stored: Mapping[str, object] | None,
    mine: Mapping[str, object],
    *,
    keys: Iterable[str] | None = None,
    refusal: str | None = None,
) -> None:
    """Refuse to continue the run in `out` under other settings than the stored ones (None: no
    run there yet). `keys` limits the comparison; `refusal` replaces the default message, which
    names each differing setting as (stored, this run's)."""
    if stored is None:
        return
    if keys is not None:
        wanted = set(keys)
        stored = {k: v for k, v in stored.items() if k in wanted}
        mine = {k: v for k, v in mine.items() if k in wanted}
    diff = differing(stored, mine)
    if diff:
        hint = "resume with the same settings or choose another --out"
        raise MemdirError(refusal or f"{out} holds a run with other settings {diff}; {hint}")


def not_a_row(exc: ValidationError, where: str, kind: str, fix: str = "") -> MemdirError:
    """The error for a line or file that is not the record its study writes (`kind`), naming
    `where`, the first field at fault and what to do (`fix`, else remove the line); both studies
    read their tables through it."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "the top level"
    todo = fix or "remove the line, or restore the run folder's copy"
    return MemdirError(
        f"{where} is not a {kind}: {field}: {first['msg']} ({exc.error_count()} problem(s)); "
        f"no run of this memdir wrote it: {todo}"
    )


@lru_cache(maxsize=64)
def _adapter(hint: Any) -> TypeAdapter[Any]:
    return TypeAdapter(hint)


@lru_cache(maxsize=4)
def _hints(row_type: Any) -> dict[str, Any]:
    return get_type_hints(row_type)


def row_problem(row: Any, row_type: Any) -> str | None:
    """Why `row` is not a `row_type` (the study's record of its table): not an object, or a field
    of another type than the study writes (strict: no string read as a number); None if it is. A
    field left out is not a problem: rows of older runs lack some. The UI's pages leave such a row
    out and name it; the skill report refuses it."""
    if not isinstance(row, dict):
        return f"a JSON {type(row).__name__}, not an object"
    for key, hint in _hints(row_type).items():
        if key in row:
            try:
                _adapter(hint).validate_python(row[key], strict=True)
            except ValidationError:
                return f"{key} is a JSON {_json_type(row[key])}, not {_shown_hint(hint)}"
    return None


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _shown_hint(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")
