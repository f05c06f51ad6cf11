"""The report's statistics from summary.json: Table 18's caching efficiency per cell and the
paired comparisons with their sidedness."""

from __future__ import annotations

import pytest

from memdir.models.usage import Usage, episode_bounds
from memdir_study.eval.records import AnswerRow, CellSummary, RunSummary
from memdir_study.eval.report import render
from memdir_study.eval.stats import comparisons
from memdir_study.eval.summary import caching


def row(variant: str, q: int, correct: float, rounds: list[Usage] | None = None) -> AnswerRow:
    b = episode_bounds(rounds).as_dict() if rounds else None
    return AnswerRow.model_validate({
        "benchmark": "locomo", "conversation": "conv-50", "variant": variant, "question_id": f"q{q}",
        "order": q, "correctness": correct, "search": {"bounds": b} if b else {},
    })  # fmt: skip


def test_a_cells_caching_efficiency_is_the_ratio_of_its_summed_bounds() -> None:
    # question 1: three rounds, the later prompts mostly cached; question 2: two rounds, none cached
    q1 = [Usage(1000, 0, 50), Usage(100, 1100, 50), Usage(100, 1250, 50)]
    q2 = [Usage(800, 0, 20), Usage(900, 0, 20)]
    got = caching([row("v", 1, 1.0, q1), row("v", 2, 1.0, q2), row("v", 3, 0.0)])
    assert got is not None
    no_cache = (1000 + 1200 + 1350 + 150) + (800 + 900 + 40)
    measured = (1000 + 100 + 100 + 150) + (800 + 900 + 40)
    perfect = (1350 + 50) + (900 + 20)
    assert (got.no_cache, got.measured, got.perfect) == (no_cache, measured, perfect)
    assert got.caching_efficiency == pytest.approx((no_cache - measured) / (no_cache - perfect), abs=1e-6)
    # a ratio of sums, not the mean of the questions' own ratios
    per_q = [episode_bounds(q).caching_efficiency for q in (q1, q2)]
    assert got.caching_efficiency != pytest.approx(sum(e or 0 for e in per_q) / 2)
    assert caching([row("v", 1, 1.0)]) is None  # no model call, no bounds: not 0


def test_the_report_shows_each_cells_efficiency_and_each_comparisons_sidedness() -> None:
    q = [Usage(1000, 0, 50), Usage(100, 1100, 50)]
    rows = [row("closed-book", i, 0.0) for i in range(12)]
    rows += [row("verbatim-dump", i, 1.0 if i < 9 else 0.0, q) for i in range(12)]
    bounds = caching([r for r in rows if r.variant == "verbatim-dump"])
    assert bounds is not None and bounds.caching_efficiency is not None
    cell = CellSummary(
        benchmark="locomo", conversation="conv-50", variant="verbatim-dump", status="ok", n_questions=12,
        caching=bounds,
    )  # fmt: skip
    text = render(RunSummary(cells=[cell], paired=comparisons(rows)), [])
    eff = bounds.caching_efficiency
    assert f"| verbatim-dump | {bounds.no_cache:,} |" in text and f"{100 * eff:.1f}%" in text
    assert "| verbatim-dump | closed-book | 9 | 0 | 3 | one-sided | 0.002 |" in text
