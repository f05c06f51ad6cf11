"""The plain `key: value` reading of frontmatter (`frontmatter._plain_mapping`) gives what the
YAML parser gives, or stands aside.

hypothesis writes frontmatter blocks from keys and values full of what YAML treats specially
(indicators, `: `, ` #`, tabs, CR, the line breaks YAML knows beyond LF, BOMs, non-breaking and
private-use characters, duplicate keys); every block the fast path reads must load through the
parser to the very same mapping, and `parse` and `validate` must answer as the parser's path does.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memdir.store import frontmatter, safeyaml

SPECIAL = " :#-?,[]{}&*!|>'\"%@`~\t\r\x85\u2028\xa0\ufeff\ue000\x7f\\/.=<"
CHARS = st.sampled_from(list(SPECIAL) + list("abcXYZ019_") + ["é", "ß", "日", "😀"])
PLAIN_KEYS = st.sampled_from(["name", "description", "metadata", "type", "a", "_k-2", "K9"])
KEYS = st.one_of(
    PLAIN_KEYS,
    st.sampled_from(["<<", "?", "- x", "key x", "1", "é", ""]),
    st.text(CHARS, min_size=0, max_size=6),
)
VALUES = st.one_of(
    st.sampled_from(["n000001", "note 1", "NO", "12:30", "null", "~", "a: b", "a #c", "C#", "x:", "[1, 2]"]),
    st.tuples(st.sampled_from(list("aZ9é日(")), st.text(CHARS, max_size=12)).map("".join),
    st.text(CHARS, min_size=0, max_size=12),
)
# Most lines are close to plain (a plain key, `: `, a value that starts plainly), so that the
# fast path reads many blocks and each special character is tried inside a value it accepts.
LINES = st.one_of(
    st.tuples(PLAIN_KEYS, st.just(": "), VALUES).map("".join),
    st.tuples(KEYS, st.sampled_from([": ", ":  ", ":", ":\t", " : "]), VALUES).map("".join),
    st.text(CHARS, max_size=10),
)


def _parser(raw: str) -> object:
    """What the YAML path alone makes of `raw`, or the exception it raises."""
    try:
        return safeyaml.load(raw, frontmatter._StringLoader)
    except Exception as exc:
        return exc


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINES, min_size=1, max_size=4))
@example(["name: n000001", "description: note 1"])
@example(["name: a", "name: b"])
@example(["description: [not, a] {flow}"])
@example(["name: a\rb"])
@example(["name: a\x85b"])
@example(["name: a\tb\t"])
def test_fast_path_equals_the_parser(lines: list[str]) -> None:
    raw = "\n".join(lines)
    fast = frontmatter._plain_mapping(raw)
    if fast is None:
        return
    assert _parser(raw) == fast
    assert all(isinstance(v, str) for v in fast.values())


@pytest.mark.parametrize(
    "raw",
    [
        "name: n000001\ndescription: note 1",
        "name: travel-plans\ndescription: Trips, bookings and [dates] {flights}, C# notes",
        "name: a\ndescription: 12:30 NO null ~ 2023-05-02",
    ],
)
def test_common_frontmatter_takes_the_fast_path(raw: str) -> None:
    assert frontmatter._plain_mapping(raw) == _parser(raw)


@pytest.mark.parametrize(
    "raw",
    [
        "name: a\ndescription: Alice: vegan",  # lenient reading, with a problem
        "name: a\nname: b",  # duplicate key: an error
        "name: a\ndescription: x # comment",
        "name: a\nmetadata:\n  type: note",
        "name: &x a\ndescription: *x",  # alias: refused
        "name: 'quoted'",
        "name: a\r",
        "",
    ],
)
def test_anything_else_goes_to_the_parser(raw: str) -> None:
    assert frontmatter._plain_mapping(raw) is None


@settings(max_examples=1500, deadline=None)
@given(st.lists(LINES, min_size=0, max_size=4))
@example(["name: n000001", "description: note 1"])
def test_parse_answers_as_the_parser_path(lines: list[str]) -> None:
    """`parse` (so `validate`, which reads only `parse`) equals the parser's path on every block:
    the mapping, the line count, the lenient flag and the problems."""
    raw = "\n".join(lines)
    text = f"---\n{raw}\n---\nbody\n"
    block, count = frontmatter.split(text)  # a `---` or `...` line in `raw` closes it early
    assert block is not None
    assert frontmatter.parse(text) == frontmatter._parsed(block, count)


_OPEN = re.compile(r"---[ \t]*")
_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")


def _split_by_lines(text: str) -> tuple[str | None, int]:
    """`frontmatter.split` by its definition: the lines of the text (trailing CRs stripped),
    the first a `---` fence, up to the first closing `---` or `...` line."""
    lines = text.split("\n")
    if not _OPEN.fullmatch(lines[0].rstrip("\r")):
        return None, 0
    for i in range(1, len(lines)):
        if _CLOSE.fullmatch(lines[i].rstrip("\r")):
            return "\n".join(lines[1:i]), i + 1
    return None, 0


PIECES = st.sampled_from(
    ["---", "...", "--- ", "---\r", "\r", "\n", "\r\n", "a", "name: x", " ", "\t", "-", "."]
)


@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join))
@example("---")
@example("---\n---")
@example("---\nname: a\n...\nbody")
@example("---\n--- \r \r\n---\r\r\nx")
@example("--- \t\r\n\n...")
def test_split_and_body_find_the_block_as_lines_do(text: str) -> None:
    block, count = _split_by_lines(text)
    assert frontmatter.split(text) == (block, count)
    assert frontmatter.body(text) == "\n".join(text.split("\n")[count:])
