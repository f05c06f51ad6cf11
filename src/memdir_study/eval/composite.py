"""The study's run-to-run composite (docs/eval.md, The composite): 0.1 x grounding + 0.6 x
correctness + 0.3 x attribution, the weighted score the paper uses to bound how far the same
cell moves between two runs (section 7, Metrics: +4.0, -2.7, +0.6 and +2.8 points).

Correctness is the correctness judge's verdict (1 or 0; exact match for multiple choice).
Grounding and attribution are two of the attribution judge's 0-1 scales (`STUDY_SCALES`):
attribution is `relevance`, the scale that asks the reference's own question of attribution,
whether the cited passages support (carry) the answer; grounding is `coherent_aggregation`,
whether the answer claims nothing beyond its passages, which is what "grounded" means for an
answer read against its sources. `citation_correctness` is reported beside them and left out of
the composite, as the study's composite names only two scores from that judge.

A leaf: the records compute it per answer and the report per cell, from the same definition.
"""

from __future__ import annotations

from collections.abc import Mapping

# The composite's weights, in the study's order (reference section 7).
COMPOSITE_WEIGHTS = {"grounding": 0.1, "correctness": 0.6, "attribution": 0.3}
# Which attribution-judge scale each of the study's two scores is read from (why: above).
STUDY_SCALES = {"grounding": "coherent_aggregation", "attribution": "relevance"}


def composite(correctness: float | None, scales: Mapping[str, float] | None) -> float | None:
    """One answer's composite, or None when a judge did not score it (unparsed, offline): a
    missing part is never read as 0."""
    if correctness is None or not scales:
        return None
    parts = {"correctness": float(correctness)}
    for score, scale in STUDY_SCALES.items():
        value = scales.get(scale)
        if value is None:
            return None
        parts[score] = float(value)
    return round(sum(COMPOSITE_WEIGHTS[k] * parts[k] for k in COMPOSITE_WEIGHTS), 6)


def points(before: float | None, after: float | None) -> float | None:
    """The change from one run of a cell to another, in percentage points (the study's unit)."""
    if before is None or after is None:
        return None
    return round(100 * (after - before), 1)
