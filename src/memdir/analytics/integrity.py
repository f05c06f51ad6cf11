"""`memdir check` (is this store sound?) and `memdir diff --facts` (did a pass keep every fact?).

Both read the conventions through `analytics.facts` and never write.

check rules (each problem names its rule):
- `spec`: the Agent Memory convention and frontmatter rules (`memdir validate`), except the
  three split out below;
- `unread`: an entry no walk reads (a folder deeper than MAX_DEPTH levels, a name that is not
  UTF-8), so nothing in it is checked;
- `dangling-xref`: a `see /memories/...` that points at nothing, or (`see PATH > ## Heading`) at
  a section the file does not have;
- `name-stem`: a frontmatter `name` that differs from the file stem;
- `fanout`: a folder with more entries (files and folders) than the cap;
- `core-budget`: core memory (markdown in the root) over the token budget;
- `supersede`: two or more live lines for one (subject, attribute) key anywhere in the store,
  or a live line whose `since` date is before the `until` date of one of its superseded lines.
- `locator-reuse`: a locator the store cites that names two different turns: the ingest ledger
  (`store/ingest_ledger.py`) recorded it for turns that differ in speaker, text or date, so a
  citation of it cannot say which one it means.
Warnings (reported, not failing): `keyed-format`, a line shaped like a keyed fact that the
grammar refuses; `injection`, a line that addresses a model (`analytics/injection.py`): the
prompts show it as data (`store/boundary.py`), and a chat may quote such words honestly, so it
is for a person to look at, not a fault of the store.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from memdir.analytics import facts, injection
from memdir.conventions import MAX_DIGITS, locators, overlong_locators, sync_conflicts
from memdir.errors import PathError, ToolError
from memdir.jsontypes import JsonObject
from memdir.store import ingest_ledger, secrets, spec
from memdir.store.outline import Section, find_sections, outline, parse_section_path
from memdir.store.paths import MemoryPath, parse_memory_path
from memdir.store.safefs import Reader, Unread
from memdir.store.store import Store

DEFAULT_FANOUT_CAP = spec.DEFAULT_FANOUT_CAP
_XREF_SECTION = re.compile(r"\b[Ss]ee\s+(/memories/\S+?\.md)\s+>\s+(#{1,6} [^\n]*?)\s*(?:[\])]|$|\s\[)")


@dataclass(frozen=True)
class Problem:
    rule: str
    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "path": self.path, "message": self.message}


@dataclass
class CheckReport:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # files, keyed_facts, live_keys, core_tokens

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> JsonObject:
        return {
            "ok": self.ok,
            "problems": [p.as_dict() for p in self.problems],
            "warnings": [w.as_dict() for w in self.warnings],
            "counts": self.counts,
        }


# A core file this large (characters) is counted while the walk holds its text; smaller ones are
# read again after the walk, so the tokenizer (tens of megabytes once loaded) is loaded after
# the large reads, not beside one (each holds the file's bytes and its text at once).
_LARGE_CORE = 1 << 18
_KEYED_FORMAT = (
    "looks like a keyed fact but does not follow '- SUBJECT | ATTRIBUTE: VALUE (since YYYY-MM-DD) [LOC]' "
    "or its struck-through superseded form"
)


def _overlong(shown: str, text: str) -> Iterator[Problem]:
    """Locator-shaped groups with a number past MAX_DIGITS: they look like a source but cite
    nothing (docs/conventions.md, "Source locators")."""
    for lineno, group in overlong_locators(text):
        said = group if len(group) <= 40 else f"{group[:20]}...{group[-12:]}"
        yield Problem(
            "locator",
            f"{shown}:{lineno}",
            f"{said} looks like a locator, but a number in it has more than {MAX_DIGITS} digits, so it "
            "cites nothing; write the real locator, or put the text in parentheses",
        )


def _sync_conflicts(shown: str, text: str) -> Iterator[Problem]:
    """Lines two stores edited differently, both kept by a sync between its notes (docs/sync.md)."""
    for lineno in sync_conflicts(text):
        yield Problem(
            "sync-conflict",
            f"{shown}:{lineno}",
            "a sync kept two versions of these lines, edited differently on two stores; keep the one "
            "that is true (or both, reworded) and delete the three 'memdir sync' notes around them",
        )


def _secrets(shown: str, text: str, allowed: Callable[[str], bool]) -> Iterator[Problem]:
    """Secrets a file already holds (written before redaction, or by hand): where and what kind,
    never the text (docs/secrets.md)."""
    for hit in secrets.scan(text):
        if allowed(text[hit.start : hit.end]):
            continue
        yield Problem(
            "secret",
            f"{shown}:{text.count(chr(10), 0, hit.start) + 1}",
            f"holds a secret ({hit.kind}); purge it from every version with 'memdir forget ROOT "
            "--secrets', or keep it with 'memdir secrets allow ROOT'",
        )


def _addresses_model(shown: str, text: str) -> Iterator[Problem]:
    for hit in injection.scan(text):
        said = hit.matched.lstrip("-*> ")
        said = said if len(said) <= 60 else said[:57] + "..."
        yield Problem(
            "injection",
            f"{shown}:{hit.lineno}",
            f"{hit.why} ({hit.kind}: {said!r}); models see it as stored data, not instructions, but "
            "delete it unless it records what someone said",
        )


class _Targets:
    """The outlines of the files `see PATH > ## Heading` references point at, each read and
    parsed once per check (a store may point at one file from many places)."""

    def __init__(self, store: Store, walked: spec.Walk) -> None:
        self.store, self.walked = store, walked
        self.outlines: dict[tuple[str, ...], list[Section] | None] = {}

    def outline(self, mp: MemoryPath) -> list[Section] | None:
        """None when there is no file to look in (missing, a folder, unreadable, not UTF-8):
        the spec check reports those."""
        if mp.parts in self.outlines:
            return self.outlines[mp.parts]
        found: list[Section] | None = None
        if self.walked.exists(self.store, mp) and not self.walked.is_dir(self.store, mp):
            try:
                text = self.walked.text(self.store, mp)
                if "\ufffd" in text:  # decoded with replacements: the strict read decides
                    text = self.store.read_text(mp)
                found = outline(text)
            except ToolError:
                found = None
        self.outlines[mp.parts] = found
        return found


def _section_xrefs(targets: _Targets, path: str, text: str) -> list[Problem]:
    out: list[Problem] = []
    for lineno, line in spec.lines_containing(text, "/memories"):
        for m in _XREF_SECTION.finditer(line):
            target, section = m.group(1), m.group(2).rstrip(".,;:")
            try:
                mp = parse_memory_path(target)
                found = targets.outline(mp)
                if found is None:
                    continue
                wanted = parse_section_path(section)
            except (PathError, ValueError):
                continue
            if not find_sections(found, wanted):
                out.append(
                    Problem(
                        "dangling-xref", f"{path}:{lineno}", f"'see {target} > {section}': no such section"
                    )
                )
    return out


def _spec_problem(v: spec.Violation) -> Problem:
    if v.rule == "frontmatter" and v.message.startswith("frontmatter name "):
        return Problem("name-stem", v.path, v.message)
    return Problem(v.rule if v.rule in ("dangling-xref", "unread") else "spec", v.path, v.message)


def check(
    store: Store,
    *,
    fanout_cap: int = DEFAULT_FANOUT_CAP,
    budget: int = spec.DEFAULT_CORE_BUDGET,
    walked: spec.Walk | None = None,
) -> CheckReport:
    """The store's problems and warnings. One walk, and each file read once, serves every rule:
    the spec rules (`spec.validate`), this module's, and the core budget. `walked` is a walk a
    caller already made (`health` hands over its walk and the texts it read); without one, the
    walk streams: nothing per entry outlives its turn (a kept walk holds about a kilobyte per
    entry: benchmarks/results/2026-12-06-docstring-figures.md, "store/spec.py"), and a
    reference's target is looked up on disk."""
    unread: list[Unread] = []
    seen: Iterable[spec.Seen]
    if walked is None:
        walked = spec.Walk([], unread)
        seen = (spec.Seen(f.parts, f.kind == "dir", f.size, f.mtime_ns) for f in store.scan(unread=unread))
    else:
        seen = walked.seen
    with store.safe.reader() as reader:
        return _check(store, walked, seen, reader, fanout_cap, budget)


def _check(
    store: Store,
    walked: spec.Walk,
    seen: Iterable[spec.Seen],
    reader: Reader,
    fanout_cap: int,
    budget: int,
) -> CheckReport:
    report = CheckReport()
    per_file: list[tuple[MemoryPath, list[spec.Violation]]] = []  # kept unless governed (known at the end)
    governed: set[MemoryPath] = set()
    md_folders: set[tuple[str, ...]] = set()  # parts: a MemoryPath per file is made only once
    targets = _Targets(store, walked)
    entries: dict[tuple[str, ...], int] = defaultdict(int)
    keyed: list[facts.KeyedFact] = []
    core_shares: list[int] = []
    small_core: list[MemoryPath] = []
    n_files = 0
    cites: set[str] | None = set() if ingest_ledger.exists(store) else None
    allowed = store.safe.allowed
    for e in seen:
        entries[e.parts[:-1]] += 1
        if e.parts[-1] == spec.GOVERNED_MARKER:
            g = spec.governing(e)
            if g is not None:
                governed.add(g)
        if e.is_dir or not e.parts[-1].endswith(".md"):
            continue
        n_files += 1
        mp = e.path
        shown = mp.text
        md_folders.add(e.parts[:-1])
        try:
            text = walked.text(store, mp, reader)
        except ToolError as exc:  # hard-linked or vanished
            per_file.append((mp, [spec.unreadable(e, exc)]))
            continue
        found_spec = list(spec.file_violations(store, walked, e, text))
        if found_spec:
            per_file.append((mp, found_spec))
        if len(e.parts) == 1:  # core memory
            if len(text) >= _LARGE_CORE:  # counted now, so it is not read twice
                core_shares.append(spec.core_file_tokens(shown, text))
            else:
                small_core.append(mp)
        if cites is not None:
            cites.update(locators(text))
        report.problems.extend(_section_xrefs(targets, shown, text))
        report.problems.extend(_overlong(shown, text))
        report.problems.extend(_sync_conflicts(shown, text))
        report.problems.extend(_secrets(shown, text, allowed))
        report.warnings.extend(_addresses_model(shown, text))
        if "|" not in text:  # every keyed fact, and every line shaped like one, holds a '|'
            continue
        found = list(facts.keyed_facts(mp.text, text))
        keyed.extend(found)
        parsed = {f.lineno for f in found}
        for lineno, line in spec.lines_containing(text, "|"):
            if lineno not in parsed and facts.looks_keyed(line):
                report.warnings.append(Problem("keyed-format", f"{mp.text}:{lineno}", _KEYED_FORMAT))
    folders = (MemoryPath(parts) for parts in md_folders)
    violations = spec.tree_violations(store, walked, folders, governed, walked.unread)
    violations.extend(v for mp, vs in per_file if not spec.is_governed(mp, governed) for v in vs)
    violations.sort(key=lambda v: (v.path, v.rule))  # `spec.validate`'s order
    report.problems[:0] = [_spec_problem(v) for v in violations]
    add = report.problems.append
    for parts, count in sorted(entries.items()):
        if count > fanout_cap:
            where = "/memories" + "".join("/" + p for p in parts)
            add(
                Problem(
                    "fanout", where, f"{count} entries, over the cap of {fanout_cap}; add a level or merge"
                )
            )
    text = ""
    for mp in small_core:  # counted last: the loaded tokenizer then never meets a large read
        try:
            core_shares.append(spec.core_file_tokens(mp.text, walked.text(store, mp)))
        except ToolError:
            continue  # vanished since: not core memory (as `spec.context` reads it)
    tokens = spec.core_total(core_shares)
    if tokens > budget:
        add(
            Problem(
                "core-budget",
                "/memories",
                f"core memory is {tokens} tokens, over the budget of {budget}; move detail into folders",
            )
        )
    report.problems.extend(supersede(keyed))
    for loc, n in ingest_ledger.reused(store, cites).items() if cites is not None else ():
        add(
            Problem(
                "locator-reuse",
                loc,
                f"[{loc}] was given to {n} different turns (ingested separately); a citation of it "
                "cannot say which one it means: ingest a conversation that carries its own locators "
                "into a store of its own, or renumber its sessions",
            )
        )
    report.problems.sort(key=lambda p: (p.rule, p.path))
    report.counts = {
        "files": n_files,
        "keyed_facts": len(keyed),
        "live_keys": len(facts.live_by_key(keyed)),
        "core_tokens": tokens,
    }
    return report


def supersede(keyed: list[facts.KeyedFact]) -> list[Problem]:
    """Supersede integrity across the whole store (docs/study.md, design rule 3): one live line per key, and
    no live value that began before a superseded value of the same key ended."""
    out: list[Problem] = []
    live = facts.live_by_key(keyed)
    for key, lines in sorted(live.items()):
        if len(lines) > 1:
            where = ", ".join(f"{f.where} ({f.value!r} since {f.since})" for f in lines)
            out.append(
                Problem(
                    "supersede",
                    lines[0].where,
                    f"{len(lines)} live values for '{key[0]} | {key[1]}': {where}; strike the stale one "
                    "through with its end date",
                )
            )
    for f in keyed:
        if f.live or f.until in (None, "unknown"):
            continue
        for cur in live.get(f.key, []):
            if cur.since != "unknown" and f.until is not None and cur.since < f.until:
                out.append(
                    Problem(
                        "supersede",
                        cur.where,
                        f"live '{cur.subject} | {cur.attribute}' began {cur.since}, before the superseded "
                        f"value at {f.where} ended ({f.until}); the dates disagree",
                    )
                )
    return out


class MissingFact(TypedDict):
    path: str
    line: int
    text: str
    locators: list[str]


class FactDiffRecord(TypedDict):
    """`diff --facts` as JSON: the CLI prints it, a reorganizing variant's checks carry it (with
    `missing_count` when the list was cut short)."""

    ok: bool
    old_facts: int
    new_facts: int
    kept_in_place: int
    moved: int
    missing: list[MissingFact]
    unread: list[str]
    missing_count: NotRequired[int]


@dataclass
class FactDiff:
    old_facts: int = 0
    new_facts: int = 0
    kept_in_place: int = 0
    moved: int = 0
    missing: list[facts.FactLine] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # entries of OLD no walk reads: unchecked

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unread

    def as_json(self) -> FactDiffRecord:
        return {
            "ok": self.ok,
            "old_facts": self.old_facts,
            "new_facts": self.new_facts,
            "kept_in_place": self.kept_in_place,
            "moved": self.moved,
            "missing": [
                {"path": f.path, "line": f.lineno, "text": f.text, "locators": list(f.locators)}
                for f in self.missing
            ],
            "unread": self.unread,
        }


def _all_facts(store: Store, unread: list[Unread] | None = None) -> list[facts.FactLine]:
    found: list[facts.FactLine] = []
    for e in store.files(unread=unread):
        found.extend(facts.fact_lines(e.path.text, store.read_bytes(e.path).decode("utf-8", "replace")))
    return found


def diff_facts(old: Store, new: Store) -> FactDiff:
    """Every fact line of `old` must be in `new`: same locators, same normalized words (a set
    comparison: two identical fact lines in OLD are one fact). An entry of OLD no walk reads
    (a folder too deep, a name not UTF-8) fails the check: its facts cannot be compared."""
    skipped: list[Unread] = []
    old_f, new_f = _all_facts(old, skipped), _all_facts(new)
    where: dict[tuple[tuple[str, ...], str], set[str]] = defaultdict(set)
    for f in new_f:
        where[f.identity].add(f.path)
    d = FactDiff(len(old_f), len(new_f), unread=[str(u) for u in skipped])
    for f in old_f:
        paths = where.get(f.identity)
        if not paths:
            d.missing.append(f)
        elif f.path in paths:
            d.kept_in_place += 1
        else:
            d.moved += 1
    return d
