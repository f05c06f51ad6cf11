"""Numbers a URL carries (a line, a step, where a page starts), bounded before `int()` sees them.

Python refuses to convert a string of more than 4,300 digits (`sys.get_int_max_str_digits`),
with a ValueError no view expected: a page answered 500. No line, step or entry count needs
more than `MAX_DIGITS` digits, so a longer number is refused first, as bad input (400), with a
message that says what to give and does not echo the number back.
"""

from __future__ import annotations

from memdir.errors import PathError

MAX_DIGITS = 18  # 10**18 lines or steps: past any store, and inside a 64-bit integer


def number(raw: str, what: str) -> int:
    """`raw`, all ASCII digits, as an int; refused (PathError, a 400 page) otherwise."""
    text = raw.strip()
    if not text.isascii() or not text.isdigit():
        raise PathError(f"{what} must be a whole number, such as 1 (got {_shown(text)})")
    if len(text) > MAX_DIGITS:
        raise PathError(f"{what} has {len(text)} digits; a {what} has at most {MAX_DIGITS}")
    return int(text)


def optional_number(raw: str | None, what: str) -> int | None:
    """`number`, or None for a parameter left out or empty."""
    return None if raw is None or not raw.strip() else number(raw, what)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:20] + "...")
