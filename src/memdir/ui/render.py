"""Markdown of a store file as HTML that cannot run: raw HTML is off, so `<script>` in a file
is text, images become links (the page loads nothing remote), and every link keeps the
renderer's own URL check (no `javascript:`).

What memdir's conventions mark in prose is marked here with the same grammar: `see
/memories/...` references (`spec.XREF`) become links to the file, dangling ones flagged;
source locators (`conventions.LOCATOR`) are marked and, where the store has a benchmark
behind it, link to the turn they cite. Each block carries its source lines, so a citation can
highlight what it names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from memdir.conventions import LOCATOR
from memdir.store import frontmatter
from memdir.store.outline import Section, outline
from memdir.store.spec import XREF
from memdir.ui.params import number

Href = Callable[[str], str]
Exists = Callable[[str], bool]
LocatorHref = Callable[[str], str | None]
ImageSrc = Callable[[str], str | None]
_MARKS = re.compile(f"(?P<xref>{XREF.pattern})|(?P<loc>{LOCATOR.pattern})")


@dataclass
class Rendered:
    html: str
    outline: list[Section]
    name: str | None = None
    description: str | None = None
    frontmatter_problems: list[str] = field(default_factory=list)
    xrefs: list[tuple[str, bool]] = field(default_factory=list)  # (target, exists)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    md.add_render_rule("image", _image)
    return md


def _image(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """An image is shown as a link to where it points, never fetched by the page."""
    tok = tokens[idx]
    src = str(tok.attrGet("src") or "")
    alt = "".join(c.content for c in tok.children or [])
    local = env.get("image_src", _no_image)(src)
    if local is not None:  # an asset the server itself serves (a run's plots)
        return f'<img src="{escape(local)}" alt="{escape(alt)}">'
    return f'<a class="img" href="{escape(src)}" rel="noopener noreferrer">[image: {escape(alt)}]</a>'


def _no_image(_src: str) -> str | None:
    return None


class _Marker:
    """Turns the convention's marks in text tokens into links, counting what it found."""

    def __init__(self, href: Href, exists: Exists, locator_href: LocatorHref) -> None:
        self.href, self.exists, self.locator_href = href, exists, locator_href
        self.xrefs: list[tuple[str, bool]] = []

    def split(self, text: str) -> list[Token]:
        out: list[Token] = []
        pos = 0
        for m in _MARKS.finditer(text):
            if m.start() > pos:
                out.append(_text(text[pos : m.start()]))
            out.append(self._xref(m) if m.group("xref") else self._locators(m.group("loc")[1:-1]))
            pos = m.end()
        if pos < len(text):
            out.append(_text(text[pos:]))
        return out

    def _xref(self, m: re.Match[str]) -> Token:
        whole = m.group(0)
        target = m.group(2)
        trail = target[len(target.rstrip(".:!?")) :]
        target = target[: len(target) - len(trail)]
        ok = self.exists(target)
        self.xrefs.append((target, ok))
        lead = escape(whole[: len(whole) - len(m.group(2))])
        cls = "xref" if ok else "xref dangling"
        title = "" if ok else ' title="dangling reference: nothing at this path"'
        mark = "" if ok else '<span class="badge bad">dangling</span>'
        html = (
            f'{lead}<a class="{cls}" href="{escape(self.href(target))}"{title}>{escape(target)}</a>'
            f"{mark}{escape(trail)}"
        )
        return _html(html)

    def _locators(self, inner: str) -> Token:
        pieces: list[str] = []
        for loc in (s.strip() for s in inner.split(",")):
            url = self.locator_href(loc)
            if url is None:
                pieces.append(f'<span class="locator">{escape(loc)}</span>')
            else:
                pieces.append(f'<a class="locator" href="{escape(url)}">{escape(loc)}</a>')
        return _html('<span class="locators">[' + ", ".join(pieces) + "]</span>")


def _text(content: str) -> Token:
    tok = Token("text", "", 0)
    tok.content = content
    return tok


def _html(content: str) -> Token:
    tok = Token("html_inline", "", 0)
    tok.content = content
    return tok


def render_markdown(
    text: str,
    *,
    href: Href,
    exists: Exists,
    locator_href: LocatorHref = lambda _loc: None,
    lines: tuple[int, int] | None = None,
    image_src: ImageSrc = _no_image,
    first: int = 1,
) -> Rendered:
    """The file `text` as safe HTML with its outline; `lines` (1-indexed, inclusive) marks the
    blocks that overlap a cited range. `first` > 1: `text` is a page of a longer file from
    that line on (`store/window.py`), with no frontmatter and its lines numbered from there; a
    block the page's edges cut is rendered as far as the page holds it."""
    if first == 1:
        fm, fm_lines = frontmatter.split(text)
        meta = frontmatter.parse(text)
        body = frontmatter.body(text)
    else:
        fm, fm_lines, meta, body = None, first - 1, frontmatter.Frontmatter({}, 0, ""), text
    md = _parser()
    tokens = md.parse(body)
    marker = _Marker(href, exists, locator_href)
    anchors: set[int] = set()
    for tok in tokens:
        if tok.map is not None and tok.nesting >= 0:
            top, last = tok.map[0] + 1 + fm_lines, tok.map[1] + fm_lines
            if top not in anchors:  # the outermost block starting on a line holds its anchor
                anchors.add(top)
                tok.attrSet("id", f"L{top}")
            tok.attrSet("data-lines", f"{top}-{last}")
            if lines is not None and top <= lines[1] and lines[0] <= last:
                tok.attrJoin("class", "cited")
        if tok.type == "inline" and tok.children:
            tok.children = _mark_children(tok.children, marker, href)
    html = md.renderer.render(tokens, md.options, {"image_src": image_src})
    return Rendered(
        html,
        outline(text, first),
        meta.name,
        meta.description,
        frontmatter.validate(text, "x.md") if fm is not None else [],
        marker.xrefs,
    )


def _mark_children(children: list[Token], marker: _Marker, href: Href) -> list[Token]:
    out: list[Token] = []
    in_link = 0
    for child in children:
        if child.type == "link_open":
            in_link += 1
            url = str(child.attrGet("href") or "")
            if url.startswith("/memories"):
                child.attrSet("href", href(url))
            else:
                child.attrSet("rel", "noopener noreferrer")
        elif child.type == "link_close":
            in_link -= 1
        if child.type == "text" and not in_link:
            out.extend(marker.split(child.content))
        else:
            out.append(child)
    return out


def source_lines(text: str, lines: tuple[int, int] | None, first: int = 1) -> list[tuple[int, str, bool]]:
    """(number, line, cited) of every line of `text`, numbered from `first`, for the numbered
    source view."""
    rows = text.split("\n")
    if rows and rows[-1] == "" and text.endswith("\n"):
        rows.pop()
    return [
        (i, ln, lines is not None and lines[0] <= i <= lines[1]) for i, ln in enumerate(rows, start=first)
    ]


def parse_lines(raw: str | None) -> tuple[int, int] | None:
    """`3`, `3-5` or `L3-L5` as an inclusive range; anything else as no range, but a number
    too long to be a line is refused (`params.number`)."""
    if not raw:
        return None
    m = re.fullmatch(r"L?(\d+)(?:\s*-\s*L?(\d+))?", raw.strip())
    if m is None:
        return None
    start = number(m.group(1), "line")
    end = number(m.group(2), "line") if m.group(2) else start
    return (start, end) if start <= end else (end, start)
