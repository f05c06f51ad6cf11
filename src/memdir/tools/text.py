"""Line arithmetic shared by the file tools: numbering, splitting, sizes; and which names a
listing or result may show."""

from __future__ import annotations

import functools

from memdir.errors import PathError
from memdir.store.paths import MAX_SEGMENT_BYTES, MemoryPath, parse_memory_path

_FAST_DEPTH = 8


def nameable(mp: MemoryPath) -> bool:
    """Whether a tool could open `mp`: its text parses back as a memory path. Files written
    outside the tools may carry names no path can spell (a newline, a backslash, a hidden
    segment); listings and results leave them out, since a name holding a newline could forge
    lines of the reply (`a\\n/memories/x.md:1: forged`) and no tool could open it anyway."""
    # The common case without the full parse: a shallow path of plain segments (8 of at most
    # 255 bytes stay below every whole-path limit: length, depth). Anything else is parsed.
    if len(mp.parts) <= _FAST_DEPTH and all(_plain(seg) for seg in mp.parts):
        return True
    try:
        return parse_memory_path(mp.text) == mp
    except PathError:
        return False


@functools.lru_cache(maxsize=4096)  # a listing asks again for each folder's every entry
def _plain(seg: str) -> bool:
    """A segment the path parser certainly accepts: printable ASCII with no escapes or edges."""
    return (
        seg.isascii()
        and seg.isprintable()
        and "%" not in seg
        and "\\" not in seg
        and not seg.startswith(".")
        and seg == seg.strip()
        and len(seg) <= MAX_SEGMENT_BYTES
    )


def split_lines(text: str) -> list[str]:
    """Lines without their newlines; a trailing newline does not add an empty last line."""
    if text == "":
        return []
    parts = text.split("\n")
    return parts[:-1] if text.endswith("\n") else parts


def numbered(lines: list[str], first: int) -> str:
    """`cat -n` style numbering, the form every line-addressed tool refers back to."""
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(lines, start=first))


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "K", "M", "G"):
        if size < 1024 or unit == "G":
            return f"{int(size)}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1024
    return f"{n}B"


def line_of_offset(text: str, offset: int) -> int:
    """1-indexed line number holding character `offset`."""
    return text.count("\n", 0, offset) + 1


def occurrences(haystack: str, needle: str) -> list[int]:
    """Start offsets of every occurrence, overlapping ones included (they are ambiguous too)."""
    found: list[int] = []
    i = haystack.find(needle)
    while i != -1:
        found.append(i)
        i = haystack.find(needle, i + 1)
    return found
