"""The model settings of the paper's Table 11 in a run (docs/study.md, Configuration of record
(Table 11)): each role's reasoning effort on the OpenAI wire (recorded by a local stand-in
server), the judge at temperature 0, the manifest's record of both, each role priced with its
own card, and the reasoning share (Rsn%) and cached input in the report's tables."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent_helpers import StandIn
from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.models import RetryPolicy, Usage, get_model, price_card
from memdir_study.eval.records import CellSummary
from memdir_study.eval.report import build_table, search_table, write_report
from memdir_study.eval.runner import RunConfig, run_eval

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"
PLACE = "pick_and_place_simple-ToiletPaper-None-ToiletPaperHanger-406/trial_T20190908_122858_883968"
KEYCHAIN = "look_at_obj_in_light-KeyChain-None-DeskLamp-327/trial_T20190906_202601_548273"
MINI, NANO = "openai/gpt-5.4-mini", "openai/gpt-5.4-nano"
# One reply every role can read: the builder's episode ends on it, the search answers with it
# (an answer line with no citation), and both judges parse it.
REPLY = json.dumps(
    {
        "reason": "r",
        "verdict": "CORRECT",
        "citation_correctness": 1,
        "relevance": 0.5,
        "coherent_aggregation": 1,
    }
)
USAGE = {
    "prompt_tokens": 1000,
    "completion_tokens": 200,
    "prompt_tokens_details": {"cached_tokens": 800},
    "completion_tokens_details": {"reasoning_tokens": 150},
}


def completion(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
        ],
        "usage": USAGE,
    }


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000")
    s = StandIn().start()
    s.replies = [(200, completion("gpt-5.4-mini"))] * 400
    yield s
    s.stop()


def models(standin: StandIn, *names: str) -> dict[str, Any]:
    fast = RetryPolicy(max_retries=3, initial_delay=0.01, max_delay=0.05)
    return {n: get_model(n, base_url=standin.url + "/v1", retry=fast) for n in names}


def role_of(body: dict[str, Any]) -> str:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    return "builder" if "create" in tools else "search" if tools else "judge"


def test_each_role_sends_its_reasoning_effort_and_the_judge_temperature_zero(
    standin: StandIn, tmp_path: Path
) -> None:
    cfg = RunConfig(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=["agent-curated"],
        builder_model=MINI,
        search_model=MINI,
        judge=NANO,
        sessions="1",
        limit=1,
        in_flight=1,
        reasoning_effort={"builder": "medium"},  # search and judge keep the study's high / low
        role_cards={"judge": "gpt-5.4-nano"},
    )
    summary = run_eval(cfg, tmp_path / "run", progress=False, models=models(standin, MINI, NANO))
    assert [(c.status, c.reason) for c in summary.cells] == [("partial", None)]  # 1 question
    bodies = [s.body for s in standin.seen]
    sent = {(role_of(b), b["model"], b.get("reasoning_effort"), b.get("temperature")) for b in bodies}
    assert sent == {
        ("builder", "gpt-5.4-mini", "medium", None),
        ("search", "gpt-5.4-mini", "high", None),
        ("judge", "gpt-5.4-nano", "low", 0.0),
    }
    assert [role_of(b) for b in bodies].count("judge") == 2  # correctness, then attribution
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["roles"] == {
        "builder": {
            "model": MINI,
            "reasoning_effort": "medium",
            "effort_sent": True,
            "price_card": "gpt-5.4-mini",
        },
        "search": {
            "model": MINI,
            "reasoning_effort": "high",
            "effort_sent": True,
            "price_card": "gpt-5.4-mini",
        },
        "judge": {
            "model": NANO,
            "reasoning_effort": "low",
            "effort_sent": True,
            "price_card": "gpt-5.4-nano",
            "temperature": 0.0,
        },
    }
    assert manifest["config"]["reasoning_effort"] == {"builder": "medium", "search": "high", "judge": "low"}
    assert manifest["config"]["role_cards"] == {"judge": "gpt-5.4-nano"}
    # each bill at its role's card: the judge's two calls at nano's rates, not mini's
    row = json.loads((tmp_path / "run" / "answers.jsonl").read_text().splitlines()[0])
    call = Usage(input_uncached=200, input_cached=800, output=200, reasoning=150)
    nano, mini = price_card("gpt-5.4-nano"), price_card("gpt-5.4-mini")
    assert nano is not None and mini is not None
    assert row["judge"]["cost_usd"] == pytest.approx(2 * nano.cost(call))
    assert row["search"]["cost_usd"] == pytest.approx(row["search"]["rounds"] * mini.cost(call))
    cell = summary.cells[0]
    assert row["attribution"] == pytest.approx(0.5)  # the study's attribution: the relevance scale
    scales = {"citation_correctness": 1.0, "relevance": 0.5, "coherent_aggregation": 1.0, "n": 1}
    assert cell.judge_health and cell.judge_health.scales
    assert cell.judge_health.scales.as_json() == scales
    report = write_report(tmp_path / "run").read_text()
    assert "| agent-curated | 1 | 100.0 | 50.0 | 100.0 |" in report
    assert cell.search.reasoning_tokens == 150 * (cell.search.rounds or 0)
    assert cell.build["reasoning_tokens"] == 150 * cell.build["model_calls"] > 0


def test_a_model_without_a_reasoning_control_is_sent_none_and_the_manifest_says_so(
    standin: StandIn, tmp_path: Path
) -> None:
    cfg = RunConfig(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=["closed-book"],
        builder_model="offline",
        search_model="openai/gpt-4.1",
        judge="openai/gpt-4.1",
        limit=1,
    )
    run_eval(cfg, tmp_path / "run", progress=False, models=models(standin, "openai/gpt-4.1"))
    assert all("reasoning_effort" not in s.body for s in standin.seen)
    assert [s.body.get("temperature") for s in standin.seen] == [None, 0.0, 0.0]  # search, then the judge
    row = json.loads((tmp_path / "run" / "answers.jsonl").read_text())
    assert row["variant"] == "closed-book" and row["attribution"] == pytest.approx(0.5)  # attributed too
    assert row["judge"]["labels"] == {"correctness": "correct", "attribution": "scored"}
    roles = json.loads((tmp_path / "run" / "manifest.json").read_text())["roles"]
    assert roles["search"]["reasoning_effort"] == "high" and roles["search"]["effort_sent"] is False
    assert roles["builder"] == {
        "model": "offline",
        "reasoning_effort": "high",
        "effort_sent": False,
        "price_card": "gpt-5.4-mini",
    }


def test_efforts_and_cards_refuse_unknown_roles_and_levels(tmp_path: Path) -> None:
    with pytest.raises(MemdirError, match="unknown reasoning effort judge=extreme"):
        RunConfig(
            benchmark="generated",
            conversations=[SAMPLE],
            variants=["closed-book"],
            builder_model="offline",
            search_model="offline",
            reasoning_effort={"judge": "extreme"},
        )
    with pytest.raises(MemdirError, match="no role curator"):
        run_eval(
            RunConfig(
                benchmark="generated",
                conversations=[SAMPLE],
                variants=["closed-book"],
                builder_model="offline",
                search_model="offline",
                role_cards={"curator": "gpt-4.1"},
            ),
            tmp_path / "run",
            progress=False,
        )
    assert not (tmp_path / "run").exists()  # refused before the folder was made


def test_the_cli_takes_efforts_and_cards_per_role(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    args = [
        "study",
        "eval",
        "-b",
        "generated",
        "-c",
        SAMPLE,
        "-v",
        "closed-book",
        "--questions",
        "1",
        "--no-progress",
    ]
    res = CliRunner().invoke(
        cli,
        [
            *args,
            "--out",
            str(out),
            "--reasoning-effort",
            "medium",
            "--reasoning-effort",
            "judge=off",
            "--price-card",
            "gpt-5.4",
            "--price-card",
            "judge=gpt-5.4-nano",
        ],
    )
    assert res.exit_code == 0, res.output
    roles = json.loads((out / "manifest.json").read_text())["roles"]
    assert {r: (v["reasoning_effort"], v["price_card"]) for r, v in roles.items()} == {
        "builder": ("medium", "gpt-5.4"),
        "search": ("medium", "gpt-5.4"),
        "judge": (None, "gpt-5.4-nano"),
    }
    bad = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "bad"), "--reasoning-effort", "judge=max"])
    assert bad.exit_code != 0 and "unknown reasoning effort max" in bad.output
    assert not (tmp_path / "bad").exists()


def test_rsn_share_and_cached_input_in_the_report_tables() -> None:
    cell = {
        "benchmark": "generated",
        "conversation": "c",
        "variant": "agent-curated",
        "status": "ok",
        "checks": {},
        "store": {},
        "search": {
            "tool_calls": 6.0,
            "rounds": 4.7,
            "bytes_read": 2048,
            "input_tokens": 300.0,
            "cached_tokens": 900.0,
            "output_tokens": 400.0,
            "reasoning_tokens": 300.0,
            "cost_usd": 0.01,
        },
        "build": {
            "tool_calls": 3,
            "input_tokens": 100,
            "cached_tokens": 4321,
            "output_tokens": 50,
            "reasoning_tokens": 10,
            "cost_usd": 0.5,
        },
    }
    search = search_table([CellSummary.model_validate(cell)])
    assert "Rsn%" in search[0].split("|")[-3] and search[2].endswith("| 75.0 | 1.000 |")
    build = build_table([CellSummary.model_validate(cell)])
    head = [h.strip() for h in build[0].split("|")]
    values = [v.strip() for v in build[2].split("|")]
    assert values[head.index("cached input")] == "4321" and values[head.index("Rsn%")] == "20.0"
    old = {**cell, "search": {k: v for k, v in cell["search"].items() if k != "reasoning_tokens"}}
    before_rsn = CellSummary.model_validate(old)  # a summary written before Rsn%
    assert search_table([before_rsn])[2].endswith("| — | 1.000 |")


def test_a_role_model_shares_its_provider_and_counts_on_the_model() -> None:
    import asyncio

    from memdir.models import ChatMessage
    from memdir.models.scripted import answer

    base = get_model("scripted/m", script=[answer("one"), answer("two")])
    role = base.with_settings(reasoning_effort="high")
    assert role is not base and role.api is base.api and base.config.reasoning_effort is None
    assert base.with_settings(reasoning_effort=None) is base  # nothing differs: the model itself
    asyncio.run(role.generate([ChatMessage("user", "q")]))
    asyncio.run(base.generate([ChatMessage("user", "q")]))
    assert base.usage.calls == 2 and len(base.calls) == 2 and role.usage.calls == 1
    # the scripted provider takes no reasoning control, so none reached it
    assert [cfg.reasoning_effort for _, _, cfg in base.api.requests] == [None, None]  # type: ignore[attr-defined]


def test_a_role_model_travels_to_a_worker_with_its_effort() -> None:
    from memdir_study.cluster import ModelSpec

    role = get_model(MINI, base_url="http://127.0.0.1:9/v1").with_settings(reasoning_effort="high")
    spec = ModelSpec.of(MINI, role)
    assert spec.reasoning_effort == "high"
    assert spec.build().config.reasoning_effort == "high"  # what the worker calls with
    assert ModelSpec.of(MINI, get_model(MINI)).build().config.reasoning_effort is None


@pytest.mark.slow
def test_the_skill_chain_prices_its_search_and_execution_bills_apart(tmp_path: Path) -> None:
    pytest.importorskip("alfworld", reason="the optional 'alfworld' extra is not installed")
    from memdir_study.bench.alfworld import load_games
    from memdir_study.bench.alfworld_env import AlfworldEnv
    from memdir_study.skills.chain import run_chains
    from memdir_study.skills.policy import OfflinePolicy
    from memdir_study.skills.variants import Roles

    by_id = {g.id: g for g in load_games()}
    games = [by_id[g] for g in (PLACE, KEYCHAIN)]
    actions = []
    for game in games:
        with AlfworldEnv(game) as env:
            actions.append([a for a, _ in OfflinePolicy().run(env).steps])
    executor = get_model("scripted/exec", script=[*actions[0], *actions[1]]).with_settings(
        reasoning_effort="high"
    )
    chosen = json.dumps({"answer": "the place procedure", "citations": []})
    searcher = get_model("scripted/search", script=[chosen, chosen])
    mini, nano, gpt41 = (price_card(n) for n in ("gpt-5.4-mini", "gpt-5.4-nano", "gpt-4.1"))
    assert mini is not None and nano is not None and gpt41 is not None
    out = tmp_path / "run"
    rows = run_chains(
        out, ["curated-skills-mem"], model=executor, roles=Roles(searcher=searcher), price_card=mini,
        games=games, role_cards={"search": nano, "execution": gpt41},
    )  # fmt: skip
    searched = 0
    for row, played in zip(rows, actions, strict=True):
        search, execution = Usage.from_dict(row["search_usage"]), Usage.from_dict(row["execution_usage"])
        searched += search.calls
        assert execution.calls == len(played)
        assert row["search_cost_usd"] == pytest.approx(nano.cost(search), abs=1e-6)
        assert row["execution_cost_usd"] == pytest.approx(gpt41.cost(execution), abs=1e-6)
        assert row["deploy_cost_usd"] == pytest.approx(
            row["search_cost_usd"] + row["execution_cost_usd"], abs=2e-6
        )
    assert searched >= 1 and rows[-1]["search_cost_usd"] > 0  # the search bill, at nano's rates
    roles = json.loads((out / "manifest.json").read_text())["roles"]
    assert roles == {
        "execution": {
            "model": "scripted/exec",
            "reasoning_effort": "high",
            "effort_sent": False,  # the scripted provider takes no reasoning control
            "price_card": "gpt-4.1",
        },
        "search": {
            "model": "scripted/search",
            "reasoning_effort": None,
            "effort_sent": False,
            "price_card": "gpt-5.4-nano",
        },
        "curator": {
            "model": "offline",
            "reasoning_effort": None,
            "effort_sent": False,
            "price_card": "gpt-5.4-mini",
        },
    }
