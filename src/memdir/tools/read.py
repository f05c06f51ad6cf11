"""toc and section_read: reading a file by its headings, the deepest taxonomy level."""

from __future__ import annotations

from memdir.errors import EditError, NotFoundError
from memdir.jsontypes import JsonObject
from memdir.store.outline import find_sections, outline, parse_section_path
from memdir.tools import outputs
from memdir.tools.base import ToolContext, tool
from memdir.tools.files import _md_path
from memdir.tools.text import numbered, split_lines


@tool(
    description="""
    The heading outline of a .md file: each heading with its level markers and the line range of
    its section (up to the next heading of the same or a higher level).
    """,
    params={"path": "The .md file."},
    read_only=True,
    title="Outline a file's headings",
    output_schema=outputs.TOC,
)
def toc(ctx: ToolContext, path: str) -> str:
    mp = _md_path(path, "outlined")
    text = ctx.read_text(mp)
    sections = outline(text)
    total = len(split_lines(text))
    rows_data: list[JsonObject] = [
        {
            "heading": s.label,
            "heading_path": s.path,
            "level": s.level,
            "depth": s.depth,
            "start_line": s.start,
            "end_line": s.end,
        }
        for s in sections
    ]
    ctx.data = {"path": mp.text, "lines": total, "sections": rows_data}
    if not sections:
        return f"{mp.text} ({total} lines) has no headings; view it to read it whole."
    rows = [f"{'  ' * (s.depth - 1)}{s.label}  [lines {s.start}-{s.end}]" for s in sections]
    return f"{mp.text} ({total} lines, {len(sections)} sections):\n" + "\n".join(rows)


@tool(
    description="""
    Read one section of a .md file, nested subsections included. section_path is the heading
    path joined by ' > ' (spaces required), starting at a top-level heading, each segment with its
    level markers, e.g. '# Notes > ## Setup > ### Dependencies'. Use toc to see the headings.
    """,
    params={"path": "The .md file.", "section_path": "Heading path, e.g. '# Notes > ## Setup'."},
    read_only=True,
    title="Read one section of a file",
    output_schema=outputs.SECTION,
)
def section_read(ctx: ToolContext, path: str, section_path: str) -> str:
    mp = _md_path(path, "read")
    try:
        wanted = parse_section_path(section_path)
    except ValueError as exc:
        raise EditError(f"bad section_path: {exc}") from None
    text = ctx.read_text(mp)
    sections = outline(text)
    found = find_sections(sections, wanted)
    if not found:
        tops = ", ".join(repr(s.label) for s in sections if s.parent is None) or "none"
        raise NotFoundError(
            f"no section {section_path!r} in {mp.text}; paths start at a top-level heading "
            f"(here: {tops}); run toc on the file to see every heading"
        )
    sec = found[0]
    ctx.data = {
        "path": mp.text,
        "heading_path": sec.path,
        "start_line": sec.start,
        "end_line": sec.end,
        "same_path_at": [s.start for s in found[1:]],
    }
    lines = split_lines(text)[sec.start - 1 : sec.end]
    out = f"{mp.text} > {sec.path} (lines {sec.start}-{sec.end})\n{numbered(lines, sec.start)}"
    if len(found) > 1:
        others = ", ".join(str(s.start) for s in found[1:])
        out += f"\n(another section with this path starts at line {others}; view those lines to read it)"
    return out
