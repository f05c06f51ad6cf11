"""`health`: what is wrong with a store, as findings an agent (or the offline curator) can act on.

Read-only. Each finding names its path, says what is wrong and what to do, and carries the
structured detail needed to do it mechanically. Its `key` is a stable identity (kind, paths,
heading paths, fact keys; no line numbers), so two reports can be compared: the findings an
episode introduced are those of the report after it whose keys the report before it lacks
(`introduced`). Definitions, thresholds and their reasons: docs/health.md.

The store-wide checks are `integrity.check`'s (dangling references, fanout, core budget,
supersede integrity: docs/study.md, design rules 2 and 3); this module only turns its problems
into findings with their detail. The content checks read the combined tree (`analytics/tree.py`)
with the TF-IDF cosine of the taxonomy panel (`taxonomy.py`, `leakage.py`), so B1's pair and
B3's leaked units are the ones `memdir stats` counts.
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from memdir.analytics import health_content, health_facts, integrity
from memdir.analytics.health_cache import HealthCache, assemble, read_listing
from memdir.analytics.health_types import (
    CONFUSABLE_DISTANCE,
    DUP_COSINE,
    KINDS,
    MAX_SECTION_CHARS,
    PAIR_KINDS,
    Finding,
    Thresholds,
    pair_key,
)
from memdir.jsontypes import JsonObject, record_json
from memdir.store import spec
from memdir.store.store import Store

__all__ = [
    "CONFUSABLE_DISTANCE",
    "DUP_COSINE",
    "KINDS",
    "MAX_SECTION_CHARS",
    "Finding",
    "HealthReport",
    "Thresholds",
    "health",
    "introduced",
    "moved_key",
    "path_mover",
]

_RANK = {k: i for i, k in enumerate(KINDS)}


@dataclass
class HealthReport:
    """Findings, most actionable first (by `KINDS`, then path, then key), and what they cost.

    `counts`: findings per kind, plus `files`, `units` and `units_measured`; `timings`: seconds
    per phase; `reparsed`: files whose tree was built afresh; `reused`: True when the store had
    not changed since the last call on the same store object, so its findings were returned."""

    findings: list[Finding]
    counts: dict[str, int]
    thresholds: dict[str, float]
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    reparsed: int = 0
    reused: bool = False

    @property
    def keys(self) -> set[str]:
        return {f.key for f in self.findings}

    def within(self, prefix: str) -> list[Finding]:
        return [f for f in self.findings if f.within(prefix)]

    def as_json(self) -> JsonObject:
        return {
            "findings": [record_json(f.as_dict()) for f in self.findings],
            "counts": self.counts,
            "thresholds": self.thresholds,
            "seconds": self.seconds,
            "timings": self.timings,
            "reparsed": self.reparsed,
            "reused": self.reused,
        }


def introduced(
    before: HealthReport, after: HealthReport, moves: Mapping[str, str] | None = None
) -> list[Finding]:
    """The findings of `after` that `before` did not have (by key), in `after`'s order.

    `moves` (first path -> current path, `store/moves.py`) are the renames made in between: a
    finding of `before` about a file that only moved is the same finding under its new path,
    not a new one. B1's confusable pair is new only when it is more confusable than before's."""
    if moves:
        move = path_mover(moves)
        old = {moved_key(f, move) for f in before.findings}
    else:
        old = before.keys
    return [f for f in after.findings if f.key not in old and not _no_worse(f, before)]


def _no_worse(finding: Finding, before: HealthReport) -> bool:
    """B1's pair is the store's single most confusable pair, and pairs tie (templated labels
    sit at distance 0): a new tied pair may take its place without the store getting any
    worse. So it counts as introduced only when the least label distance fell below before's."""
    if finding.kind != "confusable":
        return False
    prior = [f.detail["distance"] for f in before.findings if f.kind == "confusable"]
    return bool(prior) and min(prior) <= finding.detail["distance"]


def path_mover(moves: Mapping[str, str]) -> Callable[[str], str]:
    """A function putting every moved path in a text at its new place (a moved folder's
    entries with it); a path is matched whole, never as the front of a longer name."""
    alternatives = "|".join(re.escape(p) for p in sorted(moves, key=len, reverse=True))
    pattern = re.compile(f"(?:{alternatives})(?=$|[^\\w.-])")
    return lambda text: pattern.sub(lambda m: moves[m.group(0)], text)


def moved_key(finding: Finding, move: Callable[[str], str]) -> str:
    """`finding`'s key with its paths moved. A pair's two refs are sorted in its key, so a
    pair is re-keyed from its refs, which a move may reorder."""
    a, b = finding.detail.get("a"), finding.detail.get("b")
    if finding.kind in PAIR_KINDS and isinstance(a, dict) and isinstance(b, dict):
        return pair_key(finding.kind, move(str(a["ref"])), move(str(b["ref"])))
    return move(finding.key)


_CACHES: weakref.WeakKeyDictionary[Store, HealthCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def _cache(store: Store) -> HealthCache:
    with _CACHES_LOCK:
        cache = _CACHES.get(store)
        if cache is None:
            cache = _CACHES[store] = HealthCache()
        return cache


def health(
    store: Store,
    *,
    fanout_cap: int = integrity.DEFAULT_FANOUT_CAP,
    core_budget: int = spec.DEFAULT_CORE_BUDGET,
    max_section_chars: int = MAX_SECTION_CHARS,
    dup_threshold: float = DUP_COSINE,
    confusable_distance: float = CONFUSABLE_DISTANCE,
    incremental: bool = True,
) -> HealthReport:
    """The store's findings. With `incremental` (the default), file parses and the last result
    are kept per store object between calls (`health_cache`); without it nothing is kept."""
    limits = Thresholds(fanout_cap, core_budget, max_section_chars, dup_threshold, confusable_distance)
    cache = _cache(store) if incremental else HealthCache()
    with cache.lock:
        return _run(store, limits, cache)


def _run(store: Store, limits: Thresholds, cache: HealthCache) -> HealthReport:
    start = time.perf_counter()
    timings: dict[str, float] = {}

    def lap(name: str, t0: float) -> float:
        now = time.perf_counter()
        timings[name] = now - t0
        return now

    listing = read_listing(store)
    t = lap("read", start)
    parses, fresh = cache.refresh(listing)
    t = lap("parse", t)
    settings = limits.as_tuple()
    if cache.unchanged(listing, settings, fresh):
        last: HealthReport = cache.last_result
        lap("total", start)
        return HealthReport(
            list(last.findings), dict(last.counts), dict(last.thresholds), timings["total"], timings, 0, True
        )
    report = integrity.check(
        store, fanout_cap=limits.fanout_cap, budget=limits.core_budget, walked=listing.walked
    )
    t = lap("check", t)
    snap = listing.snapshot
    tree = assemble(snap, parses)
    t = lap("tree", t)
    findings = health_facts.from_check(report, parses, listing, tree, limits)
    t = lap("check findings", t)
    content, counts = health_content.findings(tree, cache, limits, timings)
    findings.extend(content)
    findings.sort(key=lambda f: (_RANK[f.kind], f.path, f.key))
    counts = {
        **{k: 0 for k in KINDS},
        **_count(findings),
        "files": len(snap.files),
        "units": len(tree.units),
        **counts,
    }
    result = HealthReport(findings, counts, limits.as_dict(), 0.0, timings, fresh, False)
    lap("total", start)
    result.seconds = timings["total"]
    cache.remember(listing, settings, result)
    return result


def _count(findings: Iterable[Finding]) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in findings:
        out[f.kind] = out.get(f.kind, 0) + 1
    return out
