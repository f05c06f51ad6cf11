"""Findings from `integrity.check`'s problems: dangling references, fanout, core budget and
supersede integrity, each given the detail needed to act on it.

`check` decides what is wrong (its rules, docs/metrics.md, Check); this module only reads the
problems it reports (a problem names `path` or `path:line`, and its message the reference) and
adds what acting needs: the line as written, the paths a broken reference may have meant, a
folder's entries, core memory's files by tokens, a stale keyed fact's live and past lines with
the struck-through line that would retire it (docs/conventions.md, Keyed facts and dated
supersede).
"""

from __future__ import annotations

import re

from memdir.analytics.facts import KeyedFact, live_by_key
from memdir.analytics.health_cache import FileParse, Listing
from memdir.analytics.health_types import (
    CoreFile,
    FactLine,
    Finding,
    FindingDetail,
    Thresholds,
    file_of,
    ref,
)
from memdir.analytics.integrity import CheckReport, Problem
from memdir.analytics.tree import Parts, Tree
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.tokens import count_tokens

CANDIDATES_CAP = 10  # paths or headings a dangling reference may have meant, listed in its detail
CHILDREN_CAP = 200  # entries of a folder over the cap, listed in its detail (all are counted)
_MISSING_FILE = re.compile(r"^'see (?P<target>.+)' points at nothing$")
_MISSING_SECTION = re.compile(r"^'see (?P<target>\S+) > (?P<section>.+)': no such section$")
_LEAD = re.compile(r"^(\s*[-*+]\s+)")


def from_check(
    report: CheckReport, parses: dict[Parts, FileParse], listing: Listing, tree: Tree, limits: Thresholds
) -> list[Finding]:
    out: list[Finding] = []
    by_rule: dict[str, list[Problem]] = {}
    for p in report.problems:
        by_rule.setdefault(p.rule, []).append(p)
    out.extend(_dangling(by_rule.get("dangling-xref", []), parses, listing, tree))
    out.extend(_fanout(p, listing, limits.fanout_cap) for p in by_rule.get("fanout", []))
    if by_rule.get("core-budget"):
        out.append(_core(report, parses, limits.core_budget))
    out.extend(_supersede(by_rule.get("supersede", []), parses))
    return out


def _split_where(where: str) -> tuple[str, int]:
    """`path:line` as check writes a reference's place; 0 when it names no line."""
    path, _, line = where.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else (where, 0)


def _parts(path: str) -> Parts:
    return tuple(p for p in path.removeprefix("/memories").split("/") if p)


def _dangling(
    problems: list[Problem], parses: dict[Parts, FileParse], listing: Listing, tree: Tree
) -> list[Finding]:
    out: list[Finding] = []
    seen: dict[str, int] = {}
    for p in problems:
        path, line = _split_where(p.path)
        m_file, m_sec = _MISSING_FILE.match(p.message), _MISSING_SECTION.match(p.message)
        if m_sec:
            target, section = m_sec["target"], m_sec["section"]
            cands = _headings_of(tree, target, parses)
            what = f"'see {target} > {section}': {target} has no such section"
            if cands:
                action = (
                    f"point it at one of {target}'s headings ({'; '.join(cands[:3])}) or drop ' > {section}'"
                )
            else:
                action = f"drop ' > {section}' from the reference ({target} has no headings)"
        elif m_file:
            target, section = m_file["target"], None
            cands = _same_name(target, listing)
            what = f"'see {target}' points at nothing"
            if len(cands) == 1:
                action = f"change it to 'see {cands[0]}' (the only entry of that name)"
            elif cands:
                action = f"point it at one of {', '.join(cands[:3])}, or remove it"
            else:
                action = f"remove the reference, or create {target}"
        else:  # a message check writes in a form this module does not know: report it as is
            target, section, cands, what, action = "", None, [], p.message, "fix or remove the reference"
        ident = f"{path}:{target}" + (f" > {section}" if section else "")
        seen[ident] = seen.get(ident, 0) + 1
        key = f"dangling-ref:{ident}" + (f"#{seen[ident]}" if seen[ident] > 1 else "")
        lines = parses[_parts(path)].lines if _parts(path) in parses else []
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        detail: FindingDetail = {
            "line": line,
            "text": text,
            "target": target,
            "section": section,
            "candidates": cands,
        }
        out.append(Finding("dangling-ref", path, f"{p.path}: {what}", action, key, detail))
    return out


def _same_name(target: str, listing: Listing) -> list[str]:
    """Entries elsewhere with the missing target's name: where a moved file may have gone."""
    name = target.rstrip("/").rsplit("/", 1)[-1]
    if not name or name == MEMORY_INDEX:
        return []
    found = sorted("/memories/" + "/".join(parts) for parts, _, _, _ in listing.entries if parts[-1] == name)
    return found[:CANDIDATES_CAP]


def _headings_of(tree: Tree, target: str, parses: dict[Parts, FileParse]) -> list[str]:
    fp = parses.get(_parts(target))
    if fp is None:
        return []
    return [
        ref(n, fp.lines)["heading_path"] for n in tree.nodes if n.kind == "section" and file_of(n) is fp.node
    ][:CANDIDATES_CAP]


def _fanout(p: Problem, listing: Listing, cap: int) -> Finding:
    parts = _parts(p.path)
    children = sorted(
        q[-1] + ("/" if is_dir else "") for q, is_dir, _, _ in listing.entries if q[:-1] == parts and q
    )
    detail: FindingDetail = {"entries": len(children), "cap": cap, "children": children[:CHILDREN_CAP]}
    return Finding(
        "fanout",
        p.path,
        f"{p.path} holds {len(children)} entries, over the cap of {cap}",
        f"split it: move its entries into subfolders (each with a MEMORY.md), none holding more than {cap}",
        f"fanout:{p.path}",
        detail,
    )


def _core(report: CheckReport, parses: dict[Parts, FileParse], budget: int) -> Finding:
    sizes = sorted(
        ((-count_tokens(fp.text), "/memories/" + parts[0]) for parts, fp in parses.items() if len(parts) == 1)
    )
    files: list[CoreFile] = [{"path": path, "tokens": -neg} for neg, path in sizes]
    tokens = int(report.counts.get("core_tokens", 0))
    biggest = f"; the largest is {sizes[0][1]} ({-sizes[0][0]} tokens)" if sizes else ""
    return Finding(
        "core-budget",
        "/memories",
        f"core memory (the files in /memories itself, always loaded) is {tokens} tokens, "
        f"over the budget of {budget}",
        f"move detail out of the root files into folders, keeping a line that points to it{biggest}",
        "core-budget:/memories",
        {"tokens": tokens, "budget": budget, "files": files},
        tuple(path for _, path in sizes),
    )


def _fact(f: KeyedFact, lines: list[str]) -> FactLine:
    text = lines[f.lineno - 1] if 0 < f.lineno <= len(lines) else ""
    return {
        "path": f.path,
        "line": f.lineno,
        "value": f.value,
        "since": f.since,
        "until": f.until,
        "text": text,
    }


def _supersede(problems: list[Problem], parses: dict[Parts, FileParse]) -> list[Finding]:
    """One `stale-live` finding per live line that is not the key's current one; one
    `supersede-dates` finding per key whose live line began before a past value ended."""
    keyed = [f for fp in parses.values() for f in fp.keyed]
    at = {f.where: f for f in keyed}
    live = live_by_key(keyed)
    past: dict[tuple[str, str], list[KeyedFact]] = {}
    for f in keyed:
        if not f.live:
            past.setdefault(f.key, []).append(f)
    lines = {"/memories/" + "/".join(parts): fp.lines for parts, fp in parses.items()}
    out: list[Finding] = []
    done: set[tuple[str, tuple[str, str]]] = set()
    for p in problems:
        hit = at.get(p.path)  # check names a live line of the key at fault
        if hit is None:
            continue
        form = "stale" if len(live.get(hit.key, [])) > 1 else "dates"
        if (form, hit.key) in done:
            continue
        done.add((form, hit.key))
        if form == "stale":
            out.extend(_stale(live[hit.key], past.get(hit.key, []), lines))
        else:
            out.append(_dates(hit, past.get(hit.key, []), lines))
    return out


def _norm(value: str) -> str:
    return " ".join(value.split()).casefold()


def _current(lives: list[KeyedFact], retired: set[str]) -> KeyedFact:
    """The live line that stands: one whose value no past line retired, latest `since` first
    (an `unknown` date is the oldest), the first in path order on a tie."""
    pool = [f for f in lives if _norm(f.value) not in retired] or lives
    order = sorted(pool, key=lambda f: (f.path, f.lineno))
    return max(order, key=lambda f: "" if f.since == "unknown" else f.since)


def _stale(lives: list[KeyedFact], past: list[KeyedFact], lines: dict[str, list[str]]) -> list[Finding]:
    retired = {_norm(f.value): f for f in past}
    cur = _current(lives, set(retired))
    subject, attribute = cur.subject, cur.attribute
    out: list[Finding] = []
    for f in sorted(lives, key=lambda f: (f.path, f.lineno)):
        if f is cur:
            continue
        old = retired.get(_norm(f.value))
        if _norm(f.value) == _norm(cur.value):
            reason, until = "same-value", None
        elif old is not None:
            reason, until = "superseded-elsewhere", old.until
        elif f.since == cur.since:
            reason, until = "same-date", None
        else:
            reason, until = "older", cur.since
        text = lines[f.path][f.lineno - 1]
        replacement = None if until is None else _struck(text, f, until)
        if reason == "same-value":
            action = f"keep one live line: delete this copy (the same value is live at {cur.where})"
        elif replacement is None:
            action = "decide which value is current and strike the other through with its end date"
        else:
            action = f"replace line {f.lineno} with: {replacement.strip()}"
        why = {
            "superseded-elsewhere": f"struck through at {old.where if old else ''} but live here",
            "older": f"live here since {f.since}, while {cur.where} has {cur.value!r} since {cur.since}",
            "same-date": f"live here and as {cur.value!r} at {cur.where}, both since {cur.since}",
            "same-value": f"live twice: here and at {cur.where}",
        }[reason]
        detail: FindingDetail = {
            "subject": subject,
            "attribute": attribute,
            "reason": reason,
            "stale": _fact(f, lines[f.path]),
            "current": _fact(cur, lines[cur.path]),
            "superseded": [_fact(p, lines[p.path]) for p in past],
            "replacement": replacement,
        }
        key = f"stale-live:{f.key[0]} | {f.key[1]}:{f.path}:{_norm(f.value)}"
        related = tuple(sorted({cur.path, *(p.path for p in past)} - {f.path}))
        message = f"{f.where}: '{subject} | {attribute}: {f.value}' is {why}"
        out.append(Finding("stale-live", f.path, message, action, key, detail, related))
    return out


def _struck(text: str, f: KeyedFact, until: str) -> str:
    """The past-value line that retires live line `text` (docs/conventions.md, dated supersede)."""
    m = _LEAD.match(text)
    lead = m.group(1) if m else "- "
    locs = ", ".join(f.locators)
    return f"{lead}~~{f.subject} | {f.attribute}: {f.value}~~ ({f.since} until {until}) [{locs}]"


def _dates(cur: KeyedFact, past: list[KeyedFact], lines: dict[str, list[str]]) -> Finding:
    late = [
        p
        for p in past
        if p.until not in (None, "unknown") and cur.since != "unknown" and cur.since < str(p.until)
    ]
    first = late[0] if late else None
    ended = f"{first.where} ended {first.until}" if first else "a past value ended later"
    detail: FindingDetail = {
        "subject": cur.subject,
        "attribute": cur.attribute,
        "live": _fact(cur, lines[cur.path]),
        "superseded": [_fact(p, lines[p.path]) for p in late],
    }
    return Finding(
        "supersede-dates",
        cur.path,
        f"{cur.where}: '{cur.subject} | {cur.attribute}' is live since {cur.since}, "
        f"but the past value at {ended}",
        "correct the dates: a live value begins when the past one ends",
        f"supersede-dates:{cur.key[0]} | {cur.key[1]}:{cur.path}",
        detail,
        tuple(sorted({p.path for p in late} - {cur.path})),
    )
