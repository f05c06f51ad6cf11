"""`memdir study bench horizon` end to end on a tiny year (2 months, 3 sessions each, offline),
through the CLI: the JSON names and checkpoint rows, the plots, and a rerun that continues from
the last checkpoint instead of building again."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir_study.runfolder import JsonlTable

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("MEMDIR_DATA") or REPO.parent / "shared" / "data")
pytestmark = pytest.mark.skipif(
    not (DATA / "locomo" / "locomo10.json").is_file(),
    reason=f"LoCoMo not found under {DATA}; set MEMDIR_DATA",
)
NAMES = {
    "retention", "current_state", "previous_state", "stale_first", "update_accuracy", "hallucinated",
    "updates", "shape", "core_tokens", "core_budget", "core_within_budget", "index_bytes",
    "ingest_seconds_per_session", "ingest_cpu_seconds_per_session", "search_bytes_per_question",
    "facts_lost_by_consolidation",
}  # fmt: skip


def _run(out: Path, *more: str) -> dict:  # type: ignore[type-arg]
    args = ["study", "bench", "horizon", "--months", "2", "--sessions-per-month", "3", "--seed", "3"]
    res = CliRunner().invoke(cli, [*args, "-o", str(out), "--json", "--no-progress", *more])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{\n") :])  # type: ignore[no-any-return]


def test_a_tiny_year_scores_its_checkpoints_and_a_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMDIR_DATA", str(DATA))
    out = tmp_path / "run"
    data = _run(out)
    rows = data["checkpoints"]
    assert [r["month"] for r in rows] == [1, 2]
    assert set(rows[0]) >= NAMES
    assert rows[0]["month1_facts"] > 0 and 0 <= rows[0]["retention"] <= 1
    assert rows[1]["sessions"] == 6 and rows[0]["core_within_budget"]
    assert set(data["targets"]) >= {
        "retention",
        "current_state",
        "stale_first",
        "ingest_growth",
        "ingest_cpu_growth",
    }
    assert rows[0]["ingest_cpu_seconds_per_session"] > 0
    assert (out / "horizon-retention.png").stat().st_size > 0
    assert (out / "checkpoints" / "m01" / "MEMORY.md").is_file()
    # stopped while month 2 was scored: its sessions are in the store, logged, not scored again
    month1, month2 = JsonlTable(out / "months.jsonl").rows()
    JsonlTable(out / "checkpoints.jsonl").withdraw({"month": 2})
    shutil.rmtree(out / "checkpoints" / "m02")
    ledger = (out / "store" / ".memdir" / "ingested.jsonl").read_bytes()
    again = _run(out)
    assert [r["month"] for r in again["checkpoints"]] == [1, 2]
    assert JsonlTable(out / "months.jsonl").rows() == [month1, month2]  # not built again
    assert (out / "store" / ".memdir" / "ingested.jsonl").read_bytes() == ledger
    assert again["checkpoints"][1]["fact_lines"] == rows[1]["fact_lines"]
    # stopped while month 2 was built: back to month 1's checkpoint, month 2 built again
    JsonlTable(out / "checkpoints.jsonl").withdraw({"month": 2})
    JsonlTable(out / "months.jsonl").withdraw({"month": 2})
    shutil.rmtree(out / "checkpoints" / "m02")
    again = _run(out)
    assert [r["month"] for r in again["checkpoints"]] == [1, 2]
    assert again["checkpoints"][0] == rows[0]  # month 1 was not built or scored again
    assert JsonlTable(out / "months.jsonl").rows()[0] == month1
    assert again["checkpoints"][1]["fact_lines"] == rows[1]["fact_lines"]  # the same store
    # another seed in the same folder is refused, naming the setting
    res = CliRunner().invoke(
        cli, ["study", "bench", "horizon", "--months", "2", "--seed", "4", "-o", str(out)]
    )
    assert res.exit_code != 0 and "seed" in res.output


def test_monthly_consolidation_with_the_offline_model_says_what_to_do(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli, ["study", "bench", "horizon", "--months", "1", "--consolidate", "monthly", "-o", str(tmp_path)]
    )
    assert res.exit_code != 0 and "--model" in res.output and "--consolidate never" in res.output


def test_a_consolidation_that_would_delete_facts_loses_none_and_says_which_gate(tmp_path: Path) -> None:
    """The month's consolidation is the product's gated one; the bench diffs the store's facts
    before and after from outside. A pass that deletes the keyed facts is refused by its
    facts_lost gate, and the bench counts 0 facts lost."""
    from memdir.agents.ingest import ingest
    from memdir.models import get_model
    from memdir.models.scripted import answer, call
    from memdir.stream import Turn
    from memdir.tools.wiring import open_store
    from memdir_study.eval.horizon.run import consolidate_month

    store = open_store(tmp_path / "mem", create=True, init=True)
    said = [Turn("S1T1", "Ines", "I live in Porto, not far from the old market.", "2025-01-05")]
    asyncio.run(ingest(get_model("offline"), store, said))
    assert (store.root / "people" / "ines" / "facts.md").is_file()
    script = [call("delete", path="/memories/people/ines/facts.md"), *[answer("done")] * 4]
    with asyncio.Runner() as loop:
        found = consolidate_month(get_model("scripted", script=script), store, loop, tmp_path / "calls.jsonl")
    assert found["facts_lost"] == 0 and "facts_lost" in found["failed"]
    assert '"name": "delete"' in (tmp_path / "calls.jsonl").read_text()  # what the pass tried
    assert (store.root / "people" / "ines" / "facts.md").is_file()
