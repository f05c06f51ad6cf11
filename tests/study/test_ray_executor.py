"""The Ray executor (docs/eval.md, "Running on Ray"): the same cells run as Ray tasks write the
same run folder as the local asyncio path, resume from it the same way, and ship no secret.

One local Ray cluster (2 CPUs, no dashboard, a small object store) serves the whole module:
starting one costs seconds on two cores. The wall times, a measurement of the machine, are
kept in `timings.json`, so `summary.json` must match byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.models import get_model
from memdir_study.cluster import PASSED_ENV, ModelSpec, worker_env
from memdir_study.eval.runner import RunConfig, run_eval

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"  # 8 questions
VARIANTS = ["chunk-retrieval", "verbatim-dump"]  # two variants the offline baselines play


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip(
        "ray", reason="the optional 'ray' extra is not installed (pip install '.[ray]')"
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024 * 1024)
    yield ray
    ray.shutdown()


def config(**kw: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=VARIANTS,
        builder_model="offline",
        search_model="offline",
    )
    return RunConfig(**(base | kw))


def store_bytes(out: Path) -> dict[str, bytes]:
    """Every file the cells' stores hold (derived state under .memdir aside), by path."""
    root = out / "stores"
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "run"
    run_eval(config(), out, progress=False)
    return out


@pytest.mark.slow
def test_a_ray_run_writes_the_same_folder_as_a_local_one(
    ray_cluster: Any, local_run: Path, tmp_path: Path
) -> None:
    from memdir_study.eval.ray_executor import RayExecutor

    out = tmp_path / "ray"
    summary = run_eval(config(), out, progress=False, executor=RayExecutor())
    assert (out / "summary.json").read_bytes() == summary.to_json()
    assert (out / "summary.json").read_bytes() == (local_run / "summary.json").read_bytes()
    assert [c.status for c in summary.cells] == ["ok", "ok"]
    # the rows themselves, whatever order the workers appended them in
    lines = {d: sorted((d / "answers.jsonl").read_text().splitlines()) for d in (out, local_run)}
    assert len(lines[out]) == 16 and lines[out] == lines[local_run]
    assert store_bytes(out) == store_bytes(local_run) != {}
    assert ray_cluster.is_initialized()  # the module's cluster was used, and left running


@pytest.mark.slow
def test_an_interrupted_ray_run_resumes_to_the_clean_run(
    ray_cluster: Any, local_run: Path, tmp_path: Path
) -> None:
    from memdir_study.eval.ray_executor import RayExecutor

    out = tmp_path / "resumed"
    partial = run_eval(config(limit=3), out, progress=False, executor=RayExecutor(cells_at_once=1))
    assert [c.n_questions for c in partial.cells] == [3, 3]
    # What a kill leaves: the last answer cut mid-line, and the dump's build cut short (its store
    # written, its marker not yet).
    answers = out / "answers.jsonl"
    answers.write_bytes(answers.read_bytes()[:-40])
    (out / "cells" / "generated" / SAMPLE / "verbatim-dump.json").unlink()
    kept = out / "cells" / "generated" / SAMPLE / "chunk-retrieval.json"
    kept_marker = kept.read_bytes()
    kept_store = {
        p: p.stat().st_mtime_ns
        for p in (out / "stores" / "generated" / SAMPLE / "chunk-retrieval").rglob("*.md")
    }

    run_eval(config(), out, progress=False, executor=RayExecutor())
    assert (out / "summary.json").read_bytes() == (local_run / "summary.json").read_bytes()
    # the finished build was not run again; the cut one was
    assert kept.read_bytes() == kept_marker
    assert kept_store and {p: p.stat().st_mtime_ns for p in kept_store} == kept_store
    rows = [json.loads(x) for x in answers.read_text().splitlines()]
    keys = [(r["variant"], r["question_id"]) for r in rows]
    assert len(keys) == len(set(keys)) == 16
    assert store_bytes(out) == store_bytes(local_run)


@pytest.mark.slow
def test_a_ray_skill_chain_plays_as_the_local_one(ray_cluster: Any, tmp_path: Path) -> None:
    pytest.importorskip("alfworld", reason="the optional 'alfworld' extra is not installed")
    from memdir_study.bench.alfworld import load_games
    from memdir_study.skills.chain import run_chains
    from memdir_study.skills.ray_executor import RayChainRunner
    from memdir_study.skills.report import write_report

    try:
        games = load_games()
    except MemdirError as exc:
        pytest.skip(f"no ALFWorld data: {exc}")
    variants = ["episode-log", "curated-skills"]
    rows = {}
    for name, runner in (("local", None), ("ray", RayChainRunner())):
        rows[name] = run_chains(tmp_path / name, variants, games=games, n_tasks=1, runner=runner)
        write_report(tmp_path / name)

    def same(rs: list[Any]) -> list[dict[str, Any]]:  # the wall times and the journal's commit ids aside
        return [{k: v for k, v in r.items() if k not in ("seconds", "snapshot")} for r in rs]

    assert [r["variant"] for r in rows["ray"]] == variants
    assert same(rows["ray"]) == same(rows["local"])
    assert (tmp_path / "ray" / "summary.json").read_bytes() == (
        tmp_path / "local" / "summary.json"
    ).read_bytes()
    assert store_bytes(tmp_path / "ray") == store_bytes(tmp_path / "local") != {}


def test_the_ray_options_are_refused_on_the_local_executor(tmp_path: Path) -> None:
    base = ["study", "eval", "-b", "generated", "-c", SAMPLE, "-v", "closed-book", "--no-progress", "--out"]
    for extra in (["--address", "auto"], ["--cells-at-once", "2"]):
        result = CliRunner().invoke(cli, [*base, str(tmp_path / "x"), *extra])
        assert result.exit_code == 2 and "only with --executor ray" in result.output
        assert not (tmp_path / "x").exists()
    skills = ["study", "skills", "--variants", "no-store", "--address", "auto", "--out", str(tmp_path / "s")]
    result = CliRunner().invoke(cli, skills)
    assert result.exit_code == 2 and "only with --executor ray" in result.output
    assert not (tmp_path / "s").exists()


def test_a_model_only_this_process_holds_is_refused_for_ray() -> None:
    with pytest.raises(MemdirError, match="local executor"):
        ModelSpec.of("scripted", get_model("scripted", script=[]))


def test_workers_are_handed_only_the_keys_the_run_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-other")
    monkeypatch.setenv("SOME_OTHER_SECRET", "x")
    model = get_model("openai/gpt-5.4-mini")
    env = worker_env({model.name: model})
    assert env["OPENAI_API_KEY"] == "sk-test-key"
    assert "ANTHROPIC_API_KEY" not in env and "SOME_OTHER_SECRET" not in env
    assert set(env) - {"OPENAI_API_KEY"} <= set(PASSED_ENV)
    assert "sk-test-key" not in repr(ModelSpec.of(model.name, model))  # specs travel to workers
    assert set(worker_env({})) <= set(PASSED_ENV)  # an offline run hands a cluster no key


@pytest.mark.slow
def test_the_commands_run_on_ray(ray_cluster: Any, local_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    args = ["study", "eval", "-b", "generated", "-c", SAMPLE, "-v", ",".join(VARIANTS), "--no-progress"]
    result = CliRunner().invoke(cli, [*args, "--executor", "ray", "--cells-at-once", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "summary.json").read_bytes() == (local_run / "summary.json").read_bytes()
    assert (out / "report.md").is_file()


@pytest.mark.slow
def test_workers_call_the_model_with_the_key_from_the_environment_only(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model cell on Ray: the key set after the cluster started still reaches the worker (in
    the task's runtime environment), the provider gets it, and no file of the run holds it."""
    from agent_helpers import StandIn, fixture
    from memdir_study.eval.ray_executor import RayExecutor

    key = "sk-test-ray-0000000000000000"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    server = StandIn(replies=[(200, fixture("openai_answer.json"))] * 8).start()
    try:
        model = get_model("openai/gpt-5.4-mini", base_url=server.url + "/v1")
        out = tmp_path / "model"
        cfg = config(variants=["closed-book"], search_model=model.name, in_flight=2)
        summary = run_eval(cfg, out, progress=False, models={model.name: model}, executor=RayExecutor())
    finally:
        server.stop()
    (cell,) = summary.cells
    assert cell.status == "ok" and cell.n_questions == 8, cell
    assert len(server.seen) == 8 and {s.headers["authorization"] for s in server.seen} == {f"Bearer {key}"}
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written and not [p for p in written if key.encode() in p.read_bytes()]
    assert (
        json.loads((out / "manifest.json").read_text())["models"][model.name]["base_url"]
        == server.url + "/v1"
    )
