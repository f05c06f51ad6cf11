"""The taxonomy-contract panel B1-B4 (docs/metrics.md), computed exactly and deterministically.

Text similarity is TF-IDF cosine with scikit-learn's `TfidfVectorizer()` at its defaults, as
analytics/tfidf.py reproduces it bit for bit (lower-casing, tokens of 2+ word characters,
smoothed idf, l2-normalized rows), so the cosine of two rows is their dot product; a text
with no token is a zero row whose cosine with anything is 0. Two fits: B1 fits on the labels
it compares; B2-B4 fit on the measured units' texts.
Measured units are content units (see `tree`) of at least 40 characters; shorter ones are left
out everywhere below, also as B1 siblings.

- B1 (sibling label distinctness): for every internal node with two or more measured children
  (a child that is a unit under 40 characters is not measured; folders, files with headings and
  sections with subsections always are), the mean of 1 - cos(label_a, label_b) over its child
  pairs; `b1_mean` averages those node means, `b1_min` is the smallest pair value in the store
  (the most confusable pair). A label is `stem + description` for a file, `name + description
  of its MEMORY.md` for a folder, the heading text for a section.
- B2 (sibling content cohesion): the mean cosine over all pairs of measured units that share a
  parent, divided by the mean cosine over all pairs that do not. The paper samples random
  cross-parent pairs; we take the mean over every cross-parent pair, which is that estimate's
  expectation, with no sampling noise (sums of pair cosines come from group sums:
  sum_{i<j} cos = (|sum v|^2 - sum |v|^2) / 2).
- B3 (scope leakage): the fraction of measured units whose cosine to another parent group's
  centroid (any other group in the store) is strictly greater than to their own group's
  centroid, the unit itself included in its own (the paper's formula); `b3_loo` leaves it out.
  Both in `leakage`.
- B4 (tree-wide proximity): Spearman correlation, over unit pairs, between tree distance (edges
  from one unit to the other through their lowest common ancestor) and content distance
  1 - cos. Every pair when there are at most 2,000 measured units; beyond that every pair among
  2,000 units drawn without replacement by `numpy.random.default_rng(42)`. `b4_pairs` says how
  many pairs were used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from memdir.analytics import leakage, tfidf
from memdir.analytics.tree import Metrics, Node, PanelDetails, Tree

MIN_UNIT_CHARS = 40
B4_MAX_UNITS = 2000
SEED = 42
_ROW_CHUNK = 1000
_SMALL_GROUP = 64  # groups up to this size go through one vectorized pass over all pairs
_EPS = 1e-12


@dataclass
class Panel:
    values: Metrics = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    details: PanelDetails = field(default_factory=lambda: PanelDetails())


def vectorize(texts: list[str]) -> sparse.csr_matrix | None:
    """TF-IDF rows for `texts` (`TfidfVectorizer()` at its defaults, analytics/tfidf.py); None
    when the texts share no token at all (empty vocabulary)."""
    return tfidf.vectorize(texts)


def measured(node: Node) -> bool:
    return not node.is_unit or len(node.text) >= MIN_UNIT_CHARS


def b1(tree: Tree, panel: Panel) -> None:
    groups = [[c for c in n.children if measured(c)] for n in tree.internal()]
    groups = [g for g in groups if len(g) >= 2]
    if not groups:
        panel.reasons["b1_mean"] = panel.reasons["b1_min"] = "no internal node has two measured children"
        return
    labels = [c.label for g in groups for c in g]
    x = vectorize(labels)
    if x is None:
        panel.reasons["b1_mean"] = panel.reasons["b1_min"] = "no label has a word of two or more letters"
        return
    offsets = np.cumsum([0] + [len(g) for g in groups])
    totals = np.zeros(len(groups))
    # the most confusable pair: (distance, group index, row a, row b); ties go to the earlier pair
    worst: tuple[float, int, int, int] = (math.inf, 0, 0, 0)
    small = [gi for gi, g in enumerate(groups) if len(g) <= _SMALL_GROUP]
    if small:  # all pairs of all small groups in one vectorized pass
        tri = {k: np.triu_indices(k, 1) for k in {len(groups[gi]) for gi in small}}
        a = np.concatenate([offsets[gi] + tri[len(groups[gi])][0] for gi in small])
        b = np.concatenate([offsets[gi] + tri[len(groups[gi])][1] for gi in small])
        owner = np.concatenate([np.full(len(tri[len(groups[gi])][0]), gi) for gi in small])
        dist = 1.0 - np.clip(np.asarray(x[a].multiply(x[b]).sum(axis=1)).ravel(), 0.0, 1.0)
        totals += np.bincount(owner, weights=dist, minlength=len(groups))
        m = int(np.argmin(dist))
        worst = (float(dist[m]), int(owner[m]), int(a[m]), int(b[m]))
    for gi, g in enumerate(groups):
        k = len(g)
        if k <= _SMALL_GROUP:
            continue
        rows = x[offsets[gi] : offsets[gi] + k]
        for lo in range(0, k, _ROW_CHUNK):
            d = 1.0 - np.clip((rows[lo : lo + _ROW_CHUNK] @ rows.T).toarray(), 0.0, 1.0)
            upper = np.triu(np.ones(d.shape, dtype=bool), k=lo + 1)  # pairs (i, j) with j > i
            vals = np.where(upper, d, np.inf)
            totals[gi] += float(d[upper].sum())
            r, j = np.unravel_index(int(np.argmin(vals)), vals.shape)
            cand = (float(vals[r, j]), gi, int(offsets[gi]) + lo + int(r), int(offsets[gi]) + int(j))
            worst = min(worst, cand)
    sizes = np.array([len(g) for g in groups], dtype=float)
    node_means = totals / (sizes * (sizes - 1) / 2)
    flat = [c for g in groups for c in g]
    panel.values["b1_mean"] = float(node_means.mean())
    panel.values["b1_min"] = worst[0]
    panel.details["b1_min_pair"] = [flat[worst[2]].where, flat[worst[3]].where]
    panel.details["b1_nodes"] = len(groups)


def _group_sums(x: sparse.csr_matrix, gid: np.ndarray, n_groups: int) -> sparse.csr_matrix:
    ind = sparse.csr_matrix((np.ones(len(gid)), (gid, np.arange(len(gid)))), shape=(n_groups, len(gid)))
    return sparse.csr_matrix(ind @ x)


def _clean(v: float) -> float:
    """Sums of pair cosines computed as differences of squares carry ~1e-15 of rounding; a sum
    that is zero by construction (orthogonal groups) must read as 0, not as a tiny ratio."""
    return 0.0 if abs(v) < 1e-9 else v


def _sq_norms(m: sparse.csr_matrix) -> np.ndarray:
    return np.asarray(m.multiply(m).sum(axis=1)).ravel()


def b2_b3(units: list[Node], x: sparse.csr_matrix, panel: Panel) -> None:
    parents: dict[int, int] = {}
    gid = np.array([parents.setdefault(id(u.parent), len(parents)) for u in units])
    n, n_groups = len(units), len(parents)
    sizes = np.bincount(gid, minlength=n_groups)
    r = _sq_norms(x)
    sums = _group_sums(x, gid, n_groups)
    s2 = _sq_norms(sums)
    same_pairs = float((sizes * (sizes - 1) // 2).sum())
    all_pairs = n * (n - 1) / 2
    cross_pairs = all_pairs - same_pairs
    same_sum = _clean(float(((s2 - np.bincount(gid, weights=r, minlength=n_groups)) / 2).sum()))
    total = np.asarray(x.sum(axis=0)).ravel()
    all_sum = _clean((float(total @ total) - float(r.sum())) / 2)
    if same_pairs == 0:
        panel.reasons["b2"] = "no two measured units share a parent"
    elif cross_pairs == 0:
        panel.reasons["b2"] = "every measured unit has the same parent (no cross-parent pair)"
    elif _clean(all_sum - same_sum) == 0.0:
        panel.reasons["b2"] = "cross-parent pairs share no word (mean cosine 0), so the ratio is unbounded"
    else:
        panel.values["b2"] = (same_sum / same_pairs) / ((all_sum - same_sum) / cross_pairs)
        panel.details["b2_same_mean"] = same_sum / same_pairs
        panel.details["b2_cross_mean"] = (all_sum - same_sum) / cross_pairs
    leakage.b3(units, x, gid, sizes, r, sums, s2, panel)


def _chains(units: list[Node]) -> tuple[np.ndarray, np.ndarray]:
    ids: dict[int, int] = {}
    chains: list[list[int]] = []
    for u in units:
        chain: list[int] = []
        node: Node | None = u
        while node is not None:
            chain.append(ids.setdefault(id(node), len(ids)))
            node = node.parent
        chains.append(chain[::-1])
    width = max(len(c) for c in chains)
    mat = np.full((len(units), width), -1, dtype=np.int64)
    for i, c in enumerate(chains):
        mat[i, : len(c)] = c
        mat[i, len(c) :] = -2 - i  # padding never matches another row
    depth = np.array([len(c) - 1 for c in chains], dtype=np.int64)
    return mat, depth


def b4(units: list[Node], x: sparse.csr_matrix, panel: Panel) -> None:
    n = len(units)
    if n < 3:
        panel.reasons["b4"] = "fewer than three measured units"
        panel.values["b4_pairs"] = n * (n - 1) // 2
        return
    idx = np.arange(n)
    if n > B4_MAX_UNITS:
        idx = np.sort(np.random.default_rng(SEED).choice(n, B4_MAX_UNITS, replace=False))
    sub = [units[i] for i in idx]
    xs = x[idx]
    mat, depth = _chains(sub)
    m = len(sub)
    iu, ju = np.triu_indices(m, k=1)
    content = 1.0 - np.clip((xs @ xs.T).toarray()[iu, ju], 0.0, 1.0)
    tree_d = np.empty(len(iu), dtype=np.int64)
    pos = 0
    for lo in range(0, m, 200):
        hi = min(lo + 200, m)
        eq = mat[lo:hi, None, :] == mat[None, :, :]
        lcp = np.cumprod(eq, axis=2).sum(axis=2)  # shared chain length = LCA depth + 1
        for row in range(hi - lo):
            i = lo + row
            js = np.arange(i + 1, m)
            tree_d[pos : pos + len(js)] = depth[i] + depth[js] - 2 * (lcp[row, js] - 1)
            pos += len(js)
    panel.values["b4_pairs"] = len(iu)
    if np.all(tree_d == tree_d[0]):
        panel.reasons["b4"] = "every pair is at the same tree distance (nothing to rank)"
        return
    if np.ptp(content) <= _EPS:
        panel.reasons["b4"] = "every pair has the same content distance (nothing to rank)"
        return
    panel.values["b4"] = spearman_int_float(tree_d, content)


def spearman_int_float(ints: np.ndarray, floats: np.ndarray) -> float:
    """Spearman's rho (Pearson of average ranks, as `scipy.stats.spearmanr`), ranking the small
    non-negative integer tree distances by counting instead of sorting two million values."""
    from scipy.stats import rankdata

    counts = np.bincount(ints)
    before = np.cumsum(counts) - counts
    int_ranks = (before + (counts + 1) / 2.0)[ints]
    return float(np.corrcoef(int_ranks, rankdata(floats))[0, 1])


KEYS = ("b1_mean", "b1_min", "b2", "b3", "b3_loo", "b4")


def panel(tree: Tree) -> Panel:
    """B1-B4 of a tree; every key is present, undefined ones None with a reason."""
    p = Panel()
    b1(tree, p)
    units = [u for u in tree.units if len(u.text) >= MIN_UNIT_CHARS]
    p.details["units_measured"] = len(units)
    x = vectorize([u.text for u in units]) if len(units) >= 2 else None
    if x is None:
        why = (
            "fewer than two measured units (units of 40+ characters)"
            if len(units) < 2
            else ("no measured unit has a word of two or more letters")
        )
        for k in ("b2", "b3", "b3_loo", "b4"):
            p.reasons[k] = why
        p.values["b4_pairs"] = 0
    else:
        b2_b3(units, x, p)
        b4(units, x, p)
    for k in KEYS:
        v = p.values.get(k)
        p.values[k] = None if v is None else float(v)
    p.values.setdefault("b4_pairs", 0)
    return p
