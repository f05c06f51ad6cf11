"""Findings from the store's content: B1's most confusable sibling pair, B3's leaked units with
the group each sits nearer to, near-duplicate units and over-long sections.

All read the combined tree and the TF-IDF rows of the taxonomy panel (docs/metrics.md, B1-B4):
B1 and B3 are `taxonomy.b1` and `taxonomy.b2_b3` themselves, so the pair and the leaked units
are the ones `memdir stats` reports; this module adds where each leaked unit would fit better
and the pairs of units that say nearly the same. Index files (`MEMORY.md`) are signage, not
content: they are never reported as leaked, duplicated or over-long.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import sparse

from memdir.analytics import taxonomy
from memdir.analytics.health_cache import FileParse, HealthCache, b1_pair
from memdir.analytics.health_types import (
    Finding,
    FindingDetail,
    LabeledRef,
    Ref,
    Thresholds,
    file_of,
    pair_key,
    ref,
    shown,
)
from memdir.analytics.tree import Node, Parts, Tree
from memdir.store.frontmatter import MEMORY_INDEX

DUP_CAP = 100  # near-duplicate pairs reported, the most alike first (all are counted)
_ROW_CHUNK = 1000
_EPS = 1e-12


class _Refs:
    """Refs of nodes, each file's lines looked up once."""

    def __init__(self, parses: dict[Parts, FileParse]) -> None:
        self.lines = {"/memories/" + "/".join(p): fp.lines for p, fp in parses.items()}

    def __call__(self, node: Node) -> Ref:
        return ref(node, self.lines.get(file_of(node).where, []))


def _is_index(node: Node) -> bool:
    return file_of(node).name == MEMORY_INDEX


def findings(
    tree: Tree, cache: HealthCache, limits: Thresholds, timings: dict[str, float]
) -> tuple[list[Finding], dict[str, int]]:
    refs = _Refs(cache.parses)
    out: list[Finding] = []
    counts: dict[str, int] = {}
    t = time.perf_counter()
    pair, dist = b1_pair(tree, cache)
    out.extend(_confusable(tree, pair, dist, limits.confusable_distance, refs))
    t = _lap(timings, "b1", t)
    units = [u for u in tree.units if len(u.text) >= taxonomy.MIN_UNIT_CHARS]
    counts["units_measured"] = len(units)
    x = cache.vectorize([u.text for u in units]) if len(units) >= 2 else None
    t = _lap(timings, "vectors", t)
    if x is not None:
        panel = taxonomy.Panel()
        taxonomy.b2_b3(units, x, panel)
        out.extend(_leaked(units, x, panel, refs))
        counts["leaked_total"] = int(panel.details.get("b3_leaked_count", 0))
        t = _lap(timings, "b3", t)
        dups, counts["near_duplicate_pairs"] = _duplicates(units, x, limits.dup_cosine, refs)
        out.extend(dups)
        t = _lap(timings, "near-duplicates", t)
    out.extend(_over_long(tree, limits.max_section_chars, refs))
    _lap(timings, "over-long", t)
    return out, counts


def _lap(timings: dict[str, float], name: str, t0: float) -> float:
    now = time.perf_counter()
    timings[name] = now - t0
    return now


def _pair_key(kind: str, a: Ref, b: Ref) -> str:
    return pair_key(kind, str(a["ref"]), str(b["ref"]))


def _others(path: str, *paths: str) -> tuple[str, ...]:
    return tuple(sorted(set(paths) - {path}))


def _confusable(
    tree: Tree, pair: list[str] | None, dist: float | None, limit: float, refs: _Refs
) -> list[Finding]:
    if not pair or dist is None or float(dist) > limit:
        return []
    at = {n.where: n for n in tree.nodes}
    a, b = at[pair[0]], at[pair[1]]
    ra: LabeledRef = {**refs(a), "label": a.label}
    rb: LabeledRef = {**refs(b), "label": b.label}
    parent = refs(a.parent)["ref"] if a.parent is not None else "/memories"
    if a.kind == "section":
        action = "retitle one of the two headings so each says what its section holds, or merge the two"
    else:
        action = "rename one, or rewrite its description, so its label says what sets it apart"
    return [
        Finding(
            "confusable",
            ra["path"],
            f"{shown(ra)} and {shown(rb)} are siblings with nearly the same label "
            f"({a.label!r}, {b.label!r}; distance {float(dist):.2f})",
            action,
            _pair_key("confusable", ra, rb),
            {"a": ra, "b": rb, "parent": parent, "distance": float(dist)},
            _others(ra["path"], rb["path"]),
        )
    ]


def _groups(units: list[Node], x: sparse.csr_matrix) -> tuple[np.ndarray, list[Node], sparse.csr_matrix]:
    """Each unit's group (its parent, numbered as `taxonomy.b2_b3` numbers them), the groups'
    nodes, and their row sums (a centroid up to its scale, which a cosine does not see)."""
    ids: dict[int, int] = {}
    owners: list[Node] = []
    gid = np.empty(len(units), dtype=np.int64)
    for i, u in enumerate(units):
        parent = u.parent
        assert parent is not None  # a unit is a file or a section: never the root
        if id(parent) not in ids:
            ids[id(parent)] = len(owners)
            owners.append(parent)
        gid[i] = ids[id(parent)]
    ind = sparse.csr_matrix(
        (np.ones(len(units)), (gid, np.arange(len(units)))), shape=(len(owners), len(units))
    )
    return gid, owners, sparse.csr_matrix(ind @ x)


def _leaked(units: list[Node], x: sparse.csr_matrix, panel: taxonomy.Panel, refs: _Refs) -> list[Finding]:
    """B3's leaked units (the first `leakage.LIST_CAP` in tree order), each with the group it
    sits nearer to: the other group whose centroid has the highest cosine with it."""
    leaked = set(panel.details.get("b3_leaked", []))
    rows = [i for i, u in enumerate(units) if u.where in leaked and not _is_index(u)]
    if not rows:
        return []
    gid, owners, sums = _groups(units, x)
    s_norm = np.sqrt(np.asarray(sums.multiply(sums).sum(axis=1)).ravel())
    sub = sparse.csr_matrix(x[rows])
    x_norm = np.sqrt(np.asarray(sub.multiply(sub).sum(axis=1)).ravel())
    dots = (sub @ sums.T).toarray()
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.where(s_norm[None, :] > _EPS, dots / (x_norm[:, None] * s_norm[None, :]), 0.0)
    out: list[Finding] = []
    for k, i in enumerate(rows):
        own = float(cos[k, gid[i]])
        cos[k, gid[i]] = -np.inf
        near = int(np.argmax(cos[k]))
        u, r = units[i], refs(units[i])
        mine, there = refs(owners[int(gid[i])]), refs(owners[near])
        detail: FindingDetail = {
            "unit": r,
            "own_group": mine,
            "nearer_group": there,
            "cos_own": own,
            "cos_nearer": float(cos[k, near]),
        }
        out.append(
            Finding(
                "leaked",
                r["path"],
                f"{shown(r)} is nearer to {there['ref']} (cosine {float(cos[k, near]):.2f}) than to its own "
                f"group {mine['ref']} ({own:.2f})",
                f"move it into {there['ref']}, or reword it so it belongs with {mine['ref']}"
                if u.kind == "file" or owners[near].kind != "dir"
                else f"move it to a file in {there['ref']}, or reword it so it belongs with {mine['ref']}",
                f"leaked:{r['ref']}",
                detail,
                _others(r["path"], there["path"]),
            )
        )
    return out


def _duplicates(
    units: list[Node], x: sparse.csr_matrix, threshold: float, refs: _Refs
) -> tuple[list[Finding], int]:
    """Pairs of content units at TF-IDF cosine >= `threshold`, the most alike first, at most
    `DUP_CAP`; and how many pairs there were."""
    keep = np.array([i for i, u in enumerate(units) if not _is_index(u)], dtype=np.int64)
    if len(keep) < 2:
        return [], 0
    xs = x[keep]
    pairs: list[tuple[float, int, int]] = []
    for lo in range(0, len(keep), _ROW_CHUNK):
        sims = (xs[lo : lo + _ROW_CHUNK] @ xs.T).toarray()
        r, c = np.nonzero(sims >= threshold - _EPS)
        upper = c > r + lo
        pairs.extend(
            (float(sims[a, b]), int(keep[a + lo]), int(keep[b]))
            for a, b in zip(r[upper], c[upper], strict=True)
        )
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    out: list[Finding] = []
    for cosine, i, j in pairs[:DUP_CAP]:
        ra, rb = refs(units[i]), refs(units[j])
        out.append(
            Finding(
                "near-duplicate",
                ra["path"],
                f"{shown(ra)} and {shown(rb)} say nearly the same (cosine {cosine:.2f})",
                "merge them: keep every fact line in one place, and point the other at it with 'see PATH'",
                _pair_key("near-duplicate", ra, rb),
                {"a": ra, "b": rb, "cosine": cosine},
                _others(ra["path"], rb["path"]),
            )
        )
    return out, len(pairs)


def _over_long(tree: Tree, limit: int, refs: _Refs) -> list[Finding]:
    out: list[Finding] = []
    for u in tree.units:
        if len(u.text) <= limit or _is_index(u):
            continue
        r = refs(u)
        if u.kind == "section":
            action = (
                f"split it under subheadings (by attribute, person or date), each under {limit} characters"
            )
        else:
            action = f"give it headings that split it into sections of under {limit} characters"
        out.append(
            Finding(
                "over-long",
                r["path"],
                f"{shown(r)} is {len(u.text)} characters, over {limit}",
                action,
                f"over-long:{r['ref']}",
                {
                    "path": r["path"],
                    "heading_path": r["heading_path"],
                    "line": r["line"],
                    "ref": r["ref"],
                    "chars": len(u.text),
                    "limit": limit,
                },
            )
        )
    return out
