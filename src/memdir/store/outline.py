"""The heading outline of a file: headings as the deepest taxonomy levels, with line ranges.

markdown-it-py decides what a heading is, so `#` lines inside fenced or indented code are not
headings and setext headings are. The frontmatter is cut off before parsing because its closing
`---` would otherwise read as a setext underline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from markdown_it import MarkdownIt

from memdir.store import frontmatter


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """CommonMark's block rules only: a heading's inline token keeps its raw `.content` from
    the block parser, and nothing here reads the inline children (emphasis, links, code spans)
    the inline rules would build, which were about a third of the parse. A property test holds
    the headings equal to the full parser's."""
    return MarkdownIt("commonmark").disable(["inline", "text_join"])


# The lines of a file whose headings a line scan finds exactly as markdown-it does (`_plain_headings`):
# blank lines; ATX headings at the margin; and paragraph or bullet lines that open with a letter
# (or `~~`/`**` and a letter, a struck-through or bold start), at the margin, with exactly one
# space after a bullet marker. None of these can open a fence, an indented code block, a block
# quote, an HTML block, a link reference definition, an ordered list, a thematic break or a
# setext underline, and a line at the margin cannot continue a list item except as paragraph
# text; so every ATX line is a heading and nothing else is. Any other line (indented, a `>`, a
# fence, a digit, a `[`, a `-`/`=` rule, a `#` that is not a heading ...), a tab, a carriage
# return or a NUL (which markdown-it rewrites) sends the file to the parser. A property test
# holds the two equal on generated markdown.
_PLAIN_LINE = re.compile(r"(?:[-*+] )?(?:~~|\*\*)?[A-Za-z]| *$|#{1,6}(?: |$)")
_UNPLAIN = re.compile(r"[\t\r\0]")


def _plain_headings(lines: list[str]) -> list[tuple[int, int, str]] | None:
    """(line index, level, title) of every heading, when every line is a plain one; else None."""
    heads: list[tuple[int, int, str]] = []
    for i, line in enumerate(lines):
        m = _PLAIN_LINE.match(line)
        if m is None:
            return None
        if line[:1] != "#":
            continue
        level = len(line) - len(line.lstrip("#"))
        rest = line[level:].rstrip(" ")
        closed = rest.rstrip("#")
        if closed and closed[-1] == " ":  # a closing run of '#' after a space is cut (markdown-it)
            rest = closed
        heads.append((i, level, rest.strip()))
    return heads


def _headings(body: str) -> list[tuple[int, int, str]]:
    """(line index in `body`, level, title) of every heading, as markdown-it finds them."""
    if _UNPLAIN.search(body) is None:
        plain = _plain_headings(body.split("\n"))
        if plain is not None:
            return plain
    tokens = _parser().parse(body)
    heads: list[tuple[int, int, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            heads.append((tok.map[0], int(tok.tag[1:]), title))
    return heads


@dataclass
class Section:
    """One heading and the lines it governs (1-indexed, inclusive, in whole-file numbering)."""

    level: int
    title: str
    start: int
    end: int
    parent: Section | None = field(default=None, repr=False)
    children: list[Section] = field(default_factory=list, repr=False)

    @property
    def marker(self) -> str:
        return "#" * self.level

    @property
    def label(self) -> str:
        return f"{self.marker} {self.title}"

    @property
    def path(self) -> str:
        labels: list[str] = []
        node: Section | None = self
        while node is not None:
            labels.append(node.label)
            node = node.parent
        return " > ".join(reversed(labels))

    @property
    def depth(self) -> int:
        """Tree levels below the file: a heading that skips levels adds only one."""
        return 1 if self.parent is None else self.parent.depth + 1


def outline(text: str, first: int = 1) -> list[Section]:
    """All headings of the file in order, each with its section's line range and parent.
    `first` > 1: `text` is a page of a longer file (`store/window.py`) from line `first` on,
    so it has no frontmatter, its lines are numbered from `first`, and its last section ends
    with the page."""
    _, fm_lines = frontmatter.split(text) if first == 1 else (None, first - 1)
    newlines = text.count("\n")  # the file's lines, without holding them as a list
    total = (newlines if text.endswith("\n") else newlines + 1) + first - 1
    body = frontmatter.body(text) if first == 1 else text
    heads = [Section(level, title, i + 1 + fm_lines, total) for i, level, title in _headings(body)]
    stack: list[Section] = []
    for sec in heads:
        # a section ends before the next heading of its level or higher: the one that closes it
        while stack and stack[-1].level >= sec.level:
            stack.pop().end = sec.start - 1
        if stack:
            sec.parent = stack[-1]
            stack[-1].children.append(sec)
        stack.append(sec)
    return heads


def parse_section_path(section_path: str) -> list[tuple[int, str]]:
    """Split `# A > ## B` into [(1, 'A'), (2, 'B')]; raise ValueError saying what is wrong."""
    segments = [s.strip() for s in section_path.split(" > ")]
    result: list[tuple[int, str]] = []
    for seg in segments:
        hashes = len(seg) - len(seg.lstrip("#"))
        title = seg[hashes:].strip()
        if hashes == 0 or hashes > 6 or not seg[hashes:].startswith(" ") or not title:
            raise ValueError(
                f"segment {seg!r} needs its level markers, a space and the heading text, "
                "e.g. '## Setup'; join segments with ' > '"
            )
        if re.search(r">\s*#", title):
            raise ValueError(
                f"segment {seg!r} looks like two headings; join segments with ' > ' (spaces required)"
            )
        result.append((hashes, title))
    return result


def find_sections(sections: list[Section], wanted: list[tuple[int, str]]) -> list[Section]:
    """Sections whose full path from a top-level heading matches `wanted` (titles compared
    after collapsing whitespace; case kept, since headings are names)."""

    def norm(s: str) -> str:
        return " ".join(s.split())

    matches: list[Section] = []
    for sec in sections:
        chain: list[Section] = []
        node: Section | None = sec
        while node is not None:
            chain.append(node)
            node = node.parent
        chain.reverse()
        if len(chain) == len(wanted) and all(
            c.level == lv and norm(c.title) == norm(t) for c, (lv, t) in zip(chain, wanted, strict=True)
        ):
            matches.append(sec)
    return matches
