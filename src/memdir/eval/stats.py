"""Paired comparisons and score summaries.

Two variants answered the same items; per item one wins, loses or ties. The sign test asks
whether wins and losses split unevenly beyond chance: an exact binomial test at p = 0.5 over
the non-tied items (scipy `binomtest`); ties carry no information and are dropped. Each
comparison names its sidedness, as the paper does: one-sided (`greater`) where the claim has a
direction fixed in advance (a store beats no store: Appendix D.1's 9 wins and 3 losses give
p = .073, one-sided), two-sided where either variant may come out ahead (a reorganized store
against the dump). `COMPARISONS` lists the report's.

Summaries report every score twice, over all items and without the items whose gold is known
to be defective (LoCoMo conv-50 has four), since the paper reports both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scipy.stats import binomtest

Sidedness = Literal["two-sided", "greater"]  # greater: one-sided, A beats B


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


def paired(
    rows: Iterable[Mapping[str, Any]],
    key: str,
    variant_a: str,
    variant_b: str,
    sidedness: Sidedness = "two-sided",
) -> SignTest:
    """Sign test between two variants' rows of one answers table."""
    by_variant: dict[str, dict[str, float | None]] = {variant_a: {}, variant_b: {}}
    for r in rows:
        if r["variant"] in by_variant:
            by_variant[r["variant"]][str(r["question_id"])] = r.get(key)
    return sign_test(by_variant[variant_a], by_variant[variant_b], sidedness)


# The conversational report's paired comparisons, every variant against each baseline on
# correctness: against the floor (closed-book) the claim is directional, a store helps, so
# one-sided; against the dump an organized store may win or lose, so two-sided.
COMPARISONS: tuple[tuple[str, Sidedness], ...] = (("closed-book", "greater"), ("verbatim-dump", "two-sided"))


def comparisons(rows: Iterable[Mapping[str, Any]], key: str = "correctness") -> list[dict[str, Any]]:
    """Each variant against each baseline of `COMPARISONS` it shares a conversation with, on
    the items both scored: a row per (benchmark, conversation, variant, baseline)."""
    items = list(rows)
    cells = sorted({(str(r.get("benchmark", "")), str(r["conversation"]), str(r["variant"])) for r in items})
    out: list[dict[str, Any]] = []
    done: set[tuple[str, str]] = set()
    for base, sidedness in COMPARISONS:
        for bench, conv, variant in cells:
            if variant == base or (bench, conv, base) not in cells or (base, variant) in done:
                continue  # a pair already compared the other way round is not tested twice
            done.add((variant, base))
            mine = [r for r in items if (r.get("benchmark", ""), r["conversation"]) == (bench, conv)]
            t = paired(mine, key, variant, base, sidedness)
            out.append({
                "benchmark": bench, "conversation": conv, "variant": variant, "against": base,
                "score": key, "wins": t.wins, "losses": t.losses, "ties": t.ties,
                "p_value": round(t.p_value, 6), "sidedness": sidedness,
            })  # fmt: skip
    return out
