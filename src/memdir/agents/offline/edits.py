"""Reads and line edits through a harness, for the offline curator's mends.

Each read is a `view` or a `grep` and each change one `str_replace`, `insert`, `create` or
`rename`, so a mend is metered and journaled call by call like the curator's other writes, and
a refused call (a guard, a stale anchor) leaves the file as it was and comes back as its text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memdir.jsontypes import JsonObject, JsonValue
from memdir.models.base import LoggedCall
from memdir.tools.base import ToolResult
from memdir.tools.profiles import Harness


class Edits:
    """The tool calls one mend makes, kept in `calls` for its record line."""

    def __init__(self, harness: Harness) -> None:
        self.h = harness
        self.calls: list[LoggedCall] = []

    def run(self, name: str, **args: Any) -> ToolResult:
        self.calls.append({"name": name, "args": args})
        return self.h.call(name, args)

    def call(self, name: str, **args: Any) -> str | None:
        """Run a writing call: None when it succeeded, else the tool's error text."""
        res = self.run(name, **args)
        return res.text.removeprefix("Error: ") if res.is_error else None

    def lines(self, path: str) -> list[str] | None:
        """The lines of file `path` as `view` shows them, or None when it is not a file."""
        res = self.run("view", path=path)
        if res.is_error or (res.data or {}).get("kind") != "file":
            return None
        return [row.split("\t", 1)[1] if "\t" in row else "" for row in res.text.split("\n")[1:]]

    def listing(self, folder: str) -> list[JsonObject] | None:
        """A folder's entries (paths, kinds, descriptions) up to three levels down, or None when
        it is not a folder or the listing left some out (then the counts would be wrong)."""
        res = self.run("view", path=folder)
        data = res.data or {}
        if res.is_error or data.get("kind") != "directory" or data.get("entries_not_shown"):
            return None
        return _objects(data.get("entries"))

    def grep(self, pattern: str) -> tuple[list[JsonObject], bool]:
        """(matching lines with their paths, whether grep stopped short), case-sensitive."""
        res = self.run("grep", pattern=pattern, path="/memories", case_sensitive=True, max_results=1000)
        data = res.data or {}
        return _objects(data.get("matches")), bool(data.get("truncated"))

    def rewrite(self, path: str, lines: list[str], changes: dict[int, list[str]]) -> str | None:
        """Replace line i (0-based) of `path` with the lines `changes[i]` (none: delete it).
        Each run of neighbouring changed lines is one `str_replace`, anchored on those lines
        widened until the anchor occurs once in the file. None when all landed, else the error."""
        current = list(lines)
        for lo, hi in reversed(_runs(sorted(i for i, new in changes.items() if new != [lines[i]]))):
            new = [text for i in range(lo, hi + 1) for text in changes[i]]
            a, b = _window(current, lo, hi, keep_one=not new)
            replacement = current[a:lo] + new + current[hi + 1 : b + 1]
            err = self.call(
                "str_replace",
                path=path,
                old_str="\n".join(current[a : b + 1]),
                new_str="\n".join(replacement),
            )
            if err is not None:
                return err
            current[a : b + 1] = replacement
        return None


def _runs(indexes: list[int]) -> list[tuple[int, int]]:
    """Sorted line indexes as (first, last) runs of neighbours."""
    runs: list[tuple[int, int]] = []
    for i in indexes:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _count(text: str, part: str) -> int:
    """Occurrences of `part` in `text`, overlapping ones included (as `str_replace` counts)."""
    n, at = 0, text.find(part)
    while at != -1:
        n, at = n + 1, text.find(part, at + 1)
    return n


def _window(lines: list[str], lo: int, hi: int, keep_one: bool) -> tuple[int, int]:
    """The lines around lo..hi whose text occurs once in the file: the anchor of one edit. With
    `keep_one` (every line of the run is deleted) it takes a neighbour too, so the replacement
    is that line rather than an empty one left behind."""
    if keep_one:
        hi, lo = (hi + 1, lo) if hi + 1 < len(lines) else (hi, max(0, lo - 1))
    text = "\n".join(lines)
    while _count(text, "\n".join(lines[lo : hi + 1])) > 1 and (lo > 0 or hi + 1 < len(lines)):
        if hi + 1 < len(lines):
            hi += 1
        else:
            lo -= 1
    return lo, hi


def _objects(value: JsonValue) -> list[JsonObject]:
    """A tool's list of records (`ToolResult.data`), or none when it sent no list."""
    return [dict(v) for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
