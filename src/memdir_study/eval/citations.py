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
gets the text `[FILE NOT FOUND]`, which is also what the attribution judge is shown. The
resolver is the product's (`memdir.store.citations`), so `Memory.ask` marks as found exactly
what the evaluation resolves.

Lexical support (offline attribution): let A be the answer's content words (LoCoMo
normalization, stop words removed, Porter-stemmed, as a set) and C the stemmed words of every
resolved citation's text. Support = |A & C| / |A|; 0.0 when A is empty or nothing resolved.
"""

from __future__ import annotations

from memdir.store.citations import NOT_FOUND, Resolved, resolve
from memdir.store.store import Store
from memdir_study.eval.lexical import normalize_answer, porter_stem, tokens

__all__ = ["NOT_FOUND", "STOPWORDS", "Resolved", "content_words", "lexical_support", "resolve", "resolve_all"]

_STOPWORDS_TEXT = """
i me my we our you your he him his she her it its they them their what which who whom this that
these those am is are was were be been being have has had do does did of at by for with about to
from in out on off over under again then once here there when where why how all any both each few
more most other some such no nor not only own same so than too very can will just should now or
but if because as until while into through during before after above below up down s t don
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


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
