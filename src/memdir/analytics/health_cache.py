"""What `health` keeps between calls on one store object: each file's parse, keyed by its text.

Building the combined tree (`analytics/tree.py`) parses every file's headings with markdown-it,
which is most of a health call's time on a store of a thousand sections
(benchmarks/results/2026-12-06-health.md, "How long health takes"). Between two calls of a
management episode only the files it wrote change, so each file's subtree is built once per
text, by `tree.build` itself on a one-file snapshot, and the store's tree is assembled from
those subtrees exactly as `tree.build` orders it; a test holds the two equal. Files are read in
full on every call (a few milliseconds for a thousand sections) and compared by text, not by
(size, mtime_ns): a write within one tick of the file system's clock that keeps the size would
otherwise go unseen.

The units' TF-IDF rows are the taxonomy panel's (`taxonomy.vectorize`: scikit-learn's
`TfidfVectorizer()` at its defaults, analytics/tfidf.py), computed here from token counts kept
per unit text, so only an edited unit is tokenized again: the idf changes with every edit, the
counts do not.

B1 compares labels (names, descriptions, headings), which most edits leave as they were, so its
result is kept with the labels it compared and reused while they stand.

The cache also keeps the last call's listing and result, so a call on a store that did not
change at all (the check after an episode that wrote nothing, or the "before" of the next
episode) returns that result instead of computing it again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from scipy import sparse

from memdir.analytics import taxonomy, tfidf
from memdir.analytics.facts import KeyedFact, keyed_facts
from memdir.analytics.tree import Node, Parts, Snapshot, Tree, build, finish, folders
from memdir.errors import ToolError
from memdir.store import spec
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.store import Store

# (path parts, is a folder, size, mtime_ns) of every entry a walk yields: what `check` sees
Entry = tuple[Parts, bool, int, int]


@dataclass
class FileParse:
    """One file's share of the tree and of the facts, valid while its text is `text`."""

    text: str
    node: Node  # the file's node and its sections; its parent is re-linked on every assembly
    folder_label: str | None  # a MEMORY.md's description labels its folder (tree.build)
    sections: int
    bytes: int
    xrefs: int
    keyed: list[KeyedFact]
    lines: list[str]


def parse_file(parts: Parts, text: str) -> FileParse:
    """The file's subtree, built by `tree.build` on a snapshot holding only this file."""
    mini = build(Snapshot.from_files({parts: text}))
    node = next(n for n in mini.nodes if n.kind == "file")
    folder = node.parent
    label = None
    if parts[-1] == MEMORY_INDEX and len(parts) > 1 and folder is not None and folder.label != folder.name:
        label = folder.label
    path = "/memories/" + "/".join(parts)
    return FileParse(
        text,
        node,
        label,
        mini.sections,
        mini.bytes,
        mini.xrefs,
        list(keyed_facts(path, text)),
        text.split("\n"),
    )


@dataclass
class Listing:
    """A store as one walk saw it: its entries, and the text of every `.md` file; `walked` is
    that walk with those texts, handed to `integrity.check` so it neither walks nor reads again."""

    entries: list[Entry]
    files: dict[Parts, str]
    unread: tuple[str, ...]
    walked: spec.Walk | None = None

    @property
    def snapshot(self) -> Snapshot:
        dirs = frozenset(p for p, is_dir, _, _ in self.entries if is_dir)
        return Snapshot.from_files(self.files, dirs, self.unread)


def read_listing(store: Store) -> Listing:
    """Every entry of the store and every `.md` file's text (as `tree.read_store` reads them)."""
    entries: list[Entry] = []
    files: dict[Parts, str] = {}
    unreadable: list[str] = []
    walked = spec.walk(store, files)
    for e in walked.seen:
        entries.append((e.parts, e.is_dir, e.size, e.mtime_ns))
        if not e.is_dir and e.path.name.endswith(".md"):
            try:
                files[e.path.parts] = store.read_bytes(e.path).decode("utf-8", "replace")
            except ToolError as exc:
                unreadable.append(str(exc))
    return Listing(entries, files, tuple([str(u) for u in walked.unread] + unreadable), walked)


@dataclass
class HealthCache:
    """Per store object: file parses by path, and the last result with what it was computed on."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    parses: dict[Parts, FileParse] = field(default_factory=dict)
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # token counts by unit text
    last_entries: list[Entry] | None = None
    last_settings: tuple[Any, ...] | None = None
    last_result: Any = None
    b1: tuple[Any, Any] | None = None  # (the labels B1 compared, what it found): see `b1_pair`

    def refresh(self, listing: Listing) -> tuple[dict[Parts, FileParse], int]:
        """The parse of every file of `listing`, and how many had to be parsed afresh; parses
        of files no longer there are dropped."""
        fresh = 0
        out: dict[Parts, FileParse] = {}
        for parts, text in listing.files.items():
            cached = self.parses.get(parts)
            if cached is None or cached.text != text:
                cached = parse_file(parts, text)
                fresh += 1
            out[parts] = cached
        self.parses = out
        return out, fresh

    def unchanged(self, listing: Listing, settings: tuple[Any, ...], fresh: int) -> bool:
        """True when the last result was computed on this very listing with these settings."""
        return (
            self.last_result is not None
            and fresh == 0
            and self.last_entries == listing.entries
            and self.last_settings == settings
        )

    def remember(self, listing: Listing, settings: tuple[Any, ...], result: Any) -> None:
        self.last_entries, self.last_settings, self.last_result = listing.entries, settings, result

    def vectorize(self, texts: list[str]) -> sparse.csr_matrix | None:
        """`taxonomy.vectorize(texts)`, bit for bit, from cached token counts; None when no
        text has a token. Counts of texts no longer given are dropped."""
        cached: dict[str, dict[str, int]] = {}
        for t in texts:
            c = self.tokens.get(t)
            cached[t] = c if c is not None else tfidf.counts(t)
        self.tokens = cached
        return tfidf.from_counts([cached[t] for t in texts])


def assemble(snap: Snapshot, parses: dict[Parts, FileParse]) -> Tree:
    """The combined tree of `snap` from cached file subtrees, ordered as `tree.build` orders it
    (folders by path, then files by path; each node's children folders first, then by name)."""
    root, by_parts = folders(snap)
    sections = total_bytes = n_xrefs = 0
    for parts in sorted(snap.files):
        fp = parses[parts]
        parent = by_parts[parts[:-1]]
        fp.node.parent = parent
        parent.children.append(fp.node)
        if fp.folder_label is not None and parent is not root:
            parent.label = fp.folder_label
        sections += fp.sections
        total_bytes += fp.bytes
        n_xrefs += fp.xrefs
    return finish(snap, root, by_parts, sections, total_bytes, n_xrefs)


def b1_pair(tree: Tree, cache: HealthCache) -> tuple[list[str] | None, float | None]:
    """`taxonomy.b1`'s most confusable pair (`details.b1_min_pair`, as `where`s) and its
    distance (`b1_min`). B1 reads only the labels of the sibling groups it compares, so its pair
    is kept by position in those groups and recomputed only when a label or a group changed."""
    groups = [
        g for g in ([c for c in n.children if taxonomy.measured(c)] for n in tree.internal()) if len(g) >= 2
    ]
    flat = [c for g in groups for c in g]
    key = tuple(tuple(c.label for c in g) for g in groups)
    if cache.b1 is None or cache.b1[0] != key:
        panel = taxonomy.Panel()
        taxonomy.b1(tree, panel)
        pair, dist = panel.details.get("b1_min_pair"), panel.values.get("b1_min")
        where = {c.where: i for i, c in enumerate(flat)}
        cache.b1 = (key, None if not pair or dist is None else (where[pair[0]], where[pair[1]], float(dist)))
    found = cache.b1[1]
    if found is None:
        return None, None
    return [flat[found[0]].where, flat[found[1]].where], found[2]
