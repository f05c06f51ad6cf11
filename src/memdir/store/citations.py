"""A citation resolved against the store it names: the cited text, or why it names nothing.

One resolver for every reader: `Memory.ask` marks each citation of its answer found by it, and
an evaluation shows its judge the text it returns, so the two can never disagree on whether a
citation holds. The grammar is
`memdir.conventions.parse_citation` (docs/conventions.md, "Citations"). Line numbers count the
whole file, frontmatter included, split at `\\n` only, as the tools number them.

Resolves: the whole file; a line range starting inside the file (an end past the last line is
cut there); a section path, optionally narrowed to lines inside that section. Anything else (a
missing file, a folder, a start past the end, an unknown section, a path outside the store)
does not, with the reason.

A resolved citation also names the lines it stands for (`Resolved.lines`), so that a reader
that showed a model some lines can tell whether a citation claims only what was shown (the
read search, agents/read_search.py): a range's lines, a section's, and for the whole file its
body, from after the frontmatter to its last line (the frontmatter is the file's signage, in no
section, and a final newline starts no line), as the search's units cover a file (search/units.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.conventions import lines, parse_citation
from memdir.errors import MemdirError
from memdir.store import frontmatter
from memdir.store.outline import find_sections, outline, parse_section_path
from memdir.store.store import Store

NOT_FOUND = "[FILE NOT FOUND]"
"""What stands for the text of a citation that names nothing (what the attribution judge sees)."""


@dataclass(frozen=True)
class Resolved:
    """One citation: the file it names and the cited text, or the reason it did not resolve."""

    citation: str
    path: str | None
    text: str | None
    error: str | None = None
    start: int | None = None
    end: int | None = None
    section: str | None = None
    lines: tuple[int, int] | None = None  # the first and last line it stands for, when resolved

    @property
    def ok(self) -> bool:
        return self.text is not None

    def shown(self) -> str:
        return self.text if self.text is not None else NOT_FOUND


def resolve(store: Store, citation: str) -> Resolved:
    cited = parse_citation(citation)
    path, start, end, section = cited.path, cited.start, cited.end, cited.section

    def said(text: str | None, error: str | None = None, span: tuple[int, int] | None = None) -> Resolved:
        return Resolved(citation, path, text, error, start, end, section, span)

    try:
        text = store.read_text(path)
    except MemdirError as exc:
        return said(None, str(exc))
    rows = lines(text)
    if section is not None:
        try:
            wanted = parse_section_path(section)
        except ValueError as exc:
            return said(None, str(exc))
        found = find_sections(outline(text), wanted)
        if not found:
            return said(None, f"no section {section!r} in {path}")
        sec = found[0]
        if start is not None and end is not None:
            if not sec.start <= start <= end <= sec.end:
                where = f"{section!r} ({sec.start}-{sec.end})"
                return said(None, f"lines {start}-{end} are outside {where}")
            return said("\n".join(rows[start - 1 : end]), span=(start, end))
        return said("\n".join(rows[sec.start - 1 : sec.end]), span=(sec.start, sec.end))
    if start is not None and end is not None:
        if start < 1 or end < start or start > len(rows):
            return said(None, f"lines {start}-{end} are outside {path} (1-{len(rows)})")
        return said("\n".join(rows[start - 1 : min(end, len(rows))]), span=(start, min(end, len(rows))))
    last = len(rows) - 1 if text.endswith("\n") else len(rows)
    return said(text, span=(min(frontmatter.split(text)[1] + 1, max(last, 1)), max(last, 1)))
