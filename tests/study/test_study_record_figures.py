"""The study of record's two figures (reference section 7, Metrics): the run-to-run composite
(0.1 x grounding + 0.6 x correctness + 0.3 x attribution) and Table 18's caching bounds, each
put through the code that computes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.models import get_model
from memdir.models.scripted import answer
from memdir.models.usage import Bounds
from memdir_study.eval.composite import COMPOSITE_WEIGHTS, STUDY_SCALES, composite, points
from memdir_study.eval.judges import SCALES
from memdir_study.eval.runner import RunConfig, run_eval

# Table 18 (execution agent, millions of tokens): perfect, measured, no-cache, and the printed
# measured/perfect and caching efficiency (%), as the reference gives them.
TABLE_18 = [
    ("gpt-4.1", "no store", 1.16, 2.32, 23.36, 1.99, 94.8),
    ("gpt-4.1", "episode log", 0.97, 1.67, 15.97, 1.72, 95.3),
    ("gpt-4.1", "curated skills", 1.18, 2.16, 22.70, 1.82, 95.5),
    ("gpt-4.1", "curated skills+mem", 1.09, 2.15, 21.08, 1.97, 94.7),
    ("gpt-4.1", "+mem (GS)", 1.01, 1.99, 18.32, 1.97, 94.4),
    ("gpt-4.1-mini", "no store", 1.40, 2.86, 32.12, 2.04, 95.3),
    ("gpt-4.1-mini", "episode log", 1.52, 2.71, 33.44, 1.78, 96.3),
    ("gpt-4.1-mini", "curated skills", 1.30, 2.45, 27.49, 1.89, 95.6),
    ("gpt-4.1-mini", "curated skills+mem", 1.39, 2.56, 31.67, 1.84, 96.2),
    ("gpt-4.1-mini", "+mem (GS)", 1.08, 2.17, 21.10, 2.00, 94.6),
]
HALF = 0.005  # the table's totals are rounded to 0.01 M tokens, its ratios to 0.01x


def _tokens(millions: float) -> int:
    return round(millions * 1_000_000)


@pytest.mark.parametrize(("model", "setting", "perfect", "measured", "no_cache", "ratio", "eff"), TABLE_18)
def test_table_18_rows_give_the_printed_ratio_and_efficiency(
    model: str, setting: str, perfect: float, measured: float, no_cache: float, ratio: float, eff: float
) -> None:
    b = Bounds(no_cache=_tokens(no_cache), measured=_tokens(measured), perfect=_tokens(perfect))
    assert b.caching_efficiency is not None and b.measured_over_perfect is not None
    assert 100 * b.caching_efficiency == pytest.approx(eff, abs=0.1)
    # The ratio from the rounded totals lies within 0.01x of the printed one on nine rows; on
    # gpt-4.1 curated skills it is 1.8305 against 1.82 (0.0105), as rounding each total by up to
    # 0.005 M allows. So each row is held to what its own rounding allows: the printed ratio
    # lies within the ratio's range over every total the rounded ones stand for (and the
    # print's own half-step), and never further than 0.011x from the code's.
    lo = _tokens(measured - HALF) / _tokens(perfect + HALF)
    hi = _tokens(measured + HALF) / _tokens(perfect - HALF)
    assert lo - HALF <= ratio <= hi + HALF
    assert b.measured_over_perfect == pytest.approx(ratio, abs=0.011)


def test_table_18_efficiency_is_the_paper_formula() -> None:
    b = Bounds(no_cache=100, measured=30, perfect=10)
    assert b.caching_efficiency == pytest.approx((100 - 30) / (100 - 10))
    assert b.measured_over_perfect == pytest.approx(3.0)
    assert Bounds(0, 0, 0).measured_over_perfect is None and Bounds(5, 5, 5).caching_efficiency is None


def test_the_composite_weights_and_scales_are_the_studys() -> None:
    assert COMPOSITE_WEIGHTS == {"grounding": 0.1, "correctness": 0.6, "attribution": 0.3}
    assert set(STUDY_SCALES.values()) <= set(SCALES)  # read from the attribution judge's scales
    scales = {"citation_correctness": 0.0, "relevance": 0.5, "coherent_aggregation": 1.0}
    # grounding = coherent aggregation, attribution = relevance; citation correctness left out
    assert composite(1.0, scales) == pytest.approx(0.1 * 1.0 + 0.6 * 1.0 + 0.3 * 0.5)
    assert composite(0.0, scales) == pytest.approx(0.1 * 1.0 + 0.3 * 0.5)
    assert composite(None, scales) is None and composite(1.0, None) is None  # never a silent 0
    assert composite(1.0, {"relevance": 1.0}) is None
    assert points(0.5, 0.54) == 4.0 and points(0.5, 0.473) == -2.7 and points(None, 0.5) is None


def _scales(cc: float, rel: float, coh: float) -> str:
    return json.dumps(
        {"reason": "r", "citation_correctness": cc, "relevance": rel, "coherent_aggregation": coh}
    )


def _run(out: Path, replies: list[str]) -> None:
    judge = get_model("scripted/judge", script=[answer(r) for r in replies])
    base: dict[str, Any] = dict(
        benchmark="generated",
        conversations=["gen-s3-p2-n4-t3-a2-c1"],
        variants=["verbatim-dump"],
        builder_model="offline",
        search_model="offline",
        judge="scripted/judge",
        limit=2,
        in_flight=1,
    )
    run_eval(RunConfig(**base), out, progress=False, models={"scripted/judge": judge})


def test_a_rerun_of_the_same_cell_reports_the_composites_change_in_points(tmp_path: Path) -> None:
    correct, wrong = '{"reason": "r", "verdict": "CORRECT"}', '{"reason": "r", "verdict": "WRONG"}'
    # first run: (1, coh .5, rel 1) -> .05 + .6 + .3 = .95 and (0, 0, 0) -> 0: mean .475
    _run(tmp_path / "first", [correct, _scales(1, 1, 0.5), wrong, _scales(0, 0, 0)])
    # re-run: both answers CORRECT, fully attributed: mean 1.0, a change of +52.5 points
    _run(tmp_path / "again", [correct, _scales(1, 1, 1), correct, _scales(1, 1, 1)])
    res = CliRunner().invoke(
        cli, ["study", "report", str(tmp_path / "again"), "--rerun-of", str(tmp_path / "first")]
    )
    assert res.exit_code == 0, res.output
    report = (tmp_path / "again" / "report.md").read_text()
    assert "## Run-to-run change of the composite (this run against first)" in report
    assert "| gen-s3-p2-n4-t3-a2-c1 / verbatim-dump | 47.5 | 100.0 | +52.5 |" in report
    assert "relevance (= attribution)" in report and "coherent aggregation (= grounding)" in report
    assert "Composite (the correctness table's column) = 0.1 x grounding + 0.6 x correctness" in report


def test_rerun_of_a_folder_without_a_summary_is_a_clear_error(tmp_path: Path) -> None:
    _run(tmp_path / "run", ['{"reason": "r", "verdict": "CORRECT"}', _scales(1, 1, 1)] * 2)
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(
        cli, ["study", "report", str(tmp_path / "run"), "--rerun-of", str(tmp_path / "empty")]
    )
    assert res.exit_code != 0 and "no summary.json" in res.output
    assert not (tmp_path / "run" / "report.md").exists()  # refused before anything was drawn
