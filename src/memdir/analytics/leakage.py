"""B3, scope leakage (docs/metrics.md; P3 in docs/study.md), and its leave-one-out reading `b3_loo`.

The paper's definition is the default: unit u leaks when
`max over g != g(u) of cos(v_u, mu_g) > cos(v_u, mu_g(u))`, where mu_g is the centroid of
sibling group g and u's own centroid *includes u*. `b3` is the leaking fraction of all measured
units. A unit alone in its group is its own centroid (cosine 1), so it never leaks.

`b3_loo` is the stricter reading an earlier version reported as B3: u's own centroid leaves u
out, so only units with a measured sibling are judged, and a unit orthogonal to its siblings
leaks as soon as any other group shares a word with it. It is kept under its own name because
it separates "filed with siblings it resembles" from "filed anywhere it is not an outlier", a
difference the paper's formula hides on small groups (docs/metrics.md, B3). It is never B3.

Both are computed in one pass from the group sums `s_g` (a centroid is `s_g / |g|`, and a
cosine does not see the scale): `cos(v, s_g)` needs only `v . s_g` and `|s_g|`, and the
leave-one-out centroid is `s_g - v`, with `v . (s_g - v) = v . s_g - |v|^2` and
`|s_g - v|^2 = |s_g|^2 - 2 v . s_g + |v|^2`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from scipy import sparse

from memdir.analytics.tree import Metrics, Node, PanelDetails

LIST_CAP = 100  # leaked units listed in details (all are counted)
_ROW_CHUNK = 1000
_EPS = 1e-12


class _Panel(Protocol):
    values: Metrics
    reasons: dict[str, str]
    details: PanelDetails


def b3(
    units: list[Node],
    x: sparse.csr_matrix,
    gid: np.ndarray,
    sizes: np.ndarray,
    r: np.ndarray,
    sums: sparse.csr_matrix,
    s2: np.ndarray,
    panel: _Panel,
) -> None:
    """Set `b3` and `b3_loo` (or their null reasons) and the leaked lists on `panel`.

    `x`: the units' TF-IDF rows; `gid`: each unit's group; `sizes`: units per group; `r`: each
    row's squared norm (1, or 0 for a text without a token); `sums`, `s2`: each group's row
    sum and its squared norm.
    """
    if len(sizes) < 2:
        why = "every measured unit has the same parent (no other group to leak into)"
        panel.reasons["b3"] = panel.reasons["b3_loo"] = why
        return
    sums_t = sparse.csr_matrix(sums.T)
    s_norm = np.sqrt(s2)
    eligible_loo = sizes[gid] >= 2
    leaked: list[str] = []
    leaked_loo: list[str] = []
    for lo in range(0, len(units), _ROW_CHUNK):
        hi = min(lo + _ROW_CHUNK, len(units))
        dots = (x[lo:hi] @ sums_t).toarray()  # v_i . s_h for every unit i and group h
        rows = np.arange(hi - lo)
        g = gid[lo:hi]
        ri = r[lo:hi]
        x_norm = np.sqrt(ri)
        own_dot = dots[rows, g]
        loo_dot = own_dot - ri  # v_i . (s_g - v_i)
        loo_norm = np.sqrt(np.maximum(s2[g] - 2 * own_dot + ri, 0.0))  # |s_g - v_i|
        with np.errstate(divide="ignore", invalid="ignore"):
            own = np.where(s_norm[g] * x_norm > _EPS, own_dot / (s_norm[g] * x_norm), 0.0)
            own_loo = np.where(loo_norm * x_norm > _EPS, loo_dot / (loo_norm * x_norm), 0.0)
            others = np.where(s_norm[None, :] > _EPS, dots / (x_norm[:, None] * s_norm[None, :]), 0.0)
        others[rows, g] = -1.0
        nearest_other = others.max(axis=1)
        real = ri > _EPS  # a text without a token is at cosine 0 from everything: it never leaks
        hit = real & (nearest_other > own + _EPS)
        hit_loo = eligible_loo[lo:hi] & real & (nearest_other > own_loo + _EPS)
        leaked.extend(units[lo + int(i)].where for i in np.flatnonzero(hit))
        leaked_loo.extend(units[lo + int(i)].where for i in np.flatnonzero(hit_loo))
    panel.values["b3"] = len(leaked) / len(units)
    panel.details["b3_leaked_count"] = len(leaked)
    panel.details["b3_leaked"] = leaked[:LIST_CAP]
    judged = int(eligible_loo.sum())
    if judged == 0:
        panel.reasons["b3_loo"] = "no measured unit shares its parent with another measured unit"
        return
    panel.values["b3_loo"] = len(leaked_loo) / judged
    panel.details["b3_loo_leaked_count"] = len(leaked_loo)
    panel.details["b3_loo_leaked"] = leaked_loo[:LIST_CAP]
