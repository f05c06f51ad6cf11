"""What a multi-file change did, in words a person can check: moved, merged, split, edited,
created and deleted files, and which facts went where; and its unified diff.

Files are followed by content digest (a move is the same bytes under a new path) and facts by
identity (`analytics.facts`: locators and normalized words), so a section cut from one file
and pasted into another reads as facts moving between them, whatever happened to the headings
around them. The categories are defined in docs/consolidate.md.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from memdir import conventions
from memdir.agents.landing import Plan
from memdir.analytics.facts import fact_lines
from memdir.conventions import Fact
from memdir.jsontypes import JsonObject

LIST_CAP = 50  # entries of one kind named in a journal trailer; the rest are counted


@dataclass
class ChangeSummary:
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old path, new path), same bytes
    merged: list[tuple[list[str], str]] = field(default_factory=list)  # (files, the one they became)
    split: list[tuple[str, list[str]]] = field(default_factory=list)  # (file, the files it became)
    facts_moved: list[tuple[str, str, int]] = field(default_factory=list)  # (from, to, fact lines)
    edited: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(self.counts().values())

    def counts(self) -> dict[str, int]:
        return {
            "moved": len(self.moved),
            "merged": len(self.merged),
            "split": len(self.split),
            "facts_moved": sum(n for _, _, n in self.facts_moved),
            "edited": len(self.edited),
            "created": len(self.created),
            "deleted": len(self.deleted),
        }

    def headline(self) -> str:
        """One line: how many of each kind ('2 moved, 1 merged, ...')."""
        c = self.counts()
        words = {"facts_moved": "fact line moved" if c["facts_moved"] == 1 else "fact lines moved"}
        return ", ".join(f"{n} {words.get(kind, kind)}" for kind, n in c.items())

    def lines(self) -> list[str]:
        """One readable line per change, moves first."""
        return [line for _, line in self._lines()]

    def _lines(self) -> Iterator[tuple[str, str]]:
        for a, b in self.moved:
            yield "moved", f"moved {a} -> {b}"
        for srcs, into in self.merged:
            yield "merged", f"merged {' + '.join(srcs)} -> {into}"
        for src, parts in self.split:
            yield "split", f"split {src} -> {', '.join(parts)}"
        for a, b, n in self.facts_moved:
            yield "facts_moved", f"moved {n} fact line{'s' if n != 1 else ''} {a} -> {b}"
        for kind in ("edited", "created", "deleted"):
            for p in getattr(self, kind):
                yield kind, f"{kind} {p}"

    def meta(self) -> dict[str, str]:
        """Journal step meta: the headline and, per kind, its lines (each a scalar trailer)."""
        by_kind: dict[str, list[str]] = defaultdict(list)
        for kind, line in self._lines():
            by_kind[kind].append(line)
        out = {"summary": self.headline()}
        for kind, lines in by_kind.items():
            extra = f"; (+{len(lines) - LIST_CAP} more)" if len(lines) > LIST_CAP else ""
            out[kind] = "; ".join(lines[:LIST_CAP]) + extra
        return out

    def as_json(self) -> JsonObject:
        return {
            "counts": self.counts(),
            "moved": [list(m) for m in self.moved],
            "merged": [{"from": s, "into": i} for s, i in self.merged],
            "split": [{"from": s, "into": i} for s, i in self.split],
            "facts_moved": [{"from": a, "to": b, "facts": n} for a, b, n in self.facts_moved],
            "edited": self.edited,
            "created": self.created,
            "deleted": self.deleted,
            "lines": self.lines(),
        }


def _facts(path: str, data: bytes) -> set[Fact]:
    return {f.identity for f in fact_lines(path, data.decode("utf-8", "replace"))}


def _flows(ops: Plan, old: Mapping[str, bytes], new: Mapping[str, bytes]) -> Counter[tuple[str, str]]:
    """(from, to): fact lines that left a file that changed and now stand in another one."""
    where: dict[Fact, set[str]] = defaultdict(set)
    for q in ops.needed:
        for f in _facts(q, new[q]):
            where[f].add(q)
    had = {q: _facts(q, old[q]) for q in ops.writes}
    flows: Counter[tuple[str, str]] = Counter()
    for p in [*ops.deletes, *ops.writes]:
        stayed = _facts(p, new[p]) if p in new else set()
        for f in _facts(p, old[p]) - stayed:
            for q in where.get(f, ()):
                if q != p and f not in had.get(q, set()):
                    flows[(p, q)] += 1
    return flows


def summarize(ops: Plan, old: Mapping[str, bytes], new: Mapping[str, bytes]) -> ChangeSummary:
    """The summary of `ops`, given the old bytes of `ops.old_side` and the new of `ops.needed`."""
    flows = _flows(ops, old, new)
    targets: dict[str, list[str]] = defaultdict(list)
    for (p, q), _ in sorted(flows.items()):
        targets[p].append(q)
    s = ChangeSummary(moved=list(ops.renames), edited=list(ops.writes), created=list(ops.creates))
    into: dict[str, list[str]] = defaultdict(list)
    explained: set[str] = set()
    for p in ops.deletes:
        if len(targets[p]) >= 2:
            s.split.append((p, targets[p]))
            explained.add(p)
        elif len(targets[p]) == 1:
            into[targets[p][0]].append(p)
    for q, srcs in sorted(into.items()):
        if len(srcs) >= 2 or q in ops.writes:
            s.merged.append((sorted(srcs + ([q] if q in ops.writes else [])), q))
            explained.update(srcs)
    s.facts_moved = [(p, q, n) for (p, q), n in sorted(flows.items()) if p not in explained]
    s.deleted = [p for p in ops.deletes if p not in explained]
    return s


def _with_ends(data: bytes | None) -> list[str]:
    """The file's lines as the tools number them (`\n` only), each with its `\n`."""
    if data is None:
        return []
    rows = conventions.lines(data.decode("utf-8", "replace"))
    return [r + "\n" for r in rows[:-1]] + ([rows[-1]] if rows[-1] else [])


def _diff_lines(a: bytes | None, b: bytes | None, name_a: str, name_b: str) -> list[str]:
    old, cur = _with_ends(a), _with_ends(b)
    out: list[str] = []
    for line in difflib.unified_diff(old, cur, name_a, name_b):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out


def unified_diff(ops: Plan, old: Mapping[str, bytes], new: Mapping[str, bytes]) -> str:
    """Every change of `ops` as a unified diff (a move of the same bytes as one line)."""
    out: list[str] = [f"rename {a} -> {b} (same bytes)\n" for a, b in ops.renames]
    changes: list[tuple[str, bytes | None, bytes | None]] = [(p, old.get(p), None) for p in ops.deletes]
    changes += [(p, old.get(p), new.get(p)) for p in ops.writes]
    changes += [(p, None, new.get(p)) for p in ops.creates]
    for p, a, b in sorted(changes, key=lambda c: c[0]):
        out += _diff_lines(
            a, b, f"a{p}" if a is not None else "/dev/null", f"b{p}" if b is not None else "/dev/null"
        )
    return "".join(out)
