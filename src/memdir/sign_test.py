"""The sign test on paired items, with the sidedness of its claim: the one definition both studies
report their paired comparisons with (per question in the conversational study, per task in the
skill setting).

Why a leaf: the conversational study (`eval`) sits above the skill setting (`skills`) and may import
it, never the reverse, yet both need the same test. This is arithmetic on scores, with no memdir
import and no study in it, so it lives beside the other shared leaves (`words`, `fact_quality`)
rather than in either study, and `tests/project/test_import_direction.py` lists it as one. A rule letting
`skills` import one module of `eval` would be an exception to the layering; a leaf is not.

Two variants met the same items; per item one wins, loses or ties. The sign test asks whether
wins and losses split unevenly beyond chance: an exact binomial test at p = 0.5 over the non-tied
items (scipy `binomtest`); ties carry no information and are dropped. Each comparison names its
sidedness, as the paper does: one-sided (`greater`) where the claim has a direction fixed in
advance (a store beats no store: Appendix D.1's 9 wins and 3 losses give p = .073, one-sided),
two-sided where either variant may come out ahead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from scipy.stats import binomtest

Sidedness = Literal["two-sided", "greater"]  # greater: one-sided, A beats B
# How a report names each sidedness.
SIDEDNESS_LABELS: dict[str, str] = {"greater": "one-sided", "two-sided": "two-sided"}


@dataclass(frozen=True)
class SignTest:
    wins: int
    losses: int
    ties: int
    p_value: float
    sidedness: Sidedness = "two-sided"

    @property
    def n(self) -> int:
        return self.wins + self.losses + self.ties


def sign_p(wins: int, losses: int, sidedness: Sidedness = "two-sided") -> float:
    """The sign test's p-value for `wins` against `losses` (ties dropped); 1 with none decided."""
    decided = wins + losses
    return 1.0 if decided == 0 else float(binomtest(wins, decided, 0.5, alternative=sidedness).pvalue)


def sign_test(
    a: Mapping[str, float | None], b: Mapping[str, float | None], sidedness: Sidedness = "two-sided"
) -> SignTest:
    """A against B over the item ids both scored (None = not scored, left out)."""
    pairs = [(x, y) for k, x in a.items() if x is not None and (y := b.get(k)) is not None]
    wins = sum(1 for x, y in pairs if x > y)
    losses = sum(1 for x, y in pairs if x < y)
    ties = len(pairs) - wins - losses
    return SignTest(wins, losses, ties, sign_p(wins, losses, sidedness), sidedness)


def paired(
    rows: Iterable[Mapping[str, object]],
    key: str,
    variant_a: str,
    variant_b: str,
    sidedness: Sidedness = "two-sided",
    item: str = "question_id",
) -> SignTest:
    """Sign test between two variants' rows of one table, paired on the `item` field."""
    by_variant: dict[str, dict[str, float | None]] = {variant_a: {}, variant_b: {}}
    for r in rows:
        variant, value = r["variant"], r.get(key)
        if isinstance(variant, str) and variant in by_variant:
            number = value if isinstance(value, int | float) else None
            by_variant[variant][str(r[item])] = number
    return sign_test(by_variant[variant_a], by_variant[variant_b], sidedness)
