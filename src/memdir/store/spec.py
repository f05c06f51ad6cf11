"""The Agent Memory directory convention: what a valid memory is, and what core memory loads.

Core memory is every markdown file directly in the root; it is always in the prompt, so its
size is a budget. Every memory directory carries a `MEMORY.md` so an agent that reaches the
directory finds its index. Cross-references (`see /memories/...`) must point at something.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memdir.errors import PathError, ToolError
from memdir.store import frontmatter
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.paths import ROOT, MemoryPath, parse_memory_path
from memdir.store.safefs import Unread
from memdir.store.store import Store
from memdir.tokens import count_tokens

DEFAULT_CORE_BUDGET = 30_000
# The most entries a folder should hold (docs/study.md, design rule 2), as `memdir check` reports.
DEFAULT_FANOUT_CAP = 50
XREF = re.compile(r"\b[Ss]ee\s+(/memories(?:/[^\s)\]>,;`'\"]*)?)")
GOVERNED_MARKER = "SKILL.md"


@dataclass(frozen=True)
class Violation:
    path: str
    rule: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "rule": self.rule, "message": self.message}


@dataclass
class Report:
    violations: list[Violation] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.violations


def xrefs(text: str) -> list[tuple[int, str]]:
    """(line number, target memory path) of every `see /memories/...` in `text`."""
    found: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        for m in XREF.finditer(line):
            found.append((lineno, m.group(1).rstrip(".:!?")))
    return found


def governed_dirs(store: Store) -> set[MemoryPath]:
    """Root-level folders governed by another format (Agent Skills: a `SKILL.md` inside)."""
    gov: set[MemoryPath] = set()
    for e in store.walk():
        if not e.is_dir and e.path.name == GOVERNED_MARKER and len(e.path.parts) >= 2:
            gov.add(MemoryPath(e.path.parts[:1]))
    return gov


def _is_governed(mp: MemoryPath, governed: set[MemoryPath]) -> bool:
    return any(mp.is_within(g) for g in governed)


def validate(store: Store) -> Report:
    """Every violation of the convention and of the frontmatter rules, in path order."""
    report = Report()
    add = report.violations.append
    governed = governed_dirs(store)
    if not store.exists(ROOT.child(MEMORY_INDEX)):
        add(Violation("/memories", "root-index", "the root has no MEMORY.md; run 'memdir init' or create it"))
    memory_dirs: set[MemoryPath] = set()
    unread: list[Unread] = []
    for entry in store.files(unread=unread):
        if _is_governed(entry.path, governed):
            continue
        parent = entry.path.parent
        while not parent.is_root and parent not in memory_dirs:
            memory_dirs.add(parent)
            parent = parent.parent
        try:
            text = store.read_bytes(entry.path).decode("utf-8", errors="replace")
        except ToolError as exc:
            add(Violation(entry.path.text, "unreadable", str(exc)))
            continue
        for msg in frontmatter.validate(text, entry.path.name):
            add(Violation(entry.path.text, "frontmatter", msg))
        for lineno, target in xrefs(text):
            try:
                exists = store.exists(parse_memory_path(target))
            except PathError:
                exists = False
            if not exists:
                add(
                    Violation(
                        f"{entry.path.text}:{lineno}", "dangling-xref", f"'see {target}' points at nothing"
                    )
                )
    for u in unread:  # a folder too deep for any walk, a name no path can spell: never read
        add(Violation(u.path, "unread", u.reason))
    for d in sorted(memory_dirs, key=lambda m: m.parts):
        if not store.exists(d.child(MEMORY_INDEX)):
            add(Violation(d.text, "dir-index", f"memory directory {d.text} has no MEMORY.md"))
    report.violations.sort(key=lambda v: (v.path, v.rule))
    return report


@dataclass
class CoreContext:
    text: str
    tokens: int
    budget: int

    @property
    def over_budget(self) -> bool:
        return self.tokens > self.budget


def _opening(text: str, max_lines: int = 8) -> str:
    _, fm_lines = frontmatter.split(text)
    desc = frontmatter.parse(text).description
    body = [ln for ln in text.split("\n")[fm_lines:] if ln.strip()][:max_lines]
    head = [f"description: {desc}"] if desc else []
    return "\n".join(head + body)


def context(store: Store, budget: int = DEFAULT_CORE_BUDGET) -> CoreContext:
    """The prompt block a conforming harness loads: core memory, then the child directories."""
    parts: list[str] = []
    core = [e for e in store.files() if len(e.path.parts) == 1]
    core.sort(key=lambda e: (e.path.name != MEMORY_INDEX, e.path.name))
    core_text: list[str] = []
    for e in core:
        try:
            body = store.read_bytes(e.path).decode("utf-8", errors="replace")
        except ToolError:
            continue  # a linked or vanished file is not core memory
        core_text.append(f'<memory_file path="{e.path.text}">\n{body.rstrip()}\n</memory_file>')
    parts.append("<core_memory>\n" + "\n".join(core_text) + "\n</core_memory>")
    governed = governed_dirs(store)
    children = sorted(
        (
            e
            for e in store.walk()
            if e.is_dir and len(e.path.parts) == 1 and not _is_governed(e.path, governed)
        ),
        key=lambda e: e.path.name,
    )
    listing: list[str] = []
    for d in children:
        index = d.path.child(MEMORY_INDEX)
        if store.exists(index):
            opening = _opening(store.read_text(index))
            listing.append(f'<memory_directory path="{d.path.text}">\n{opening}\n</memory_directory>')
        elif any(True for _ in store.files(d.path)):
            listing.append(f'<memory_directory path="{d.path.text}">\n(no MEMORY.md)\n</memory_directory>')
    if listing:
        parts.append(
            "<memory_directories>\nExternal memory, not loaded; open a directory's MEMORY.md to descend.\n"
            + "\n".join(listing)
            + "\n</memory_directories>"
        )
    text = "\n".join(parts) + "\n"
    core_tokens = count_tokens("\n".join(core_text))
    return CoreContext(text, core_tokens, budget)


INIT_INDEX = """---
description: Root index of this memory; core memory, always loaded. List the folders here.
---
# Memory

This is the root of a memory store. Markdown files directly here are core memory and are always
loaded; put detail in folders, each with its own MEMORY.md that indexes its files.
"""


def init(store: Store) -> bool:
    """Make `store` a valid empty memory; returns False when MEMORY.md already existed."""
    index = ROOT.child(MEMORY_INDEX)
    if store.exists(index):
        return False
    with store.step("init"):
        store.create(index, INIT_INDEX)
    return True
