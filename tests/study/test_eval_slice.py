"""`memdir study eval --sessions A-B --questions N`: a run over a slice of a conversation, on the real
LoCoMo conv-50 (MEMDIR_DATA) through the real loader, `Sample.sliced` and the CLI (offline)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.stream import Turn
from memdir_study.bench import load_sample
from memdir_study.bench.types import Question, Sample, parse_sessions
from memdir_study.eval.runner import RunConfig, corpus_profile

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("MEMDIR_DATA") or REPO.parent / "shared" / "data")
needs_locomo = pytest.mark.skipif(
    not (DATA / "locomo" / "locomo10.json").is_file(),
    reason=f"LoCoMo not found at {DATA}/locomo/locomo10.json; set MEMDIR_DATA to the shared data folder",
)
# A run's settings without a question asked: the slice's own checks need nothing else.
QUICK: dict[str, Any] = dict(
    benchmark="locomo",
    conversations=["conv-50"],
    variants=[],
    builder_model="offline",
    search_model="offline",
)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may reach the network or an old cache."""
    monkeypatch.setenv("MEMDIR_OFFLINE", "1")
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMDIR_DATA", str(DATA))


def eval_cli(out: Path, *extra: str) -> Result:
    args = [
        "study",
        "eval",
        "--benchmark",
        "locomo",
        "--conversation",
        "conv-50",
        "--variants",
        "verbatim-dump",
    ]
    args += ["--model", "offline", "--judge", "offline", "--out", str(out), "--no-progress", *extra]
    return CliRunner().invoke(cli, args)


def answers(out: Path) -> list[dict[str, object]]:
    """The answer rows (written as questions finish, so not in evaluation order)."""
    return [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]


# -- parsing ---------------------------------------------------------------------------------
def test_a_slice_is_a_range_or_one_session() -> None:
    assert parse_sessions("1-2") == (1, 2)
    assert parse_sessions(" 3 - 7 ") == (3, 7)
    assert parse_sessions("4") == (4, 4)
    with pytest.raises(MemdirError, match="write the lower session first: 2-5"):
        parse_sessions("5-2")
    with pytest.raises(MemdirError, match="not A-B or N"):
        parse_sessions("x")
    with pytest.raises(MemdirError, match="count from 1"):
        parse_sessions("0-3")
    assert RunConfig(**QUICK, sessions=" 2 ").sessions == "2-2"
    with pytest.raises(MemdirError, match="not A-B or N"):
        RunConfig(**QUICK, sessions="1..2")


# -- Sample.sliced on the real data ---------------------------------------------------------
@needs_locomo
def test_slicing_conv_50_keeps_two_sessions_and_their_answerable_questions() -> None:
    full = load_sample("locomo", "conv-50")
    cut = full.sliced(1, 2)
    assert sorted(cut.session_turns()) == [1, 2]
    assert cut.turns == [t for t in full.turns if t.session in (1, 2)] and len(cut.turns) < len(full.turns)
    assert cut.session_dates == {1: "2023-03-23", 2: "2023-03-26"}
    kept = cut.locators()
    assert [q.order for q in cut.questions] == [2, 3, 72, 73]
    for q in cut.questions:
        assert q.evidence and set(q.evidence) <= kept, q.id
    # the dropped ones: no evidence, or some evidence outside the slice
    dropped = [q for q in full.questions if q not in cut.questions]
    assert all(not q.evidence or not set(q.evidence) <= kept for q in dropped)
    assert any(set(q.evidence) & kept for q in dropped)  # evidence half inside is not enough
    assert (cut.benchmark, cut.id, cut.speakers) == (full.benchmark, full.id, full.speakers)
    assert len(full.turns) == 568 and sorted(full.session_turns()) == list(range(1, 31))  # untouched
    assert corpus_profile(cut)["sessions"] == 2 and corpus_profile(cut)["questions"] == 4
    one = full.sliced(30, 30)
    assert list(one.session_turns()) == [30] and set(one.session_dates) == {30}


@needs_locomo
def test_a_range_naming_no_session_is_refused_with_the_sessions_there_are() -> None:
    with pytest.raises(MemdirError, match=r"no session in 31-40; its sessions are 1-30"):
        load_sample("locomo", "conv-50").sliced(31, 40)


def test_facts_follow_their_turns() -> None:
    sample = load_sample("generated", "gen-s3-p2-n4-t3-a2-c1")
    cut = sample.sliced(1, 2)
    assert cut.facts and len(cut.facts) < len(sample.facts)
    assert {f.locator for f in cut.facts} <= cut.locators()
    assert [f for f in sample.facts if f.locator in cut.locators()] == cut.facts


def test_multiple_choice_without_evidence_cannot_be_sliced() -> None:
    turns = [Turn("B1M1", "user", "I moved to Lisbon."), Turn("B2M1", "user", "I took up surfing.")]
    mc = Question("pm-1", "recall", "Where does the user live?", "(a)", options=("Lisbon", "Oslo"), order=1)
    sample = Sample("personamem", "pm-x", turns, [mc], {1: None, 2: None})
    with pytest.raises(MemdirError, match="multiple-choice questions carry no evidence"):
        sample.sliced(1, 1)


# -- the CLI ---------------------------------------------------------------------------------
@needs_locomo
def test_cli_runs_a_slice_records_it_and_refuses_another_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "tmp"
    res = eval_cli(out, "--sessions", "1-2", "--questions", "3")
    assert res.exit_code == 0, res.output
    rows = answers(out)
    assert sorted(r["order"] for r in rows) == [2, 3, 72]  # the slice's first 3, in evaluation order
    cut = load_sample("locomo", "conv-50").sliced(1, 2)
    evidence = {q.id: q.evidence for q in cut.questions}
    for r in rows:
        assert set(evidence[str(r["question_id"])]) <= cut.locators()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["sessions"] == "1-2"
    (cell,) = json.loads((out / "summary.json").read_text())["cells"]
    assert cell["n_questions"] == 3 and cell["corpus"] == corpus_profile(cut)
    assert cell["corpus"]["sessions"] == 2 and cell["corpus"]["questions"] == 4
    assert cell["store"]["files"] < 10  # a dump of two sessions, not thirty
    # another slice into the same folder is refused, and nothing is asked
    again = eval_cli(out, "--sessions", "1-3", "--questions", "3")
    assert again.exit_code == 1 and "other settings" in again.output and "'sessions'" in again.output
    assert again.output.count("1-3") == 1, again.output
    assert len(answers(out)) == 3
    # so is no slice at all
    whole = eval_cli(out, "--questions", "3")
    assert whole.exit_code == 1 and "other settings" in whole.output
    # the same slice resumes
    more = eval_cli(out, "--sessions", "1-2", "--questions", "4")
    assert more.exit_code == 0, more.output
    assert sorted(r["order"] for r in answers(out)) == [2, 3, 72, 73]


@needs_locomo
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("5-2", "write the lower session first: 2-5"),
        ("x", "not A-B or N"),
        ("40-50", "no session in 40-50; its sessions are 1-30"),
    ],
)
def test_cli_bad_slices_say_what_to_do_and_write_nothing(tmp_path: Path, value: str, message: str) -> None:
    out = tmp_path / "run"
    res = eval_cli(out, "--sessions", value)
    assert res.exit_code in (1, 2) and message in res.output, res.output
    assert not out.exists() or not any(out.iterdir())


def test_help_names_questions_and_sessions_not_limit() -> None:
    res = CliRunner().invoke(cli, ["study", "eval", "--help"])
    assert res.exit_code == 0
    assert "--questions" in res.output and "--sessions" in res.output and "--limit" not in res.output
