"""Memory paths (`/memories/...`) and their place on disk, with confinement.

Every path a model sends passes through :func:`parse_memory_path` before anything touches
disk. We refuse rather than normalize: a `..` in any spelling, a hidden segment, a NUL, a
symlink or a multiply-linked file is an error with a reason, never silently rewritten, so
what the model wrote is what was checked.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from memdir.errors import PathError

PREFIX = "/memories"
STATE_DIR = ".memdir"
MAX_SEGMENT_BYTES = 255
MAX_PATH_CHARS = 4096
# Most folder levels below /memories. Tools cannot make a deeper path, and every walk stops
# here, so a tree made deeper by hand costs a bounded walk and a finding, never a hang or a
# recursion overflow (every walk holds one descriptor per level).
MAX_DEPTH = 32
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_at(text: str) -> int | None:
    """Index of the first lone UTF-16 surrogate in `text` (no UTF-8 spelling exists for one:
    a JSON "\\ud83d" without its other half, or a file name that is not UTF-8), or None."""
    if text.isascii():  # no surrogate is ASCII, and the flag is free: most text needs no search
        return None
    m = _SURROGATE.search(text)
    return None if m is None else m.start()


@dataclass(frozen=True)
class MemoryPath:
    """A validated memory path: `/memories` plus zero or more plain segments."""

    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return PREFIX + "".join("/" + p for p in self.parts)

    @property
    def is_root(self) -> bool:
        return not self.parts

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else ""

    @property
    def stem(self) -> str:
        name = self.name
        return name[:-3] if name.endswith(".md") else name

    @property
    def parent(self) -> MemoryPath:
        return MemoryPath(self.parts[:-1])

    def child(self, name: str) -> MemoryPath:
        return MemoryPath((*self.parts, name))

    def is_within(self, other: MemoryPath) -> bool:
        return self.parts[: len(other.parts)] == other.parts

    def __str__(self) -> str:
        return self.text


ROOT = MemoryPath(())


def _segment_problem(seg: str) -> str | None:
    if seg in (".", ".."):
        return f"'{seg}' segments are not allowed; write the path from /memories down"
    if seg.startswith("."):
        return f"'{seg}' is hidden; hidden files and folders are not part of memory"
    if "\\" in seg:
        return "backslashes are not allowed in memory paths; use '/'"
    if _CONTROL.search(seg):
        return "control characters are not allowed in memory paths"
    decoded = unquote(seg)
    folded = unicodedata.normalize("NFKC", decoded)
    if folded in (".", "..") or "/" in folded or "\\" in folded or "/" in decoded:
        return f"'{seg}' spells a path separator or '..' in another form; use plain names"
    if folded.startswith(".") and not seg.startswith("."):
        return f"'{seg}' spells a hidden name in another form; use plain names"
    if len(seg.encode("utf-8")) > MAX_SEGMENT_BYTES:
        return f"a path segment is longer than {MAX_SEGMENT_BYTES} bytes; use a shorter name"
    return None


def parse_memory_path(path: object) -> MemoryPath:
    """Check a model-supplied path and split it; raise :class:`PathError` saying what to fix."""
    if not isinstance(path, str):
        raise PathError(f"path must be a string like '/memories/notes.md', got {type(path).__name__}")
    if "\x00" in path:
        raise PathError("path contains a NUL byte; send a plain path like '/memories/notes.md'")
    at = surrogate_at(path)
    if at is not None:
        raise PathError(
            f"path has a lone UTF-16 surrogate (U+{ord(path[at]):04X}) at character {at}, which no file "
            "name can hold; send the path as valid Unicode text"
        )
    if len(path) > MAX_PATH_CHARS:
        raise PathError(f"path is longer than {MAX_PATH_CHARS} characters; use a shorter path")
    stripped = path.strip()
    if stripped != PREFIX and not stripped.startswith(PREFIX + "/"):
        raise PathError(
            f"path {path!r} is outside memory; every path starts with '/memories', "
            "e.g. '/memories/people/alice.md'"
        )
    parts = tuple(p for p in stripped[len(PREFIX) :].split("/") if p != "")
    if len(parts) > MAX_DEPTH + 1:  # a file may sit in a folder at the deepest level
        raise PathError(
            f"path is {len(parts) - 1} folder levels deep; memory holds at most {MAX_DEPTH} levels of "
            "folders below /memories; use a shallower path"
        )
    for seg in parts:
        problem = _segment_problem(seg)
        if problem:
            raise PathError(f"invalid path {path!r}: {problem}")
    return MemoryPath(parts)


def unplain(st: os.stat_result, *, folder_ok: bool = True) -> str | None:
    """Why an entry is not one memory may read, write or move, or None when it is: a link (never
    followed), a FIFO or device, or a file with several hard links (it may be shared with
    something outside the store). One wording for every place that refuses one."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link; memory does not follow or move links"
    if stat.S_ISDIR(st.st_mode):
        return None if folder_ok else "is a folder, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file or folder"
    if st.st_nlink > 1:
        return f"has {st.st_nlink} hard links; memory refuses files that may be linked from outside the store"
    return None


class Confinement:
    """Maps memory paths to disk under one root and refuses anything that could lead out."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))

    def disk(self, mp: MemoryPath) -> Path:
        """Disk path for `mp`; every existing component is checked to be a plain entry."""
        current = self.root
        for seg in mp.parts:
            current = current / seg
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                # Nothing beyond a missing component can exist; the remaining parts are plain names.
                rest = mp.parts[len(current.relative_to(self.root).parts) :]
                return current.joinpath(*rest) if rest else current
            except NotADirectoryError:
                raise PathError(f"{mp.text}: a parent of this path is a file, not a folder") from None
            problem = unplain(st)
            if problem is not None:
                last = len(current.relative_to(self.root).parts) == len(mp.parts)
                raise PathError(f"{mp.text}: {'it' if last else 'a folder on its way'} {problem}")
        real = os.path.realpath(current)
        if real != str(self.root) and not real.startswith(str(self.root) + os.sep):
            raise PathError(f"{mp.text}: resolves outside the memory root")
        return current

    def memory_path(self, disk: Path) -> MemoryPath:
        rel = Path(os.path.realpath(disk)).relative_to(self.root)
        return MemoryPath(tuple(p for p in rel.parts if p not in ("", ".")))
