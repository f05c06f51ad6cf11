"""The eval runner end to end on a tiny generated conversation, offline: the run folder, the
summary's keys, resume, and a cell whose model fails (scripted model at the LLM boundary)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.models import get_model
from memdir_study.eval.records import RunSummary
from memdir_study.eval.runner import RunConfig, run_eval

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"  # 8 questions
VARIANTS = ["closed-book", "chunk-retrieval", "verbatim-dump", "foldered", "agent-curated"]
SEARCH_KEYS = {
    "tool_calls",
    "rounds",
    "bytes_read",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_usd",
    "prompt_kb",
}


def config(**kw: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=VARIANTS,
        builder_model="offline",
        search_model="offline",
    )
    return RunConfig(**(base | kw))


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunSummary]:
    out = tmp_path_factory.mktemp("run") / "full"
    return out, run_eval(config(), out, progress=False)


def test_run_folder_and_summary_keys(full_run: tuple[Path, RunSummary]) -> None:
    out, summary = full_run
    for name in ("manifest.json", "answers.jsonl", "calls.jsonl", "summary.json"):
        assert (out / name).is_file(), name
    assert RunSummary.read(out / "summary.json") == summary
    assert (out / "summary.json").read_bytes() == summary.to_json()
    rows = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    answered = [v for v in VARIANTS if v != "foldered"]
    assert len(rows) == 8 * len(answered)
    for r in rows:
        assert {
            "variant",
            "question_id",
            "category",
            "question",
            "gold",
            "answer",
            "citations",
            "correctness",
            "attribution",
        } <= r.keys()
    cells = {c.variant: c for c in summary.cells}
    assert list(cells) == VARIANTS
    for c in summary.as_json()["cells"]:
        assert {
            "benchmark",
            "conversation",
            "variant",
            "model",
            "judge",
            "n_questions",
            "correctness",
            "attribution",
            "search",
            "build",
            "store",
        } <= c.keys()
        assert set(c["search"]) == SEARCH_KEYS
        assert {"tool_calls", "input_tokens", "output_tokens", "cost_usd"} <= c["build"].keys()
        assert "seconds" not in c["build"]  # wall time: timings.json, so runs compare byte for byte
    folder = cells["foldered"]
    assert folder.status == "skipped" and folder.reason is not None and "needs a model" in folder.reason
    assert folder.n_questions == 0
    closed = cells["closed-book"]
    assert closed.store is None and closed.correctness is not None and closed.correctness.all.mean == 0.0
    dump = cells["verbatim-dump"]
    assert dump.status == "ok" and dump.n_questions == 8 and dump.store and dump.store["files"] == 4
    assert (dump.search.bytes_read or 0) > 0 and dump.search.cost_usd == 0.0
    assert cells["agent-curated"].build["tool_calls"] > 0
    times = {t["variant"]: t for t in json.loads((out / "timings.json").read_text())["cells"]}
    assert times.keys() == cells.keys() and times["agent-curated"]["build_seconds"] > 0
    assert all(t["build_seconds"] >= 0 for t in times.values())
    assert times["verbatim-dump"]["judge_seconds"] is None  # the offline judge takes no time to time
    assert cells["chunk-retrieval"].search.tool_calls == 1.0  # one retrieval per question
    # the stores live under the run folder, where memdir stats can read them
    assert (out / "stores" / "generated" / SAMPLE / "agent-curated" / "MEMORY.md").is_file()
    # scores are real: the dump answers some question better than knowing nothing
    assert dump.correctness and (dump.correctness.all.mean or 0) > (closed.correctness.all.mean or 0)
    hits = [r["evidence_hit"] for r in rows if r["variant"] == "verbatim-dump"]
    assert set(hits) <= {0.0, 1.0} and dump.evidence_hit and dump.evidence_hit.all.n == 8 and 1.0 in hits


def test_resumed_run_summarizes_like_an_uninterrupted_one(
    tmp_path: Path, full_run: tuple[Path, RunSummary]
) -> None:
    out = tmp_path / "resumed"
    partial = run_eval(config(limit=3), out, progress=False)
    assert {c.n_questions for c in partial.cells if c.status != "skipped"} == {3}
    assert all(c.status in ("partial", "skipped") for c in partial.cells)
    builds = {c.variant: c.build for c in partial.cells}
    # cut the last answer line in half, as a kill mid-write would
    text = (out / "answers.jsonl").read_text()
    (out / "answers.jsonl").write_text(text[: len(text) - 40])
    resumed = run_eval(config(), out, progress=False)
    assert (out / "summary.json").read_bytes() == (full_run[0] / "summary.json").read_bytes()
    assert {c.variant: c.build for c in resumed.cells} == builds  # built once, not again
    rows = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines() if x.endswith("}")]
    keys = [(r["variant"], r["question_id"]) for r in rows]
    assert len(keys) == len(set(keys)) == 8 * 4


def test_other_settings_in_the_same_folder_are_refused(full_run: tuple[Path, RunSummary]) -> None:
    from memdir.errors import MemdirError

    with pytest.raises(MemdirError, match="other settings"):
        run_eval(config(tool_set="center-bm25"), full_run[0], progress=False)


def test_tool_set_names_the_profiles_in_the_manifest(tmp_path: Path) -> None:
    base = ["study", "eval", "-b", "generated", "-c", SAMPLE, "-v", "closed-book", "--no-progress"]
    res = CliRunner().invoke(cli, [*base, "--tool-set", "center-bm25", "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    config = json.loads((tmp_path / "run" / "manifest.json").read_text())["config"]
    assert config["tool_set"] == "center-bm25" and "harness" not in config
    for command in ("eval", "skills"):
        shown = CliRunner().invoke(cli, ["study", command, "--help"]).output
        assert "--tool-set" in shown and "--harness" not in shown


def test_the_shell_tool_set_with_offline_roles_is_refused_up_front(tmp_path: Path) -> None:
    from memdir.errors import MemdirError

    with pytest.raises(MemdirError, match="needs a model for the search and builder role"):
        run_eval(config(tool_set="shell"), tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "answers.jsonl").exists()


def test_search_under_the_shell_tool_set_cannot_change_the_store(tmp_path: Path) -> None:
    from memdir.models.scripted import answer, call
    from memdir.tools.sandbox import shell_available

    if not shell_available():
        pytest.skip("no sandbox for the shell tool on this machine")
    reply = '{"answer": "x", "citations": ["/memories/session-01.md:6"]}'
    script = [call("bash", command="echo scribble >> session-01.md; grep -c . session-01.md"), answer(reply)]
    model = get_model("scripted/shell", script=script)
    cfg = config(variants=["verbatim-dump"], search_model="scripted/shell", tool_set="shell", limit=1)
    out = tmp_path / "run"
    summary = run_eval(cfg, out, progress=False, models={"scripted/shell": model})
    (cell,) = summary.cells
    assert cell.n_questions == 1 and cell.search.tool_calls == 1
    (row,) = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    assert row["citations"] == ["/memories/session-01.md:6"] and row["citations_not_found"] == []
    dump = out / "stores" / "generated" / SAMPLE / "verbatim-dump" / "session-01.md"
    assert "scribble" not in dump.read_text()  # the search wrote to a scratch copy
    tool_reply = model.api.requests[1][0][-1].content  # type: ignore[attr-defined]
    lines_in_copy = sum(1 for x in dump.read_text().split("\n") if x) + 1  # the scribble counted
    assert f"{lines_in_copy}\n" in tool_reply and "[exit status 0]" in tool_reply  # it ran, in the copy


def test_a_cell_whose_model_fails_is_aborted_whole(tmp_path: Path) -> None:
    from memdir.models.scripted import answer

    # two good answers, then the provider fails for good: the cell must not report 2 of 8
    failing = get_model(
        "scripted/failing", script=[answer("ANSWER: x"), answer("ANSWER: y"), ValueError("down")]
    )
    out = tmp_path / "run"
    cfg = config(variants=["verbatim-dump"], search_model="scripted/failing", in_flight=1)
    summary = run_eval(cfg, out, progress=False, models={"scripted/failing": failing})
    (cell,) = summary.cells
    assert (
        cell.status == "aborted" and cell.reason and "search failed" in cell.reason and "down" in cell.reason
    )
    assert cell.n_questions == 0 and cell.correctness is None
    assert (out / "answers.jsonl").read_text() == ""
    marker = json.loads((out / "cells" / "generated" / SAMPLE / "verbatim-dump.json").read_text())
    assert marker["status"] == "aborted"
    assert any(e["kind"] == "error" for e in map(json.loads, (out / "calls.jsonl").read_text().splitlines()))
    # a rerun starts the aborted cell over, whole
    working = get_model("scripted/failing", script=[answer("vegan") for _ in range(8)])
    again = run_eval(cfg, out, progress=False, models={"scripted/failing": working})
    assert again.cells[0].status == "ok" and again.cells[0].n_questions == 8
    assert (again.cells[0].search.input_tokens or 0) > 0  # the scripted provider counts its prompts


def test_cli_eval_prints_the_table_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    res = CliRunner().invoke(
        cli,
        [
            "study",
            "eval",
            "-b",
            "generated",
            "-c",
            SAMPLE,
            "-v",
            "closed-book,verbatim-dump",
            "--model",
            "offline",
            "--judge",
            "offline",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "| verbatim-dump | ok | 8 |" in res.output
    report = (out / "report.md").read_text()
    assert "## Search cost per query" in report and (out / "variants.png").stat().st_size > 1000


def test_questions_in_flight_default_to_one_for_the_local_model_and_zero_is_refused(tmp_path: Path) -> None:
    """The local model's one server keeps one prompt's prefix cache: eight interleaved questions
    defeated it (docs/curation.md), so a run whose search model or judge is local answers one
    question at a time unless told otherwise; `--in-flight 0` would wait forever, and is refused
    before anything is written."""
    from memdir_study.eval.model_settings import IN_FLIGHT, default_in_flight

    assert default_in_flight([get_model("local")]) == 1  # built, not started: no server runs
    assert default_in_flight([get_model("offline"), get_model("local/qwen2.5-coder-1.5b")]) == 1
    assert default_in_flight([get_model("offline")]) == default_in_flight([]) == IN_FLIGHT == 8
    out = tmp_path / "run"
    base = ["study", "eval", "-b", "generated", "-c", SAMPLE, "-v", "closed-book", "--no-progress"]
    res = CliRunner().invoke(cli, [*base, "--in-flight", "0", "--out", str(out)])
    assert res.exit_code == 2 and "--in-flight" in res.output and ">=1" in res.output, res.output
    assert not out.exists()
    res = CliRunner().invoke(cli, [*base, "--model", "offline", "--judge", "offline", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "manifest.json").read_text())["in_flight"] == IN_FLIGHT


def test_an_llm_judge_scores_correctness_and_attribution(tmp_path: Path) -> None:
    from memdir.models.scripted import answer

    def scales(cc: float, rel: float, coh: float) -> str:
        return json.dumps(
            {"reason": "r", "citation_correctness": cc, "relevance": rel, "coherent_aggregation": coh}
        )

    replies = ["VERDICT: CORRECT", scales(0, 0, 0), '{"reason": "r", "verdict": "WRONG"}', scales(1, 1, 0.5)]
    judge = get_model("scripted/judge", script=[answer(r) for r in replies])
    cfg = config(variants=["verbatim-dump"], judge="scripted/judge", limit=2, in_flight=1)
    summary = run_eval(cfg, tmp_path / "run", progress=False, models={"scripted/judge": judge})
    rows = [json.loads(x) for x in (tmp_path / "run" / "answers.jsonl").read_text().splitlines()]
    assert [(r["correctness"], r["attribution"]) for r in rows] == [(1.0, 0.0), (0.0, 1.0)]
    assert rows[1]["judge"]["scales"] == {
        "citation_correctness": 1,
        "relevance": 1,
        "coherent_aggregation": 0.5,
    }
    assert all(isinstance(r["f1"], float) for r in rows)  # the offline score is kept beside the judge's
    prompt = judge.api.requests[1][0][0].content  # type: ignore[attr-defined]
    assert rows[0]["citations"][0].split(":")[0] in prompt  # the attribution judge saw the cited file
    assert summary.cells[0].judge == "scripted/judge"
    lines = [json.loads(x) for x in (tmp_path / "run" / "calls.jsonl").read_text().splitlines()]
    verdicts = [e for e in lines if e["kind"] == "judge"]
    # every reply is in the record, with its question, label, prompt id and usage
    assert [(e["question"], e["judge"], e["label"]) for e in verdicts] == [
        (rows[0]["question_id"], "correctness", "correct"),
        (rows[0]["question_id"], "attribution", "scored"),
        (rows[1]["question_id"], "correctness", "wrong"),
        (rows[1]["question_id"], "attribution", "scored"),
    ]
    assert verdicts[0]["reply"] == "VERDICT: CORRECT" and len(verdicts[0]["prompt_id"]) == 12
    assert verdicts[0]["usage"]["calls"] == 1
    assert rows[0]["judge"]["labels"] == {"correctness": "correct", "attribution": "scored"}
    health = summary.cells[0].judge_health
    agree = sum((r["correctness"] == 1.0) == (r["f1"] >= 0.5) for r in rows) / 2
    assert health is not None and health.verdicts == 4 and health.unparsed == 0
    assert health.judge_f1_agreement == agree and health.agreement_n == 2
    from memdir_study.eval.report import write_report

    report = write_report(tmp_path / "run").read_text()
    assert "## The judge against offline F1" in report
    # the composite: 0.1 x coherent aggregation + 0.6 x correctness + 0.3 x relevance, per answer
    # (0.6 and 0.1 x 0.5 + 0.3 x 1 = 0.35), the cell's mean in the correctness table's column
    comp = summary.cells[0].composite
    assert comp is not None and comp.all.mean == pytest.approx(0.475) and comp.all.n == 2
    assert "| correctness | without defective golds | attribution | composite |" in report
    assert "| verbatim-dump | partial | 2 | 50.0 | 50.0 | 50.0 | 47.5 |" in report  # limit=2: partial


def test_an_unparsed_verdict_is_counted_and_its_reply_kept(tmp_path: Path) -> None:
    from memdir.models.scripted import answer

    replies = ["Therefore, the VERDICT is CORRECT.", "VERDICT: SUPPORTED"]  # no JSON, no verdict line
    judge = get_model("scripted/judge", script=[answer(r) for r in replies])
    cfg = config(variants=["verbatim-dump"], judge="scripted/judge", limit=1, in_flight=1)
    summary = run_eval(cfg, tmp_path / "run", progress=False, models={"scripted/judge": judge})
    row = json.loads((tmp_path / "run" / "answers.jsonl").read_text())
    assert row["correctness"] is None and row["attribution"] is None
    assert row["judge"]["labels"] == {"correctness": "unparsed", "attribution": "unparsed"}
    health = summary.cells[0].judge_health
    assert health is not None and health.unparsed == 2 and health.judge_f1_agreement is None
    lines = [json.loads(x) for x in (tmp_path / "run" / "calls.jsonl").read_text().splitlines()]
    unparsed = [e for e in lines if e["kind"] == "judge" and e["label"] == "unparsed"]
    assert [e["reply"] for e in unparsed] == replies


def test_multiple_choice_is_scored_by_the_chosen_letter(tmp_path: Path) -> None:
    import asyncio
    from dataclasses import replace

    from memdir.agents import RunRecord
    from memdir_study.bench import load_sample
    from memdir_study.eval.runner import ConversationCell, Runner
    from memdir_study.variants import VARIANTS, BuildContext

    sample = load_sample("generated", SAMPLE)
    q = next(q for q in sample.questions if q.category == "current")
    mc = replace(q, id="mc", options=("a zebra-striped submarine", q.gold), gold="(b)")
    runner = Runner(config(), tmp_path / "run", progress=False)
    model = get_model("offline")
    built = asyncio.run(
        VARIANTS["verbatim-dump"].build(BuildContext(sample, tmp_path / "s", model, RunRecord(None)))
    )
    cell = ConversationCell("generated", SAMPLE, "verbatim-dump")
    row = asyncio.run(runner.ask(model, None, built, cell, mc, RunRecord(None)))
    assert row.answer == f"(b) {q.gold}" and row.correctness == 1.0
    assert (row.search.tool_calls or 0) > 0


def test_a_model_built_cell_records_its_check_and_cost(tmp_path: Path) -> None:
    from memdir.models.scripted import answer, call

    script = [
        call("rename", old_path="/memories/session-03.md", new_path="/memories/later/session-03.md"),
        answer("Moved session 3."),
    ]
    builder = get_model("scripted/builder", script=script)
    cfg = config(variants=["foldered"], builder_model="scripted/builder", limit=2)
    summary = run_eval(cfg, tmp_path / "run", progress=False, models={"scripted/builder": builder})
    (cell,) = summary.cells
    assert cell.status == "partial" and cell.n_questions == 2  # searched offline over the moved store
    assert cell.builder_model == "scripted/builder" and cell.model == "offline"
    assert cell.checks["foldering"]["moves"] == {"/memories/session-03.md": "/memories/later/session-03.md"}
    b = cell.build
    assert b["model_calls"] == 2 and b["tool_calls"] == 1 and b["input_tokens"] > 0
    assert b["cost_usd"] == round((b["input_tokens"] * 0.75 + b["output_tokens"] * 4.50) / 1e6, 6)
    assert cell.store and cell.store["dirs"] == 1  # later/: the root is not counted


def test_closed_book_multiple_choice_sees_the_options_and_its_letter_is_scored(tmp_path: Path) -> None:
    """PersonaMem's closed-book floor (the paper's 34.4 / 47.6) is a choice among the options:
    the model must be shown them, and the letter it answers is scored by exact match."""
    import asyncio
    from dataclasses import replace

    from memdir.agents import RunRecord
    from memdir.models.scripted import answer
    from memdir_study.bench import load_sample
    from memdir_study.eval.runner import ConversationCell, Runner
    from memdir_study.variants import Built

    sample = load_sample("generated", SAMPLE)
    q = next(q for q in sample.questions if q.category == "current")
    mc = replace(q, id="mc", options=("a zebra-striped submarine", q.gold), gold="(b)")
    model = get_model("scripted/closed", script=[answer('{"answer": "(b)", "citations": []}')])
    runner = Runner(config(variants=["closed-book"]), tmp_path / "run", progress=False)
    cell = ConversationCell("generated", SAMPLE, "closed-book")
    built = Built("closed-book", None, None)
    row = asyncio.run(runner.ask(model, None, built, cell, mc, RunRecord(None)))
    ((messages, tools, _),) = model.api.requests  # type: ignore[attr-defined]
    sent = "\n".join(m.content for m in messages)
    assert "(a) a zebra-striped submarine" in sent and f"(b) {q.gold}" in sent and tools == []
    assert row.answer == f"(b) {q.gold}" and row.correctness == 1.0 and row.attribution is None


def test_run_config_is_built_by_keywords_only() -> None:
    """Builder and search model, judge and tool set are all strings: a position would swap them
    silently, so a RunConfig names every setting."""
    with pytest.raises(TypeError, match="positional"):
        RunConfig("generated", [SAMPLE], VARIANTS, "offline", "offline")  # type: ignore[misc]
    assert config().search_model == "offline"
