"""A page of a file's lines, read in bounded memory.

The UI's file page used to read and show a whole file, so a large file took many times its size
in memory and its page never finished drawing
(benchmarks/results/2026-12-06-docstring-figures.md, "store/window.py"). A window reads the file
a chunk at a time through the store's link-safe descriptors, keeps only the lines it shows (at
most `PAGE_LINES` lines and `PAGE_BYTES` bytes; a single line longer than a page is cut) and
only counts the rest, so a page of any file costs one pass over it and memory of about one chunk
plus one page.

Lines are split at "\\n" only, as everywhere memdir reads its own format: a last line without a
newline counts, the newline that ends a file does not start another (so an empty file is one
empty line, as the source view has always shown it).
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable
from dataclasses import dataclass

from memdir.errors import NotFoundError, PathError
from memdir.store.paths import MemoryPath
from memdir.store.store import Store

PAGE_LINES = 1000
PAGE_BYTES = 256 * 1024
CHUNK = 1 << 20


@dataclass(frozen=True)
class Window:
    """Lines `first`..`last` of a file of `total_lines` lines and `size` bytes, as `text` (joined
    by "\\n", no newline after the last); `cut` when the one line shown is longer than a page
    and only its first `PAGE_BYTES` are in `text`."""

    text: str
    first: int
    last: int
    total_lines: int
    size: int
    cut: bool = False

    @property
    def whole(self) -> bool:
        return self.first == 1 and self.last == self.total_lines and not self.cut

    @property
    def next_first(self) -> int | None:
        return self.last + 1 if self.last < self.total_lines else None

    def previous_first(self, lines: int = PAGE_LINES) -> int | None:
        return max(1, self.first - lines) if self.first > 1 else None


def read_window(
    store: Store,
    path: str | MemoryPath,
    first: int = 1,
    *,
    lines: int = PAGE_LINES,
    max_bytes: int = PAGE_BYTES,
) -> Window:
    """The page of the store file `path` that starts at line `first`."""
    mp = store.parse(path)
    if mp.is_root:
        raise PathError(f"{mp.text} is a folder, not a file")
    with store.safe.open_plain(mp.parts, mp.text) as fd:
        return window_of(
            iter(lambda: os.read(fd, CHUNK), b""), first, lines=lines, max_bytes=max_bytes, shown=mp.text
        )


def window_of(
    chunks: Iterable[bytes],
    first: int = 1,
    *,
    lines: int = PAGE_LINES,
    max_bytes: int = PAGE_BYTES,
    shown: str = "the file",
    errors: str = "strict",
) -> Window:
    """The page starting at line `first` of the file whose bytes `chunks` yields in order;
    `errors` as `bytes.decode` takes it (a store file must be UTF-8, as `Store.read_text`
    holds; a past step's file is shown with bad bytes replaced, as the journal kept it)."""
    if first < 1:
        raise PathError(f"lines are numbered from 1, not {first}")
    line = 1  # the line the next byte read belongs to, until the page starts
    page = bytearray()  # from the start of line `first`: one byte past a page at most
    full = False
    newlines = size = 0
    ends_with_newline = False
    for chunk in chunks:
        if not chunk:
            continue
        size += len(chunk)
        count = chunk.count(b"\n")
        newlines += count
        ends_with_newline = chunk.endswith(b"\n")
        if full:
            continue
        at = 0
        if line < first:
            if line + count < first:
                line += count
                continue
            for _ in range(first - line):
                at = chunk.index(b"\n", at) + 1
            line = first
        page += chunk[at : at + max_bytes + 1 - len(page)]
        full = len(page) > max_bytes or page.count(b"\n") >= lines
    total = newlines + (0 if ends_with_newline else 1)
    if first > total:
        raise NotFoundError(f"{shown} has {total} lines; there is no line {first} (open it from line 1)")
    rows = bytes(page).split(b"\n")
    tail = rows.pop()  # after the last newline taken: a part of a line, or the file's last line
    if not full and tail:
        rows.append(tail)
    kept: list[bytes] = []
    used = 0
    for row in rows[:lines]:
        used += len(row) + 1
        if used > max_bytes + 1:
            break
        kept.append(row)
    cut = False
    if not kept and full:  # one line longer than a page: its first max_bytes bytes
        kept, cut = [tail[:max_bytes]], True
    elif not kept:  # an empty file: one empty line
        kept = [b""]
    data = b"\n".join(kept)
    try:
        text = codecs.getincrementaldecoder("utf-8")(errors).decode(data, final=not cut)
    except UnicodeDecodeError:
        raise PathError(f"{shown} is not UTF-8 text") from None
    return Window(text, first, first + len(kept) - 1, total, size, cut)
