"""The combined tree of a store (root, folders, files, headings) and its profile and shape panel.

One tree serves every metric, so the profile, the shape panel and the taxonomy panel can never
disagree on what a level, a unit or a sibling is. The tree is built from a snapshot of texts
(`{path parts: text}`), so the same code measures a store on disk and a step of its journal.

Definitions (docs/metrics.md, "The combined tree"):
- Nodes: the root (depth 0); every folder (depth = number of path segments); every `.md` file
  (likewise); every heading (file depth + the heading's outline depth, so a heading that skips
  levels adds one level). A heading's parent is the nearest enclosing heading, else its file.
- Content units are the leaves that hold content: a file without headings (its text after the
  frontmatter) or a heading without subheadings (its lines after the heading line, up to the
  next heading). Text above a file's first heading, or between a heading and its first
  subheading, is signage of an internal node and belongs to no unit. Empty folders are
  neither units nor internal nodes.
- A unit's size is the character count of its stripped text.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from memdir.errors import ToolError
from memdir.store import frontmatter
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.outline import Section, outline
from memdir.store.safefs import Unread
from memdir.store.spec import xrefs
from memdir.store.store import Store

Metrics = dict[str, float | None]  # a measure by name (analytics/stats.py KEYS); None: undefined here


class PanelDetails(TypedDict, total=False):
    """What the taxonomy panel found beside its measures: the units behind B1's worst pair and
    B3's leaks (the first LIST_CAP of them, analytics/leakage.py), and what went unread."""

    b1_min_pair: list[str]
    b1_nodes: int
    b2_same_mean: float
    b2_cross_mean: float
    b3_leaked: list[str]
    b3_leaked_count: int
    b3_loo_leaked: list[str]
    b3_loo_leaked_count: int
    units_measured: int
    unread: list[str]


Parts = tuple[str, ...]
NodeKind = Literal["root", "dir", "file", "section"]


@dataclass(frozen=True)
class Snapshot:
    """The markdown of a store at one moment: file texts by path parts, plus folders."""

    files: Mapping[Parts, str]
    dirs: frozenset[Parts]
    unread: tuple[str, ...] = ()  # what the walk left unread, and why (Store.walk)

    @classmethod
    def from_files(
        cls,
        files: Mapping[Parts, str],
        extra_dirs: frozenset[Parts] = frozenset(),
        unread: tuple[str, ...] = (),
    ) -> Snapshot:
        dirs = set(extra_dirs)
        for parts in files:
            for i in range(1, len(parts)):
                dirs.add(parts[:i])
        return cls(files, frozenset(dirs), unread)


def read_store(store: Store) -> Snapshot:
    """Every visible `.md` file and every visible folder of a store on disk; what the walk
    cannot read (a folder too deep, a name not UTF-8, a hard-linked file) is listed in `unread`."""
    files: dict[Parts, str] = {}
    dirs: set[Parts] = set()
    skipped: list[Unread] = []
    unreadable: list[str] = []
    with store.safe.reader() as reader:  # each folder's descriptor opened once
        for f in store.scan(unread=skipped):
            if f.kind == "dir":
                dirs.add(f.parts)
            elif f.parts[-1].endswith(".md"):
                try:
                    files[f.parts] = reader.read(f.parts).decode("utf-8", "replace")
                except ToolError as exc:
                    unreadable.append(str(exc))
    return Snapshot.from_files(files, frozenset(dirs), tuple([str(u) for u in skipped] + unreadable))


@dataclass(eq=False, slots=True)
class Node:
    kind: NodeKind
    name: str
    depth: int
    label_text: str | None = field(default="", repr=False)  # None: a file's, made on first read
    text: str = ""
    where: str = ""
    parent: Node | None = field(default=None, repr=False)
    children: list[Node] = field(default_factory=list, repr=False)
    source: str | None = field(default=None, repr=False)  # the file text its label is made from

    @property
    def label(self) -> str:
        """`stem + " " + description` for a file, `name + " " + description of its MEMORY.md`
        for a folder (its name without one), the heading text for a section. A file's label is
        made when first read: only B1's measured siblings read labels, and parsing the YAML of
        every file (100,000 of them, mostly short notes B1 leaves out) was most of `stats`."""
        if self.label_text is None:
            desc = frontmatter.parse(self.source or "").description or ""
            self.label_text, self.source = f"{self.name[:-3]} {desc}".strip(), None
        return self.label_text

    @label.setter
    def label(self, value: str) -> None:
        self.label_text, self.source = value, None

    @property
    def is_unit(self) -> bool:
        return self.kind in ("file", "section") and not self.children


@dataclass
class IndexCounts:
    """memdir's own index files (`MEMORY.md`) a tree without indexes leaves out, counted apart:
    the paper counts a store's files, and these are memdir's signage (docs/metrics.md, "Store
    profile")."""

    files: int = 0
    sections: int = 0
    bytes: int = 0
    xrefs: int = 0


@dataclass
class Tree:
    root: Node
    nodes: list[Node]
    units: list[Node]
    sections: int
    bytes: int
    xrefs: int
    files: int
    dirs: int
    indexes: IndexCounts = field(default_factory=IndexCounts)  # left out of this tree

    def internal(self) -> Iterator[Node]:
        return (n for n in self.nodes if n.children)


def _section_text(lines: list[str], sec: Section) -> str:
    return "\n".join(lines[sec.start : sec.end]).strip()  # lines after the heading line


_MAYBE_HEADING = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)", re.MULTILINE)


def _add_sections(file_node: Node, text: str, path: str) -> int:
    body = frontmatter.body(text)
    # No line can be an ATX heading or a setext underline: skip the markdown parser (most files
    # of a sharded store have no headings, and parsing is the bulk of building the tree).
    sections = outline(text) if _MAYBE_HEADING.search(body) else []
    if not sections:
        file_node.text = body.strip()
        return 0
    lines = text.split("\n")
    made: dict[int, Node] = {}
    for sec in sections:
        parent = file_node if sec.parent is None else made[id(sec.parent)]
        node = Node("section", sec.title, file_node.depth + sec.depth, sec.title, parent=parent)
        node.where = f"{path}:{sec.start}"
        if not sec.children:
            node.text = _section_text(lines, sec)
        parent.children.append(node)
        made[id(sec)] = node
    return len(sections)


def folders(snap: Snapshot) -> tuple[Node, dict[Parts, Node]]:
    """The root and a node per folder of `snap`, in path order: the frame every tree builder
    (this one, and the health cache's from cached file subtrees) hangs its files on."""
    root = Node("root", "/memories", 0, where="/memories")
    by_parts: dict[Parts, Node] = {(): root}
    for parts in sorted(snap.dirs):
        parent = by_parts[parts[:-1]]
        node = Node(
            "dir", parts[-1], len(parts), parts[-1], parent=parent, where="/memories/" + "/".join(parts)
        )
        parent.children.append(node)
        by_parts[parts] = node
    return root, by_parts


def finish(
    snap: Snapshot,
    root: Node,
    by_parts: dict[Parts, Node],
    sections: int,
    total_bytes: int,
    n_xrefs: int,
    indexes: IndexCounts | None = None,
) -> Tree:
    """The tree of a filled frame (`folders`): children ordered, folders first, then files, each
    in name order; the nodes in depth-first order; the units among them. `indexes`: the index
    files the frame was filled without."""
    for n in by_parts.values():
        n.children.sort(key=lambda c: (c.kind != "dir", c.name))
    nodes: list[Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        nodes.append(n)
        stack.extend(reversed(n.children))
    units = [n for n in nodes if n.is_unit]
    left = indexes or IndexCounts()
    files = len(snap.files) - left.files
    return Tree(root, nodes, units, sections, total_bytes, n_xrefs, files, len(snap.dirs), left)


def build(snap: Snapshot, *, indexes: bool = True) -> Tree:
    """The combined tree of a snapshot, children in path order, headings in file order.

    `indexes=False` is the tree as the paper counts it (`memdir stats`): memdir's index files
    (`MEMORY.md`) are no nodes, so they are neither counted nor units nor siblings, as the
    paper's stores have none (its dump: 30 files for 30 sessions); a folder still takes its
    index's description as its label. They are counted apart in `Tree.indexes`. Health keeps
    them (`indexes=True`): its rules read what an index holds."""
    root, by_parts = folders(snap)
    sections = total_bytes = n_xrefs = 0
    left = IndexCounts()
    for parts in sorted(snap.files):
        text = snap.files[parts]
        path = "/memories/" + "/".join(parts)
        parent = by_parts[parts[:-1]]
        node = Node("file", parts[-1], len(parts), None, parent=parent, where=path, source=text)
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        if parts[-1] == MEMORY_INDEX:
            if parent is not root:
                desc = frontmatter.parse(text).description
                if desc:
                    parent.label = f"{parent.name} {desc}"
            if not indexes:  # counted on a node of its own, hung nowhere
                left.files += 1
                left.sections += _add_sections(node, text, path)
                left.bytes += size
                left.xrefs += len(xrefs(text))
                continue
        parent.children.append(node)
        sections += _add_sections(node, text, path)
        total_bytes += size
        n_xrefs += len(xrefs(text))
    return finish(snap, root, by_parts, sections, total_bytes, n_xrefs, left)


def profile_and_shape(tree: Tree) -> tuple[Metrics, dict[str, str]]:
    """The store profile and the shape panel; a value that cannot be defined is None with a reason.

    `dirs` counts folders, the root not counted (docs/metrics.md: a store of root files alone
    has 0); `kb` is bytes of `.md` files / 1024; depth is over content units (mean = Sackin
    index / leaves); fanout is over internal nodes (nodes with a child); `cv` is the population
    standard deviation of unit sizes over their mean.
    """
    reasons: dict[str, str] = {}
    depths = [u.depth for u in tree.units]
    fanouts = [len(n.children) for n in tree.internal()]
    sizes = [len(u.text) for u in tree.units]
    out: Metrics = {
        "dirs": tree.dirs,
        "files": tree.files,
        "sections": tree.sections,
        "kb": round(tree.bytes / 1024, 3),
        "bytes": tree.bytes,
        "xrefs": tree.xrefs,
        "units": len(tree.units),
        # memdir's own count: the same store with its index files (MEMORY.md) counted in
        "memdir_files": tree.files + tree.indexes.files,
        "memdir_sections": tree.sections + tree.indexes.sections,
        "memdir_kb": round((tree.bytes + tree.indexes.bytes) / 1024, 3),
        "depth_mean": None,
        "depth_max": None,
        "fanout_mean": None,
        "fanout_max": None,
        "cv": None,
    }
    if depths:
        out["depth_mean"] = sum(depths) / len(depths)
        out["depth_max"] = max(depths)
    else:
        reasons["depth_mean"] = reasons["depth_max"] = "no content units (the store has no .md file)"
    if fanouts:
        out["fanout_mean"] = sum(fanouts) / len(fanouts)
        out["fanout_max"] = max(fanouts)
    else:
        reasons["fanout_mean"] = reasons["fanout_max"] = "no internal node (the root holds nothing)"
    if not sizes:
        reasons["cv"] = "no content units"
    elif sum(sizes) == 0:
        reasons["cv"] = "every content unit is empty (mean size 0)"
    else:
        out["cv"] = statistics.pstdev(sizes) / statistics.fmean(sizes)
    return out, reasons
