"""The outline's block-only markdown-it parser, and core memory counted in pieces, against the
full computations they replace (property tests over generated markdown)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from memdir.store import outline as outline_mod
from memdir.store.outline import _parser, outline

PROPS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Lines built from the constructs that decide what a heading is: ATX and setext headings, fences
# (closed or not), indented code, block quotes, lists, HTML blocks, reference definitions,
# tables' pipes, emphasis and links inside headings, tabs, trailing hashes and stray markers.
_WORD = st.sampled_from(["alpha", "Beta", "*em*", "**bold**", "`code`", "[a](/b)", "x_y_", "#", "\\#", "é"])
_INLINE = st.lists(_WORD, min_size=0, max_size=4).map(" ".join)
_LINE = st.one_of(
    st.tuples(st.sampled_from(["", " ", "  ", "   ", "    ", "\t"]), st.integers(1, 7), _INLINE).map(
        lambda t: f"{t[0]}{'#' * t[1]} {t[2]}"
    ),
    _INLINE.map(lambda s: f"## {s} ##"),
    st.sampled_from(
        [
            "",
            "===",
            "---",
            "--- ",
            "  ===",
            "***",
            "```",
            "```python",
            "~~~",
            "    # indented",
            "> # quoted",
            ">",
            "- # in a list",
            "1. item",
            "<div>",
            "</div>",
            "<!-- # comment -->",
            "[ref]: /memories/x.md",
            "| a | b |",
            "#hashtag",
            "#\ttab",
            "\\# escaped",
            "---\nname: x\n---",
        ]
    ),
    _INLINE,
)
_MARKDOWN = st.lists(_LINE, max_size=25).map("\n".join)


def _headings(md: MarkdownIt, body: str) -> list[tuple[str, int, str]]:
    tokens = md.parse(body)
    return [
        (tok.tag, tok.map[0] if tok.map else -1, tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open"
    ]


@PROPS
@given(_MARKDOWN)
def test_block_parser_finds_the_full_parsers_headings(body: str) -> None:
    assert _headings(_parser(), body) == _headings(MarkdownIt("commonmark"), body)


def _parsed(body: str) -> list[tuple[int, int, str]]:
    return [
        (line, int(tag[1:]), title.strip()) for tag, line, title in _headings(MarkdownIt("commonmark"), body)
    ]


# Plain lines (the scan's own kinds: blank, margin ATX headings, letter-led paragraph and bullet
# lines) with inline markup, closing hashes and odd spacing, mixed with every kind of line that
# must send the file to the parser, so both the scan and the refusal are exercised.
_TAIL = st.sampled_from(
    ["", " #", " ##  ", "#", " \\#", "  ", " x #", "\u00a0#", " ~~", " <b>", " [a](/b) `c`"]
)
_PLAIN = st.one_of(
    st.tuples(st.integers(1, 6), st.booleans(), _INLINE, _TAIL).map(
        lambda t: "#" * t[0] + (" " + t[2] + t[3] if t[1] or t[2] else "")
    ),
    st.tuples(st.sampled_from(["", "- ", "* ", "+ "]), st.sampled_from(["", "~~", "**"]), _INLINE).map(
        lambda t: f"{t[0]}{t[1]}a{t[2]}"
    ),
    st.sampled_from(
        ["", "   ", "Text | with | pipes", "Para see /memories/x.md > ## A", "bob | job: x [S1T2]"]
    ),
)
_RISKY = st.sampled_from(
    [
        "===",
        "---",
        "- - -",
        "```",
        "~~~",
        "    # code",
        " # one space",
        "> # q",
        "- # li",
        "-  two spaces",
        "1. # o",
        "<div>",
        "[r]: /u '",
        "#######",
        "#x",
        "\t# tab",
        "a\rb",
        "nul\0",
        "é # accent",
        "*** ",
        "  - nested",
    ]
)
_MIXED = st.lists(st.one_of(_PLAIN, _PLAIN, _PLAIN, _RISKY), max_size=30).map("\n".join)


@PROPS
@given(st.lists(_PLAIN, max_size=30).map("\n".join))
def test_line_scan_takes_plain_files_and_agrees_with_markdown_it(body: str) -> None:
    assert outline_mod._plain_headings(body.split("\n")) is not None  # the scan is taken
    assert outline_mod._headings(body) == _parsed(body)


@PROPS
@given(_MIXED)
def test_line_scan_refuses_what_it_cannot_decide(body: str) -> None:
    assert outline_mod._headings(body) == _parsed(body)


@PROPS
@given(_MARKDOWN)
def test_section_ends_and_parents_follow_the_definition(body: str) -> None:
    heads = outline(body)
    total = len(body.split("\n")) - (1 if body.endswith("\n") else 0)
    for i, sec in enumerate(heads):
        closer = next((h for h in heads[i + 1 :] if h.level <= sec.level), None)
        assert sec.end == (closer.start - 1 if closer is not None else total)
        above = next((h for h in reversed(heads[:i]) if h.level < sec.level), None)
        assert sec.parent is above
