"""Text analysis shared by the BM25 index, its queries, its snippets and its benchmark.

One analyzer turns text into terms everywhere: the index, the query (so no user text can be a
syntax error: a query is only the terms it contains) and the baselines it is measured against.
Words are runs of unicode word characters, lowercased, folded to ASCII where a folding exists,
English stop words dropped, then Snowball-stemmed ("Vegans" and "vegan" meet).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import tantivy

from memdir.store import frontmatter

ANALYZER_NAME = "memdir_en"
# Bump when the analysis or the document fields change: an index built differently is rebuilt.
ANALYSIS_VERSION = 2
MAX_QUERY_TERMS = 128
_WORD = re.compile(r"\w+")


@functools.cache
def analyzer() -> Any:
    """The tantivy text analyzer; the same object tokenizes documents and queries."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def terms(text: str) -> list[str]:
    """Every term of `text` in order (repeats kept): what BM25 counts."""
    out: list[str] = analyzer().analyze(text)
    return out


def query_terms(query: str) -> list[str]:
    """The distinct terms of a user query, first occurrence first, at most MAX_QUERY_TERMS."""
    seen: dict[str, None] = {}
    for t in terms(query):
        seen.setdefault(t, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


def or_query(schema: Any, terms: list[str], boosts: dict[str, float], scope: str | None = None) -> Any:
    """The tantivy query of a term list: OR of every term over every boosted field, restricted
    to documents whose `scope` field names `scope` (a folder or file) when one is given."""
    should = [
        (
            tantivy.Occur.Should,
            tantivy.Query.boost_query(tantivy.Query.term_query(schema, field, term), boost),
        )
        for term in terms
        for field, boost in boosts.items()
    ]
    query = tantivy.Query.boolean_query(should)
    if scope is None:
        return query
    within = tantivy.Query.term_query(schema, "scope", scope)
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, within)])


@dataclass(frozen=True)
class DocFields:
    """What one memory file contributes to the index, field by field."""

    name: str
    description: str
    metadata: str
    body: str

    @property
    def whole(self) -> str:
        return f"{self.name}\n{self.description}\n{self.metadata}\n{self.body}"

    @property
    def signage(self) -> str:
        return f"{self.name}\n{self.description}"


def _flatten(value: Any, limit: int) -> Iterator[str]:
    """Keys and scalars of a metadata value, depth first, until `limit` characters are out.

    The loader refuses aliases (store/safeyaml.py), so every value is written out in the file
    and the file's length (`limit`) bounds what real metadata contributes. The walk is bounded
    anyway, with no recursion, and visits each container once: a shared or cyclic value (the
    expansion that hung indexing before aliases were refused) cannot make it run long.
    """
    seen: set[int] = set()
    stack: list[Any] = [value]
    budget = limit
    while stack and budget > 0:
        item = stack.pop()
        if isinstance(item, dict | list | tuple):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, dict):
                for k, v in reversed(item.items()):
                    stack += [v, str(k)]  # the key pops first, then its value
            else:
                stack.extend(reversed(item))
        elif item is not None:
            text = str(item)[:budget]
            budget -= len(text) + 1
            yield text


def doc_fields(filename: str, text: str) -> DocFields:
    """Split a file into the indexed fields: file name, frontmatter parts, and body."""
    fm = frontmatter.parse(text)
    stem = filename[:-3] if filename.endswith(".md") else filename
    name = stem if fm.name in (None, stem) else f"{stem} {fm.name}"
    extra = {k: v for k, v in fm.data.items() if k not in ("name", "description")}
    body = "\n".join(text.split("\n")[fm.lines :]) if fm.present else text
    return DocFields(name, fm.description or "", " ".join(_flatten(extra, len(text))), body)


@functools.lru_cache(maxsize=65536)
def _word_term(word: str) -> str | None:
    found = terms(word)
    return found[0] if found else None


@dataclass(frozen=True)
class SnippetLine:
    lineno: int
    text: str
    matched: tuple[str, ...]


def best_lines(text: str, wanted: Iterable[str], n: int = 2, width: int = 240) -> list[SnippetLine]:
    """Up to `n` lines that together show the most query terms: greedily, the line adding the
    most terms not yet shown (body lines before frontmatter lines, then earlier lines), cropped
    to `width` characters around the first match, with the words that matched as written."""
    want = set(wanted)
    head = frontmatter.parse(text).lines
    cands: list[tuple[int, str, set[str]]] = []
    for i, line in enumerate(text.split("\n"), start=1):
        hit = want.intersection(terms(line)) if line.strip() else set()
        if hit:
            cands.append((i, line, hit))
    chosen: list[tuple[int, str, set[str]]] = []
    shown: set[str] = set()
    while cands and len(chosen) < n:
        best = max(cands, key=lambda c: (len(c[2] - shown), c[0] > head, len(c[2]), -c[0]))
        if chosen and not best[2] - shown:
            break
        chosen.append(best)
        shown |= best[2]
        cands.remove(best)
    out = []
    for lineno, line, hit in sorted(chosen):
        words = [w for w in dict.fromkeys(_WORD.findall(line)) if _word_term(w) in hit]
        out.append(SnippetLine(lineno, _crop(line, words, width), tuple(words)))
    return out


def _crop(line: str, words: list[str], width: int) -> str:
    line = line.rstrip("\r")
    if len(line) <= width:
        return line
    first = min((m.start() for w in words for m in [re.search(rf"\b{re.escape(w)}\b", line)] if m), default=0)
    start = max(0, min(first - width // 3, len(line) - width))
    piece = line[start : start + width]
    return ("…" if start > 0 else "") + piece + ("…" if start + width < len(line) else "")
