"""report.md and the plot are made from summary.json alone, in the study's table shapes."""

from __future__ import annotations

import shutil
from pathlib import Path

from memdir_study.eval.records import CellSummary, RunSummary, SearchMeans
from memdir_study.eval.report import check_text, dump_ratio, write_report
from memdir_study.eval.runner import RunConfig, run_eval

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"


def test_report_from_summary_alone(tmp_path: Path) -> None:
    cfg = RunConfig(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=["closed-book", "verbatim-dump", "reorg-condense"],
        builder_model="offline",
        search_model="offline",
        limit=4,
    )
    summary = run_eval(cfg, tmp_path / "run", progress=False)
    alone = tmp_path / "copy"
    alone.mkdir()
    shutil.copy(tmp_path / "run" / "summary.json", alone / "summary.json")
    report = write_report(alone).read_text()
    dump = next(c for c in summary.cells if c.variant == "verbatim-dump")
    assert dump.correctness and dump.correctness.all.mean is not None and dump.store
    corr = 100 * dump.correctness.all.mean
    assert f"| verbatim-dump | partial | 4 | {corr:.1f} |" in report
    kb = (dump.search.bytes_read or 0) / 1024
    assert (
        f"| verbatim-dump | {dump.search.tool_calls:.1f} | 0.0 | {kb:.1f} | 1.00x "
        "| 0 | 0 | 0 | — | 0.000 |" in report
    )
    assert f"| {dump.store['files']} | {dump.store['sections']} |" in report
    assert "reorg-condense: **skipped**: reorg-condense needs a model" in report
    assert "| closed-book | partial | 4 | 0.0 | 0.0 | — |" in report  # nothing to attribute
    assert (alone / "variants.png").read_bytes()[:4] == b"\x89PNG"
    assert RunSummary.read(alone / "summary.json") == summary


def test_check_column_states_the_verification() -> None:
    assert check_text({"foldering": {"verified": True, "moved": 3}}) == "move-only verified (3 moved)"
    diff = {"ok": False, "missing_count": 2, "old_facts": 40}
    assert check_text({"diff_facts": diff}) == "diff --facts: 2 of 40 facts missing"
    assert check_text({"diff_facts": {"ok": True}}) == "diff --facts: all facts kept"
    assert check_text({}) == ""


def test_read_vs_dump_divides_by_the_dump_of_the_same_conversation() -> None:
    def cell(conv: str, variant: str, kb: float) -> CellSummary:
        search = SearchMeans(bytes_read=kb * 1024)
        return CellSummary(benchmark="locomo", conversation=conv, variant=variant, status="ok", search=search)

    cells = [cell("a", "verbatim-dump", 20), cell("a", "agent-curated", 5), cell("b", "verbatim-dump", 10),
             cell("b", "agent-curated", 5), cell("c", "agent-curated", 5)]  # fmt: skip
    assert [dump_ratio(c, cells) for c in cells] == ["1.00x", "0.25x", "1.00x", "0.50x", "—"]
