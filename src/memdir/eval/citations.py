"""Citations resolved against the store that was searched, and the offline attribution score.

A citation names a file, optionally narrowed to lines or a section, as the search agent saw
them through the tools (line numbers count the whole file, frontmatter included); the grammar
is `memdir.conventions.parse_citation` (docs/conventions.md, "Citations"), shared with the
skill setting's serving:

- `/memories/people/alice.md`
- `/memories/people/alice.md:12-18` or `:12` (also `#L12-L18`)
- `/memories/people/alice.md > # Alice > ## Diet`

A path without `/memories` is taken as relative to it. Anything that does not resolve (a
missing file, a folder, lines past the end, an unknown section, a path outside the store)
gets the text `[FILE NOT FOUND]`, which is also what the attribution judge is shown.

Lexical support (offline attribution): let A be the answer's content words (LoCoMo
normalization, stop words removed, Porter-stemmed, as a set) and C the stemmed words of every
resolved citation's text. Support = |A & C| / |A|; 0.0 when A is empty or nothing resolved.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.conventions import parse_citation
from memdir.errors import MemdirError
from memdir.eval.lexical import normalize_answer, porter_stem, tokens
from memdir.store.outline import find_sections, outline, parse_section_path
from memdir.store.store import Store

NOT_FOUND = "[FILE NOT FOUND]"
_STOPWORDS_TEXT = """
i me my we our you your he him his she her it its they them their what which who whom this that
these those am is are was were be been being have has had do does did of at by for with about to
from in out on off over under again then once here there when where why how all any both each few
more most other some such no nor not only own same so than too very can will just should now or
but if because as until while into through during before after above below up down s t don
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


@dataclass(frozen=True)
class Resolved:
    """One citation: the file it names and the cited text, or the reason it did not resolve."""

    citation: str
    path: str | None
    text: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.text is not None

    def shown(self) -> str:
        return self.text if self.text is not None else NOT_FOUND


def resolve(store: Store, citation: str) -> Resolved:
    cited = parse_citation(citation)
    path, start, end, section = cited.path, cited.start, cited.end, cited.section
    try:
        text = store.read_text(path)
    except MemdirError as exc:
        return Resolved(citation, path, None, str(exc))
    lines = text.split("\n")
    if section is not None:
        try:
            wanted = parse_section_path(section)
        except ValueError as exc:
            return Resolved(citation, path, None, str(exc))
        found = find_sections(outline(text), wanted)
        if not found:
            return Resolved(citation, path, None, f"no section {section!r} in {path}")
        sec = found[0]
        if start is not None and end is not None:
            if not sec.start <= start <= end <= sec.end:
                where = f"{section!r} ({sec.start}-{sec.end})"
                return Resolved(citation, path, None, f"lines {start}-{end} are outside {where}")
            return Resolved(citation, path, "\n".join(lines[start - 1 : end]))
        return Resolved(citation, path, "\n".join(lines[sec.start - 1 : sec.end]))
    if start is not None and end is not None:
        if start < 1 or end < start or start > len(lines):
            return Resolved(citation, path, None, f"lines {start}-{end} are outside {path} (1-{len(lines)})")
        return Resolved(citation, path, "\n".join(lines[start - 1 : min(end, len(lines))]))
    return Resolved(citation, path, text)


def resolve_all(store: Store, citations: list[str]) -> list[Resolved]:
    return [resolve(store, c) for c in citations]


def content_words(text: str) -> set[str]:
    return {porter_stem(w) for w in normalize_answer(text).split() if w not in STOPWORDS}


def lexical_support(answer: str, resolved: list[Resolved]) -> float:
    wanted = content_words(answer)
    cited = [r.text for r in resolved if r.text is not None]
    if not wanted or not cited:
        return 0.0
    have = set(tokens("\n".join(cited)))
    return len(wanted & have) / len(wanted)
