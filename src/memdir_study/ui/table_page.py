"""A page of a run's JSONL table (answers.jsonl, tasks.jsonl), read in bounded memory.

The answers page used to read a run's whole answers.jsonl into one string, parse and type-check
every row and keep them all, to show 100: a long run's table costs its size several times over.
A page here reads the table once, a chunk at a time through the run's link-safe descriptors,
and parses and checks only the rows it shows; the rows before it and after it are only counted,
so a page costs about one chunk plus one page of rows, whatever the table's size.

A page is counted in rows, a row being a non-blank line: a malformed line on the page is left
out and named (its line number and why), as `study/runfolder.row_problem` says, so the page shows the
rows around it. A last line without its newline that is not JSON is a row still being written
(memdir_study/runfolder.py passes over it too), not a row. A filter (`variant=...`) keeps the rows
whose field has that value: a line is parsed only when the value's JSON text occurs in it, so
the rows of other variants are passed over unparsed; a line that is not a row of the filter's
value (not JSON, another value) is not counted by a filtered page.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from memdir.jsontypes import JsonObject
from memdir.store.paths import MemoryPath
from memdir.store.store import Store
from memdir_study.runfolder import row_problem
from memdir_study.ui.runs import ROW_TYPES, Malformed

CHUNK = 1 << 20
MAX_ROW_BYTES = 1 << 20  # a study's row is a few KiB; a longer line is named, never held


@dataclass
class TablePage:
    """Rows `start`.. of a table of `total` rows (those the filter keeps), the malformed lines
    among them, and `parsed`: how many lines were parsed to make the page."""

    start: int
    rows: list[JsonObject] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    total: int = 0
    parsed: int = 0

    @property
    def more(self) -> int:
        """The rows after this page."""
        return max(0, self.total - self.start - len(self.rows) - len(self.malformed))


def _lines(fd: int) -> Iterator[tuple[int, bytes | None, bool]]:
    """(line number, its bytes, whether its newline was read) for each line of `fd`; a line
    longer than MAX_ROW_BYTES as None, never held whole."""
    number, carry, over = 1, bytearray(), False
    for chunk in iter(lambda: os.read(fd, CHUNK), b""):
        at, view = 0, memoryview(chunk)
        while True:
            end = chunk.find(b"\n", at)
            stop = len(chunk) if end < 0 else end
            if not over and len(carry) + stop - at > MAX_ROW_BYTES:
                over = True
                carry.clear()
            if not over:
                carry += view[at:stop]
            if end < 0:
                break
            yield number, None if over else bytes(carry), True
            number, over, at = number + 1, False, end + 1
            carry.clear()
    if carry or over:
        yield number, None if over else bytes(carry), False


def _needles(want: Mapping[str, str]) -> list[tuple[bytes, ...]]:
    """Per filter, the JSON texts its value may be written as (escaped or not)."""
    return [
        tuple({json.dumps(v).encode(), json.dumps(v, ensure_ascii=False).encode()}) for v in want.values()
    ]


def read_page(
    store: Store, table: MemoryPath, start: int, count: int, want: Mapping[str, str] | None = None
) -> TablePage:
    """Rows `start` to `start + count` (0 first) of the JSONL `table` in the run's `store`,
    keeping only the rows whose fields have the values `want` names."""
    want = {k: v for k, v in (want or {}).items() if v}
    needles = _needles(want)
    row_type = ROW_TYPES.get(table.name)
    page = TablePage(start)
    with store.safe.open_plain(table.parts, table.text) as fd:
        for number, line, complete in _lines(fd):
            if line is not None and not line.strip():
                continue
            row: Any = None
            parsed = False
            if want:
                if line is None or not all(any(n in line for n in ns) for ns in needles):
                    continue
                row, parsed = _parse(line), True
                page.parsed += 1
                if not isinstance(row, dict) or any(row.get(k) != v for k, v in want.items()):
                    continue
            elif not complete and line is not None:  # the last line: a row, or one being written
                row, parsed = _parse(line), True
                page.parsed += 1
                if row is _NOT_JSON:
                    continue
            index = page.total
            page.total += 1
            if not start <= index < start + count:
                continue
            if line is None:
                page.malformed.append(Malformed(number, f"longer than {MAX_ROW_BYTES >> 20} MiB"))
                continue
            if not parsed:
                row = _parse(line)
                page.parsed += 1
            problem = _problem(row, row_type)
            if problem is None:
                page.rows.append(row)
            else:
                page.malformed.append(Malformed(number, problem))
    return page


_NOT_JSON = object()


def _parse(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return _NOT_JSON


def _problem(row: Any, row_type: Any) -> str | None:
    if row is _NOT_JSON:
        return "not JSON"
    if row_type is not None:
        return row_problem(row, row_type)
    return None if isinstance(row, dict) else f"a JSON {type(row).__name__}, not an object"
