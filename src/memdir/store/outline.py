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
    return MarkdownIt("commonmark")


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


def outline(text: str) -> list[Section]:
    """All headings of the file in order, each with its section's line range and parent."""
    _, fm_lines = frontmatter.split(text)
    lines = text.split("\n")
    total = len(lines) - 1 if text.endswith("\n") else len(lines)
    body = "\n".join(lines[fm_lines:])
    tokens = _parser().parse(body)
    heads: list[Section] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            heads.append(Section(int(tok.tag[1:]), title, tok.map[0] + 1 + fm_lines, total))
    stack: list[Section] = []
    for idx, sec in enumerate(heads):
        for later in heads[idx + 1 :]:
            if later.level <= sec.level:
                sec.end = later.start - 1
                break
        while stack and stack[-1].level >= sec.level:
            stack.pop()
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
