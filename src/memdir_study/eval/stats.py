"""Paired comparisons and score summaries.

Two variants answered the same questions; the sign test (`memdir/sign_test.py`, the one
definition the skill setting's report shares) compares them, one-sided where the claim has a
direction fixed in advance (a store beats the closed-book floor), two-sided where either may come
out ahead (a reorganized store against the dump). `COMPARISONS` lists the report's.

Summaries report every score twice, over all items and without the items whose gold is known
to be defective (LoCoMo conv-50 has four), since the paper reports both.
"""

from __future__ import annotations

from collections.abc import Iterable

from memdir.sign_test import Sidedness, sign_test
from memdir_study.eval.records import AnswerRow, Comparison, Score, ScoreColumn


def _score(values: list[float | None]) -> Score:
    """Rounded to 6 places, as summary.json holds it."""
    scored = [v for v in values if v is not None]
    mean = round(sum(scored) / len(scored), 6) if scored else None
    return Score(mean=mean, n=len(scored), unscored=len(values) - len(scored))


def summarize(rows: Iterable[AnswerRow], key: str, defective: Iterable[str] = ()) -> ScoreColumn:
    """The score column `key` of answer rows; `defective` lists question ids to leave out of the
    clean score."""
    bad = set(defective)
    items = list(rows)
    per_cat: dict[str, list[float | None]] = {}
    for r in items:
        per_cat.setdefault(r.category, []).append(r.score(key))
    return ScoreColumn(
        all=_score([r.score(key) for r in items]),
        clean=_score([r.score(key) for r in items if r.question_id not in bad]),
        by_category={c: _score(v) for c, v in sorted(per_cat.items())},
    )


# The conversational report's paired comparisons, every variant against each baseline on
# correctness: against the floor (closed-book) the claim is directional, a store helps, so
# one-sided; against the dump an organized store may win or lose, so two-sided.
COMPARISONS: tuple[tuple[str, Sidedness], ...] = (("closed-book", "greater"), ("verbatim-dump", "two-sided"))


def comparisons(rows: Iterable[AnswerRow], key: str = "correctness") -> list[Comparison]:
    """Each variant against each baseline of `COMPARISONS` it shares a conversation with, on
    the items both scored: one per (benchmark, conversation, variant, baseline)."""
    items = list(rows)
    cells = sorted({(r.benchmark, r.conversation, r.variant) for r in items})
    out: list[Comparison] = []
    done: set[tuple[str, str]] = set()
    for base, sidedness in COMPARISONS:
        for bench, conv, variant in cells:
            if variant == base or (bench, conv, base) not in cells or (base, variant) in done:
                continue  # a pair already compared the other way round is not tested twice
            done.add((variant, base))
            mine = [r for r in items if (r.benchmark, r.conversation) == (bench, conv)]
            a, b = ({r.question_id: r.score(key) for r in mine if r.variant == v} for v in (variant, base))
            t = sign_test(a, b, sidedness)
            out.append(
                Comparison(
                    benchmark=bench,
                    conversation=conv,
                    variant=variant,
                    against=base,
                    score=key,
                    wins=t.wins,
                    losses=t.losses,
                    ties=t.ties,
                    p_value=round(t.p_value, 6),
                    sidedness=sidedness,
                )
            )
    return out
