"""`memdir study eval --stores-from RUN` (Table 7's grid): a run searches the stores another run built,
with no build step of its own, and says in its manifest where each store came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir_study.eval.runner import RunConfig, run_eval

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"


def config(**kw: Any) -> RunConfig:
    base: dict[str, Any] = dict(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=["foldered", "verbatim-dump"],
        builder_model="scripted/builder",
        search_model="offline",
        limit=2,
    )
    return RunConfig(**(base | kw))


def files(root: Path) -> dict[str, bytes]:
    """Every file of a store but its derived state (`.memdir/`), by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


@pytest.fixture(scope="module")
def run_a(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run A: a scripted builder folders the dump (builder tokens spent), offline search."""
    script = [
        call("rename", old_path="/memories/session-03.md", new_path="/memories/later/session-03.md"),
        answer("Moved session 3."),
    ]
    out = tmp_path_factory.mktemp("a") / "run-a"
    builder = get_model("scripted/builder", script=script)
    summary = run_eval(config(), out, progress=False, models={"scripted/builder": builder})
    assert {c.variant: c.build["model_calls"] for c in summary.cells} == {
        "foldered": 2,
        "verbatim-dump": 0,
    }
    return out


def test_a_run_searches_another_runs_stores_without_building(run_a: Path, tmp_path: Path) -> None:
    out = tmp_path / "run-b"
    cfg = config(stores_from=str(run_a), builder_model="scripted/builder", limit=None)
    summary = run_eval(cfg, out, progress=False, models={})  # no builder model: none is called
    cells = {c.variant: c for c in summary.cells}
    for variant in ("foldered", "verbatim-dump"):
        a = run_a / "stores" / "generated" / SAMPLE / variant
        b = out / "stores" / "generated" / SAMPLE / variant
        assert files(b) == files(a) and files(a), variant  # byte-identical, nothing rebuilt
        build = cells[variant].build
        assert build["model_calls"] == 0 and build["input_tokens"] == 0 and build["tool_calls"] == 0
        assert cells[variant].n_questions == 8 and cells[variant].status == "ok"
    assert cells["foldered"].builder_model == "scripted/builder"  # who built what was searched
    assert cells["foldered"].checks["foldering"]["verified"] is True  # the source cell's check
    calls = [json.loads(x) for x in (out / "calls.jsonl").read_text().splitlines()]
    assert calls and all(e.get("question") for e in calls)  # every record line is a search's
    manifest = json.loads((out / "manifest.json").read_text())
    source = manifest["stores_from"]
    assert source["run"] == str(run_a.resolve())
    assert source["created"] == json.loads((run_a / "manifest.json").read_text())["created"]
    cell = source["cells"][f"generated/{SAMPLE}/foldered"]
    assert cell["store"] == f"stores/generated/{SAMPLE}/foldered" and len(cell["sha256"]) == 64
    assert cell["build"]["model_calls"] == 2  # what the store cost to build, in the source run
    marker = json.loads((out / "cells" / "generated" / SAMPLE / "foldered.json").read_text())
    assert marker["stores_from"] == {"run": str(run_a.resolve()), "cell": f"generated/{SAMPLE}/foldered"}
    # a resumed run keeps its source; another source is refused as other settings are
    assert run_eval(cfg, out, progress=False, models={}) == summary
    with pytest.raises(MemdirError, match="stores_from"):
        run_eval(config(limit=None), out, progress=False, models={})


def test_a_cell_the_source_run_lacks_is_refused_before_any_write(run_a: Path, tmp_path: Path) -> None:
    out = tmp_path / "run-b"
    cfg = config(variants=["verbatim-dump", "chunk-retrieval"], stores_from=str(run_a))
    with pytest.raises(MemdirError, match=f"no store for generated/{SAMPLE}/chunk-retrieval") as err:
        run_eval(cfg, out, progress=False, models={})
    assert "--variants" in str(err.value)  # says what to do
    assert not (out / "manifest.json").exists()
    # closed-book has no store to take: it runs as ever
    cfg = config(variants=["closed-book"], stores_from=str(run_a), limit=None)
    ok = run_eval(cfg, out, progress=False, models={})
    assert ok.cells[0].status == "ok"


def test_a_source_of_other_settings_or_no_run_is_refused(run_a: Path, tmp_path: Path) -> None:
    with pytest.raises(MemdirError, match="sessions"):
        run_eval(config(stores_from=str(run_a), sessions="1-2"), tmp_path / "b", progress=False, models={})
    with pytest.raises(MemdirError, match="built by scripted/builder"):
        run_eval(config(stores_from=str(run_a), builder_model="offline"), tmp_path / "c", progress=False)
    with pytest.raises(MemdirError, match="not a run folder"):
        run_eval(config(stores_from=str(tmp_path)), tmp_path / "d", progress=False)


def test_cli_stores_from_takes_the_source_builder(run_a: Path, tmp_path: Path) -> None:
    out = tmp_path / "run-b"
    base = ["study", "eval", "-b", "generated", "-c", SAMPLE, "-v", "verbatim-dump", "--questions", "1"]
    res = CliRunner().invoke(cli, [*base, "--stores-from", str(run_a), "-o", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["builder_model"] == "scripted/builder"
    assert manifest["config"]["stores_from"] == str(run_a.resolve())
    bad = CliRunner().invoke(
        cli, [*base, "--stores-from", str(tmp_path / "nowhere"), "-o", str(tmp_path / "x")]
    )
    assert bad.exit_code != 0 and "not a run folder" in bad.output


@pytest.mark.slow
def test_ray_workers_take_the_source_stores_as_the_local_run_does(run_a: Path, tmp_path: Path) -> None:
    """A Ray worker's runner finds each store's recorded digest in the manifest the driver wrote."""
    ray = pytest.importorskip(
        "ray", reason="the optional 'ray' extra is not installed (pip install '.[ray]')"
    )
    from memdir_study.eval.ray_executor import RayExecutor

    cfg = config(stores_from=str(run_a), limit=None)
    local = run_eval(cfg, tmp_path / "local", progress=False, models={})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024 * 1024)
    try:
        remote = run_eval(cfg, tmp_path / "ray", progress=False, models={}, executor=RayExecutor())
    finally:
        ray.shutdown()
    assert remote == local
    for variant in ("foldered", "verbatim-dump"):
        a = run_a / "stores" / "generated" / SAMPLE / variant
        assert files(tmp_path / "ray" / "stores" / "generated" / SAMPLE / variant) == files(a)


def test_the_source_builder_is_never_made(run_a: Path, tmp_path: Path) -> None:
    """No client for a builder that builds nothing: the manifest's roles name it, unsent."""
    import asyncio

    from memdir_study.eval.runner import Runner

    runner = Runner(config(stores_from=str(run_a), limit=1), tmp_path / "b", progress=False)
    asyncio.run(runner.run())
    assert "scripted/builder" not in runner.models
    builder = json.loads((tmp_path / "b" / "manifest.json").read_text())["roles"]["builder"]
    assert builder["model"] == "scripted/builder" and builder["effort_sent"] is False


def test_a_source_builder_that_also_searches_is_recorded_as_not_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The study's grid searches a builder's stores with that same model too: the search role is
    sent its effort, the builder, which this run never calls, is recorded with none asked or sent."""
    from agent_helpers import StandIn
    from memdir.models import RetryPolicy

    mini = "openai/gpt-5.4-mini"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000")
    reply = {
        "id": "chatcmpl-1",
        "model": "gpt-5.4-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }
    standin = StandIn().start()
    standin.replies = [(200, reply)] * 50
    try:
        fast = RetryPolicy(max_retries=1, initial_delay=0.01, max_delay=0.05)
        models = {mini: get_model(mini, base_url=standin.url + "/v1", retry=fast)}
        source = tmp_path / "source"
        run_eval(
            config(variants=["verbatim-dump"], builder_model=mini, limit=1),
            source,
            progress=False,
            models=models,
        )
        assert standin.seen == []  # the dump is written without a model
        cfg = config(
            variants=["verbatim-dump"],
            builder_model=mini,
            search_model=mini,
            stores_from=str(source),
            limit=1,
        )
        run_eval(cfg, tmp_path / "grid", progress=False, models=models)
    finally:
        standin.stop()
    assert standin.seen and all(s.body.get("reasoning_effort") == "high" for s in standin.seen)  # search only
    roles = json.loads((tmp_path / "grid" / "manifest.json").read_text())["roles"]
    assert roles["search"]["effort_sent"] is True
    builder = roles["builder"]
    assert (
        builder["model"] == mini and builder["effort_sent"] is False and builder["reasoning_effort"] is None
    )
    assert "--stores-from" in builder["not_played"]


@pytest.mark.parametrize("linked", ["store", "parent"])
def test_a_symlinked_store_in_the_source_run_is_refused_not_followed(
    run_a: Path, tmp_path: Path, linked: str
) -> None:
    """A source run whose store folder (or a folder above it) is a link to a private store elsewhere
    on the machine: the link is never followed, so nothing of that store is copied or searched."""
    import shutil

    source = tmp_path / "source"
    shutil.copytree(run_a, source, symlinks=True)
    private = tmp_path / "private"
    conversation = source / "stores" / "generated" / SAMPLE
    if linked == "store":
        shutil.copytree(conversation / "verbatim-dump", private)
        (private / "secret.md").write_text("The vault code is 4711.\n")
        shutil.rmtree(conversation / "verbatim-dump")
        (conversation / "verbatim-dump").symlink_to(private)
    else:  # stores/generated/<conversation> is the link, the store inside it a real folder
        shutil.copytree(conversation, private / SAMPLE)
        (private / SAMPLE / "verbatim-dump" / "secret.md").write_text("The vault code is 4711.\n")
        shutil.rmtree(conversation)
        conversation.symlink_to(private / SAMPLE)
    out = tmp_path / "run-b"
    cfg = config(variants=["verbatim-dump"], stores_from=str(source), limit=None)
    with pytest.raises(MemdirError, match="symbolic link") as err:
        run_eval(cfg, out, progress=False, models={})
    assert f"generated/{SAMPLE}/verbatim-dump" in str(err.value) and "copy" in str(err.value)
    assert not (out / "manifest.json").exists()  # refused before this run wrote anything
    assert not list(out.rglob("secret.md"))


def test_a_store_swapped_for_a_link_after_the_run_started_is_not_copied(run_a: Path, tmp_path: Path) -> None:
    """The store checked when the run starts is swapped for a link to a byte-identical store elsewhere
    before its cell is taken: taking it refuses the link instead of copying what it points at."""
    import shutil

    from memdir_study.eval.runner import ConversationCell
    from memdir_study.eval.stores_from import StoreSource

    source = tmp_path / "source"
    shutil.copytree(run_a, source, symlinks=True)
    source_store = source / "stores" / "generated" / SAMPLE / "verbatim-dump"
    taken = StoreSource.open(source).require([("generated", SAMPLE, "verbatim-dump")])
    sha256 = taken["cells"][f"generated/{SAMPLE}/verbatim-dump"]["sha256"]
    private = tmp_path / "private"
    shutil.copytree(source_store, private)
    shutil.rmtree(source_store)
    source_store.symlink_to(private)
    cell = ConversationCell("generated", SAMPLE, "verbatim-dump")
    dest = tmp_path / "run-b" / "store"
    with pytest.raises(MemdirError, match="symbolic link"):
        StoreSource.open(source).take(cell, dest, sha256)
    assert not dest.exists() and cell.stores_from is None
