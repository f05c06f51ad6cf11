"""Line arithmetic shared by the file tools: numbering, splitting, sizes."""

from __future__ import annotations


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
