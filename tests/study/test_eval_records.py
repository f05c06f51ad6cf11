"""The run folder's records, typed (eval/records.py): read once where the folder is read, a line
no run wrote refused by name, summary.json written byte for byte from its record, and a summary
from before today's fields still rendered. A real offline run on a generated conversation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.errors import MemdirError
from memdir_study.eval.records import RunSummary
from memdir_study.eval.report import write_report
from memdir_study.eval.runner import RunConfig, run_eval

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"


def config(**kw: object) -> RunConfig:
    return RunConfig(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=["verbatim-dump"],
        builder_model="offline",
        search_model="offline",
        **kw,  # type: ignore[arg-type]
    )


def test_an_answer_row_no_run_wrote_is_refused_by_its_place_and_field(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_eval(config(limit=1), out, progress=False)
    answers = out / "answers.jsonl"
    good = json.loads(answers.read_text())
    with answers.open("a") as f:
        f.write(json.dumps({**good, "question_id": "later", "order": "soon"}) + "\n")
    before = answers.read_bytes()
    with pytest.raises(MemdirError, match=r"answers\.jsonl row 2 is not a AnswerRow: order"):
        run_eval(config(limit=2), out, progress=False)
    assert answers.read_bytes() == before  # nothing lost, nothing asked over it


def test_summary_json_is_its_record_and_an_older_summary_still_renders(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = run_eval(config(limit=2), out, progress=False)
    assert (out / "summary.json").read_bytes() == summary.to_json()
    assert RunSummary.read(out / "summary.json") == summary
    # a summary from before the paired tests, evidence hits, Rsn% and timings.json: build seconds inline
    old = json.loads((out / "summary.json").read_text())
    del old["paired"]
    for c in old["cells"]:
        del c["evidence_hit"], c["search"]["reasoning_tokens"], c["caching"], c["judge_health"]
        c["build"]["seconds"] = 12.5
    (out / "summary.json").write_text(json.dumps(old))
    (out / "timings.json").unlink()
    report = write_report(out).read_text()
    assert "| verbatim-dump | partial | 2 |" in report and "| 12.5 |" in report
    (out / "summary.json").write_text(json.dumps({"cells": [{"variant": "x"}]}))
    with pytest.raises(MemdirError, match=r"summary\.json is not a RunSummary: cells\.0\.conversation"):
        write_report(out)
