"""`memdir study eval --search read`: the search model answers each open question with the read search
(one constrained call over the top sections), recorded in the manifest; the study's agentic
search stays the default. A tiny generated conversation, the scripted model at the LLM boundary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.models import get_model
from memdir.models.scripted import answer
from memdir_study.eval.runner import RunConfig, run_eval

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"


def _config(**kw: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=["verbatim-dump"],
        builder_model="offline",
        search_model="scripted/reader",
        limit=2,
        in_flight=1,
    )
    return RunConfig(**(base | kw))


def test_a_read_search_run_makes_one_call_per_question_and_says_so(tmp_path: Path) -> None:
    reply = json.dumps({"answer": "vegan", "citations": ["/memories/nowhere.md:1"]})
    model = get_model("scripted/reader", script=[answer(reply), answer(reply)])
    out = tmp_path / "run"
    summary = run_eval(_config(search="read"), out, progress=False, models={"scripted/reader": model})
    (cell,) = summary.cells
    assert cell.status == "partial" and cell.n_questions == 2  # 2 of its 8 questions
    assert model.usage.calls == 2  # one call per question, no tool rounds
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["search"] == "read"
    lines = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    episodes = [e for e in lines if e["kind"] == "episode"]
    assert len(episodes) == 2 and all(e["role"] == "read_search" for e in episodes)
    assert all(e["dropped_citations"] == 1 for e in episodes)  # it was not shown that file
    rows = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    assert all(r["citations"] == [] and r["search"]["input_tokens"] > 0 for r in rows)
    # resuming under the study's search is refused: the answers would mix two searches
    with pytest.raises(MemdirError, match="search"):
        run_eval(_config(), out, progress=False, models={"scripted/reader": model})


def test_the_agentic_default_keeps_old_manifests_and_offline_read_is_refused(tmp_path: Path) -> None:
    assert "search" not in _config().identity()  # run folders from before the option resume
    with pytest.raises(MemdirError, match="offline model makes"):
        _config(search="read", search_model="offline")
    res = CliRunner().invoke(
        cli,
        ["study", "eval", "-b", "generated", "-c", SAMPLE, "-v", "verbatim-dump", "--search", "read",
         "--out", str(tmp_path / "run"), "--no-progress"],
    )  # fmt: skip
    assert res.exit_code != 0 and "--search read" in res.output
