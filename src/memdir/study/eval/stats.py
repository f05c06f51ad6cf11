"""Paired comparisons and score summaries.

Two variants answered the same questions; the sign test (`memdir/sign_test.py`, the one
definition the skill setting's report shares) compares them, one-sided where the claim has a
direction fixed in advance (a store beats the closed-book floor), two-sided where either may come
out ahead (a reorganized store against the dump). `COMPARISONS` lists the report's.

Summaries report every score twice, over all items and without the items whose gold is known
to be defective (LoCoMo conv-50 has four), since the paper reports both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memdir.sign_test import Sidedness, paired


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
