"""Paired comparisons and score summaries.

Two variants answered the same items; per item one wins, loses or ties. The sign test asks
whether wins and losses split unevenly beyond chance: two-sided exact binomial test at p = 0.5
over the non-tied items (scipy `binomtest`); ties carry no information and are dropped.

Summaries report every score twice, over all items and without the items whose gold is known
to be defective (LoCoMo conv-50 has four), since the paper reports both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scipy.stats import binomtest


@dataclass(frozen=True)
class SignTest:
    wins: int
    losses: int
    ties: int
    p_value: float

    @property
    def n(self) -> int:
        return self.wins + self.losses + self.ties


def sign_test(a: Mapping[str, float | None], b: Mapping[str, float | None]) -> SignTest:
    """A against B over the item ids both scored (None = not scored, left out)."""
    pairs = [(x, y) for k, x in a.items() if x is not None and (y := b.get(k)) is not None]
    wins = sum(1 for x, y in pairs if x > y)
    losses = sum(1 for x, y in pairs if x < y)
    ties = len(pairs) - wins - losses
    decided = wins + losses
    p = 1.0 if decided == 0 else float(binomtest(wins, decided, 0.5, alternative="two-sided").pvalue)
    return SignTest(wins, losses, ties, p)


@dataclass(frozen=True)
class Score:
    mean: float | None
    n: int
    unscored: int


def _score(values: list[float | None]) -> Score:
    scored = [v for v in values if v is not None]
    return Score(sum(scored) / len(scored) if scored else None, len(scored), len(values) - len(scored))


@dataclass(frozen=True)
class Summary:
    """One score column of one variant: overall, without defective golds, and per category."""

    all: Score
    clean: Score
    by_category: dict[str, Score]


def summarize(rows: Iterable[Mapping[str, Any]], key: str, defective: Iterable[str] = ()) -> Summary:
    """Rows are answers.jsonl lines (`question_id`, `category`, and the score under `key`);
    `defective` lists question ids to leave out of the clean score."""
    bad = set(defective)
    items = list(rows)
    per_cat: dict[str, list[float | None]] = {}
    for r in items:
        per_cat.setdefault(str(r.get("category", "")), []).append(r.get(key))
    return Summary(
        all=_score([r.get(key) for r in items]),
        clean=_score([r.get(key) for r in items if r["question_id"] not in bad]),
        by_category={c: _score(v) for c, v in sorted(per_cat.items())},
    )


def paired(rows: Iterable[Mapping[str, Any]], key: str, variant_a: str, variant_b: str) -> SignTest:
    """Sign test between two variants' rows of one answers table."""
    by_variant: dict[str, dict[str, float | None]] = {variant_a: {}, variant_b: {}}
    for r in rows:
        if r["variant"] in by_variant:
            by_variant[r["variant"]][str(r["question_id"])] = r.get(key)
    return sign_test(by_variant[variant_a], by_variant[variant_b])
