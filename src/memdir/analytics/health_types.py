"""The records of `health` (a `Finding`, its `Thresholds`) and how findings name what they point at.

Kept apart from `health.py` so the modules that make findings (`health_facts`, from `check`'s
problems; `health_content`, from the tree and its TF-IDF rows) and the one that runs them
share one definition. docs/health.md describes every kind.
"""

from __future__ import annotations

import re
from dataclasses import asdict, astuple, dataclass, field
from typing import Any, TypedDict

from memdir.analytics.tree import Node
from memdir.store import spec
from memdir.stream import MAX_CHARS

# Most actionable first: a stale live value gives confidently wrong answers (docs/study.md,
# design rule 3); a broken reference or an over-budget core breaks every read that meets it; a
# folder past the cap makes every listing the cost (rule 2); the content findings weaken the
# taxonomy (rule 6) but no answer is wrong because of them.
KINDS = (
    "stale-live",
    "supersede-dates",
    "dangling-ref",
    "core-budget",
    "fanout",
    "near-duplicate",
    "leaked",
    "confusable",
    "over-long",
)

# Over-long: a section holding more than one whole intake chunk of conversation (the stream's
# chunk bound, docs/study.md, configuration of record) has grown over several intakes instead of
# being partitioned (design rule 1); docs/health.md, "The kinds".
MAX_SECTION_CHARS = MAX_CHARS
# Near-duplicates: two units at TF-IDF cosine 0.85 or more: above the distinct units of curated
# stores, below a unit copied with a third of its words dropped
# (benchmarks/results/2026-12-06-health.md, "Why these thresholds").
DUP_COSINE = 0.85
# B1's most confusable pair is a finding only when its label distance 1 - cos is at most this:
# the two labels share four fifths of their weight (docs/health.md, "The kinds").
CONFUSABLE_DISTANCE = 0.2


@dataclass(frozen=True)
class Thresholds:
    fanout_cap: int = spec.DEFAULT_FANOUT_CAP
    core_budget: int = spec.DEFAULT_CORE_BUDGET
    max_section_chars: int = MAX_SECTION_CHARS
    dup_cosine: float = DUP_COSINE
    confusable_distance: float = CONFUSABLE_DISTANCE

    def as_tuple(self) -> tuple[Any, ...]:
        return astuple(self)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


PAIR_KINDS = ("confusable", "near-duplicate")  # findings about two units, keyed by both refs


def pair_key(kind: str, a: str, b: str) -> str:
    """A pair finding's key: its two refs sorted, so the pair has one key whichever comes first."""
    return f"{kind}:" + "|".join(sorted((a, b)))


class Ref(TypedDict):
    """Where a node is, in a finding's detail (:func:`ref`)."""

    path: str
    heading_path: str
    line: int | None
    ref: str


class LabeledRef(Ref):
    """A ref with the node's label, for findings about labels (confusable siblings)."""

    label: str


class FactLine(TypedDict):
    """A keyed fact line, in a stale-live or supersede-dates finding's detail."""

    path: str
    line: int
    value: str
    since: str
    until: str | None
    text: str


class CoreFile(TypedDict):
    """A root file and its tokens, in a core-budget finding's detail."""

    path: str
    tokens: int


class FindingDetail(TypedDict, total=False):
    """What a program needs to act on a finding: each kind fills its own keys, the shapes
    `tools/outputs.py` (HEALTH_DETAILS) declares and docs/health.md describes. One record for
    all kinds, since a reader dispatches on the finding's `kind`, not on the detail."""

    # stale-live, supersede-dates
    subject: str
    attribute: str
    reason: str
    stale: FactLine
    current: FactLine
    live: FactLine
    superseded: list[FactLine]
    replacement: str | None
    # dangling-ref (and `line` of over-long, where a file has none)
    line: int | None
    text: str
    target: str
    section: str | None
    candidates: list[str]
    # core-budget
    tokens: int
    budget: int
    files: list[CoreFile]
    # fanout
    entries: int
    cap: int
    children: list[str]
    # near-duplicate, confusable (LabeledRef), leaked
    a: Ref
    b: Ref
    cosine: float
    parent: str
    distance: float
    unit: Ref
    own_group: Ref
    nearer_group: Ref
    cos_own: float
    cos_nearer: float
    # over-long: the unit's Ref fields, with its size
    path: str
    heading_path: str
    ref: str
    chars: int
    limit: int


class FindingRecord(TypedDict):
    """A finding as `memdir health --json` and the UI carry it."""

    kind: str
    path: str
    related: list[str]
    message: str
    action: str
    key: str
    detail: FindingDetail


@dataclass(frozen=True)
class Finding:
    """One thing to fix. `path`: the file or folder to edit; `related`: the other paths
    involved; `key`: `kind:...` built from paths, heading paths and fact keys, never from line
    numbers, so it stands while the finding does (an edit elsewhere, even one that moves the
    finding's lines, keeps it); `detail`: what a program needs to act (docs/health.md)."""

    kind: str
    path: str
    message: str
    action: str
    key: str
    detail: FindingDetail = field(default_factory=lambda: FindingDetail(), compare=False, hash=False)
    related: tuple[str, ...] = ()

    def as_dict(self) -> FindingRecord:
        return {
            "kind": self.kind,
            "path": self.path,
            "related": list(self.related),
            "message": self.message,
            "action": self.action,
            "key": self.key,
            "detail": self.detail,
        }

    def within(self, prefix: str) -> bool:
        """True when this finding's path, or one it relates to, is `prefix` or lies under it."""
        top = prefix.rstrip("/") or "/memories"
        return any(p == top or p.startswith(top + "/") for p in (self.path, *self.related))


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def _level(lines: list[str], start: int) -> int:
    """The level of the heading whose first line is `start` (1-indexed): its `#`s, or for a
    setext heading the underline below its text (`=` 1, `-` 2)."""
    m = _ATX.match(lines[start - 1]) if 0 < start <= len(lines) else None
    if m:
        return len(m.group(1))
    for line in lines[start:]:
        u = _SETEXT.match(line)
        if u:
            return 1 if u.group(1).startswith("=") else 2
    return 1


def file_of(node: Node) -> Node:
    """The file a section belongs to (a file or folder is its own)."""
    while node.kind == "section" and node.parent is not None:
        node = node.parent
    return node


def line_of(node: Node) -> int | None:
    """The line of a section's heading (its `where` is `path:line`); None for a file or folder."""
    return int(node.where.rpartition(":")[2]) if node.kind == "section" else None


def heading_path(node: Node, lines: list[str]) -> str:
    """A section's heading path as `section_read` takes it: `# A > ## B`."""
    labels: list[str] = []
    n: Node | None = node
    while n is not None and n.kind == "section":
        line = line_of(n)
        labels.append(f"{'#' * _level(lines, line or 0)} {n.name}")
        n = n.parent
    return " > ".join(reversed(labels))


def _occurrence(node: Node, owner: Node, path: str, lines: list[str]) -> int:
    """Which section of its file with this heading path `node` is (1 for the first): two
    sections may share a path (`section_read` reports the others), and their refs must differ."""
    n = 0
    stack = list(reversed(owner.children))
    while stack:  # the file's sections in file order
        s = stack.pop()
        if s is node:
            return n + 1
        if s.name == node.name and heading_path(s, lines) == path:
            n += 1
        stack.extend(reversed(s.children))
    return n + 1


def ref(node: Node, lines: list[str]) -> Ref:
    """Where a node is, for a finding's detail: its path, its heading path ("" for a file or a
    folder), the line of its heading (None for a file or a folder), and `ref`, the line-free
    name a key is built from (`/memories/a.md > # A > ## B`; a second section of the file with
    the same heading path is `... > ## B [2]`)."""
    owner = file_of(node)
    if node.kind != "section":
        return {"path": owner.where, "heading_path": "", "line": None, "ref": owner.where}
    heading = heading_path(node, lines)
    k = _occurrence(node, owner, heading, lines)
    name = f"{owner.where} > {heading}" + (f" [{k}]" if k > 1 else "")
    return {"path": owner.where, "heading_path": heading, "line": line_of(node), "ref": name}


def shown(r: Ref) -> str:
    """A ref as a message shows it: `path:line (# A > ## B)`, or the bare path."""
    if r["line"] is None:
        return str(r["path"])
    return f"{r['path']}:{r['line']} ({r['heading_path']})"
