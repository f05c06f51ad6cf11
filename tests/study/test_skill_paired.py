"""The skill report's paired comparisons: each store variant against no-store on per-task success,
a sign test one-sided as the claim (a store helps; the paper's D.1), from a recorded tasks table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir_study.skills.report import write_report

FAMILIES = ("place", "look", "heat")


def row(variant: str, chain: int, index: int, success: bool, model: str = "gpt-4.1") -> dict[str, Any]:
    """One `tasks.jsonl` line as skills/chain.py writes it (the fields the report reads)."""
    return {
        "variant": variant, "model": model, "protocol": "full", "chain": chain, "index": index,
        "game": f"game-{chain}-{index}", "family": FAMILIES[index % 3], "task": f"task {index}",
        "success": success, "steps": 10, "served": [], "served_tokens": 0, "store_files": 1,
        "store_kb": 0.5, "deploy_cost_usd": 0.01, "build_cost_usd": 0.0, "search_cost_usd": 0.0,
        "execution_cost_usd": 0.01, "invalid_actions": 2, "deploy_usage": {}, "build_usage": {},
        "seconds": {"play": 1.0},
    }  # fmt: skip


def write_run(out: Path, rows: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True)
    manifest = {
        "benchmark": "alfworld", "protocol": "full", "model": "gpt-4.1", "retriever": "bm25",
        "step_cap": 50, "seed": 0, "versions": {}, "tool_set": "center", "price_card": "gpt-4.1",
    }  # fmt: skip
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_report_tests_each_store_against_no_store_one_sided(tmp_path: Path) -> None:
    # 12 tasks over two chains: no store solves 3 of them; curated skills solves the other 9 and
    # fails those 3 (the paper's D.1 split: 9 wins, 3 losses, p = .073 one-sided); the episode
    # log does as no store did (12 ties).
    positions = [(chain, i) for chain in (1, 2) for i in range(6)]
    base = {p: k < 3 for k, p in enumerate(positions)}
    rows = [row("no-store", c, i, base[(c, i)]) for c, i in positions]
    rows += [row("curated-skills", c, i, not base[(c, i)]) for c, i in positions]
    rows += [row("episode-log", c, i, base[(c, i)]) for c, i in positions]
    out = tmp_path / "run"
    write_run(out, rows)
    write_report(out)
    paired = json.loads((out / "summary.json").read_text())["paired"]
    by = {r["variant"]: r for r in paired}
    assert set(by) == {"episode-log", "curated-skills"}  # no-store is the baseline, not a row
    cur = by["curated-skills"]
    assert (cur["against"], cur["wins"], cur["losses"], cur["ties"]) == ("no-store", 9, 3, 0)
    assert cur["sidedness"] == "greater" and cur["p_value"] == pytest.approx(0.073, abs=5e-4)
    assert (by["episode-log"]["ties"], by["episode-log"]["p_value"]) == (12, 1.0)
    report = (out / "report.md").read_text()
    assert "## Paired comparisons (sign test on per-task success)" in report
    assert "| curated-skills | no-store | 9 | 3 | 0 | one-sided | 0.073 |" in report
    assert "| episode-log | no-store | 0 | 0 | 12 | one-sided | 1.000 |" in report


def test_tasks_pair_only_within_one_executor_and_never_across_positions(tmp_path: Path) -> None:
    """A second executor's rows are compared with its own no-store rows; a task no-store did not
    play is left out, not counted as a loss."""
    rows = [row("no-store", 1, i, False) for i in range(4)]
    rows += [row("curated-skills", 1, i, True) for i in range(5)]  # index 4: no no-store row
    rows += [row("no-store", 1, i, True, model="gpt-4.1-mini") for i in range(4)]
    rows += [row("curated-skills", 1, i, True, model="gpt-4.1-mini") for i in range(4)]
    out = tmp_path / "run"
    write_run(out, rows)
    write_report(out)
    paired = json.loads((out / "summary.json").read_text())["paired"]
    got = {(r["model"], r["variant"]): (r["wins"], r["losses"], r["ties"]) for r in paired}
    assert got == {("gpt-4.1", "curated-skills"): (4, 0, 0), ("gpt-4.1-mini", "curated-skills"): (0, 0, 4)}
    report = (out / "report.md").read_text()
    assert "| gpt-4.1-mini / curated-skills | no-store | 0 | 0 | 4 | one-sided | 1.000 |" in report


def test_a_run_without_no_store_has_no_paired_table(tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(out, [row("curated-skills", 1, i, True) for i in range(3)])
    write_report(out)
    assert json.loads((out / "summary.json").read_text())["paired"] == []
    assert "Paired comparisons" not in (out / "report.md").read_text()


def test_a_task_row_no_chain_wrote_is_refused_by_its_place_and_field(tmp_path: Path) -> None:
    """tasks.jsonl is checked once where the report reads it: a field of another type is named
    with its row, nothing is derived from it; a field older chains did not write is no problem."""
    from memdir.errors import MemdirError

    out = tmp_path / "run"
    older = {k: v for k, v in row("curated-skills", 1, 0, True).items() if k != "invalid_actions"}
    write_run(out, [older, {**row("curated-skills", 1, 1, True), "steps": "many"}])
    with pytest.raises(MemdirError, match=r"tasks\.jsonl row 2 is not a TaskRow: steps is a JSON string"):
        write_report(out)
    assert not (out / "summary.json").exists()
    write_run(tmp_path / "older", [older])
    write_report(tmp_path / "older")
    assert json.loads((tmp_path / "older" / "summary.json").read_text())["cells"][0]["n_tasks"] == 1
