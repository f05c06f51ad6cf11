"""Dated supersede across a merge: a single-valued key whose value both sides changed.

A merged file can hold two live values of one key (each side superseded the old value with a
new one) and two past lines of one value (each side struck it through with its own end date).
Here every value of such a key is put on one timeline by the date it began: each value ends
when the next begins, the latest stays live, and every value keeps its dates and locators
(docs/conventions.md, "Keyed facts and dated supersede"). The key's lines are written where its
first line stood, oldest first; a key with one live value and no value given two ends is left
as it is, so a file only one side changed never moves.
"""

from __future__ import annotations

from collections import defaultdict

from memdir.conventions import KeyedFact, keyed_line, parse_keyed


def _norm(value: str) -> str:
    return " ".join(value.split()).casefold()


def _entry(f: KeyedFact) -> tuple[str, str, tuple[str, ...]]:
    """One value of a key: when it began, what it was, where it was said."""
    return (f.since, _norm(f.value), f.locators)


def _began(since: str) -> str:
    return "" if since == "unknown" else since  # a value with no known start sorts first


def settle(lines: list[str]) -> tuple[list[str], list[str]]:
    """`lines` with each key that holds two live values, or one value with two ends, on one timeline;
    and those keys, as `subject | attribute`."""
    found: dict[tuple[str, str], list[tuple[int, KeyedFact]]] = defaultdict(list)
    for i, line in enumerate(lines):
        if "|" in line and "[" in line:
            f = parse_keyed("", i + 1, line)
            if f is not None:
                found[f.key].append((i, f))
    rewrite: dict[int, list[str]] = {}
    drop: set[int] = set()
    settled: list[str] = []
    for held in found.values():
        live = [f for _, f in held if f.live]
        ends: dict[tuple[str, str, tuple[str, ...]], set[str | None]] = defaultdict(set)
        for _, f in held:
            ends[_entry(f)].add(f.until)
        if len(live) < 2 and all(len(e) == 1 for e in ends.values()):
            continue  # one live value, no value ended twice: as either side left it
        first: dict[tuple[str, str, tuple[str, ...]], KeyedFact] = {}
        for _, f in held:
            first.setdefault(_entry(f), f)
        timeline = sorted(first.values(), key=lambda f: (_began(f.since), _norm(f.value)))
        out = []
        for n, f in enumerate(timeline):
            until = timeline[n + 1].since if n + 1 < len(timeline) else None
            if until is None and not any(g.live for _, g in held):
                until = f.until  # every value was past already: the newest keeps its end
            out.append(keyed_line(f.subject, f.attribute, f.value, f.since, until, f.locators))
        rewrite[held[0][0]] = out
        drop.update(i for i, _ in held[1:])
        settled.append(f"{timeline[-1].subject} | {timeline[-1].attribute}")
    if not rewrite:
        return lines, []
    merged: list[str] = []
    for i, line in enumerate(lines):
        if i in rewrite:
            merged.extend(rewrite[i])
        elif i not in drop:
            merged.append(line)
    return merged, sorted(settled)
