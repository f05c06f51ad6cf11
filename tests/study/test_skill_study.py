"""The skill setting's roles as the paper runs them (scripted models at the LLM boundary, real
ALFWorld games): a search model apart from the executor, the search bill per task and its climb,
the served entries in the management agent's input, the invalid-action rate with the admissible
actions hidden by default, the outcome gate only on skills+mem, and the GS user turn."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.agents.record import RunRecord
from memdir.agents.roles import render
from memdir.models import ChatMessage, get_model, price_card
from memdir.models.scripted import answer, call
from memdir.store import spec
from memdir.tools.wiring import open_store
from memdir_study.roles import study_role
from memdir_study.skills.variants import Roles


def test_the_gs_user_turn_is_the_task_and_one_fixed_line(tmp_path: Path) -> None:
    from memdir_study.roles import GS_INSTRUCTION, guidance

    store = open_store(tmp_path / "mem", create=True)
    spec.init(store)
    model = get_model("scripted", script=['{"answer": "Nothing applies.", "citations": []}'])
    task = "heat some apple and put it in garbagecan."
    asyncio.run(guidance(model, store, task, task_id="1"))
    ((messages, _, _),) = model.api.requests  # type: ignore[attr-defined]
    assert messages[-1].content == f"Task: {task}\n\n{GS_INSTRUCTION}"
    assert "cite" in GS_INSTRUCTION.lower()


def test_the_entry_picking_search_prompt_has_no_core_memory(tmp_path: Path) -> None:
    """skill_search, like every search of the study, gets its system prompt and the task: no
    core-memory block, though the store's root holds a file the convention makes core memory."""
    from memdir_study.roles import select_entries

    store = open_store(tmp_path / "mem", create=True)
    spec.init(store)
    with store.step("seed"):
        store.create("/memories/skills/heat.md", "---\ndescription: heat\n---\n# Heat\n- go to microwave\n")
    assert "<core_memory>" in spec.context(store).text  # the block the product would load
    model = get_model("scripted", script=['{"answer": "heat", "citations": ["/memories/skills/heat.md"]}'])
    task = "heat some apple and put it in garbagecan."
    asyncio.run(select_entries(model, store, task, strict=True, k=2, variant="curated-skills", task_id="1"))
    ((messages, _, _),) = model.api.requests  # type: ignore[attr-defined]
    assert all("<core_memory>" not in m.content for m in messages)
    assert messages[-1].content == f"Task: {task}"


def test_the_outcome_gate_is_stated_only_to_the_gated_variants() -> None:
    from memdir_study.skills.execution import GATE_RULE, NO_NOTES_RULE, NOTES_RULE, outcome_rules

    role = study_role("management_skills")
    values = dict(core_memory="", chunk="x", chunk_id="E1", outcome="failure", served="(none)")
    gated, _ = render(role, outcome_rules=outcome_rules(notes=True, gate=True), **values)
    ungated, _ = render(role, outcome_rules=outcome_rules(notes=False, gate=False), **values)
    assert GATE_RULE in gated and NOTES_RULE in gated
    assert GATE_RULE not in ungated and NO_NOTES_RULE in ungated


alfworld = pytest.importorskip("alfworld", reason="the optional 'alfworld' extra is not installed")

from test_skill_roles import KEYCHAIN, PLACE, PLACE_SKILL, winning_actions  # noqa: E402

from memdir_study.skills.chain import run_chains  # noqa: E402
from memdir_study.skills.report import write_report  # noqa: E402

CARD = price_card("gpt-5.4-mini")


def _cite_episode(messages: list[ChatMessage]) -> str:
    """The search agent cites the episode file its listing showed."""
    path = re.search(r"/memories/episodes/e\d+[\w.-]*\.md", messages[-1].content)  # not MEMORY.md
    assert path is not None, messages[-1].content
    return json.dumps({"answer": "the earlier episode", "citations": [path.group(0)]})


@pytest.mark.slow
def test_a_search_model_apart_serves_the_episode_log_and_its_bill_is_kept(tmp_path: Path) -> None:
    first, second = winning_actions(PLACE), winning_actions(KEYCHAIN)
    executor = get_model("scripted/executor", script=[*first, *second])  # actions only
    searcher = get_model("scripted/searcher", script=[call("view", path="/memories/episodes"), _cite_episode])
    out = tmp_path / "run"
    roles = Roles(searcher=searcher, record=RunRecord(out / "record.jsonl"))
    rows = run_chains(
        out, ["episode-log"], model=executor, roles=roles, price_card=CARD, games=[PLACE, KEYCHAIN]
    )
    assert [r["success"] for r in rows] == [True, True]
    assert rows[0]["search_usage"]["calls"] == 0 and rows[0]["search_cost_usd"] == 0.0  # nothing to search
    assert rows[1]["search_usage"]["calls"] == 2 and rows[1]["search_cost_usd"] > 0
    assert rows[1]["served"][0].startswith("/memories/episodes/")
    assert [r["execution_usage"]["calls"] for r in rows] == [len(first), len(second)]
    for r in rows:
        assert r["deploy_cost_usd"] == pytest.approx(r["search_cost_usd"] + r["execution_cost_usd"], abs=2e-6)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["search_model"] == "scripted/searcher" and manifest["model"] == "scripted/executor"
    (cell,) = write_report(out)
    assert cell["search_cost_usd"] == pytest.approx(rows[1]["search_cost_usd"], abs=1e-6)
    assert cell["search_cost_cumulative_usd"] == pytest.approx([0.0, rows[1]["search_cost_usd"]], abs=1e-6)
    assert (out / "search_cost.png").is_file()
    report = (out / "report.md").read_text()
    assert "## Search and execution bills" in report and "search_cost.png" in report


@pytest.mark.slow
def test_the_curator_sees_what_was_served_and_curated_skills_has_no_outcome_gate(tmp_path: Path) -> None:
    executor = get_model("scripted/executor", script=["fly to the moon", "look"] * 2)  # fails twice
    curator_prompts: list[str] = []

    def seen(then: object) -> object:
        def step(messages: list[ChatMessage]) -> object:
            curator_prompts.append(messages[1].content)
            return then

        return step

    curator = get_model(
        "scripted/curator",
        script=[
            seen(call("create", path="/memories/skills/place.md", file_text=PLACE_SKILL)),
            answer("wrote the place procedure"),
            seen(answer("nothing new")),
        ],
    )
    cite = json.dumps({"answer": "the place skill", "citations": ["/memories/skills/place.md"]})
    searcher = get_model("scripted/searcher", script=[cite])
    out = tmp_path / "run"
    rows = run_chains(
        out, ["curated-skills"], model=executor, roles=Roles(curator, searcher), price_card=CARD,
        games=[PLACE, KEYCHAIN], step_cap=2,
    )  # fmt: skip
    assert [r["success"] for r in rows] == [False, False]
    # curated-skills is not gated (the paper gates skills+mem): a failed attempt's procedure stands
    store = open_store(out / "stores" / "curated-skills" / "chain-1")
    assert store.read_text("/memories/skills/place.md") == PLACE_SKILL
    assert "nothing was served" in curator_prompts[0]
    assert "/memories/skills/place.md" in curator_prompts[1] and "# Place" in curator_prompts[1]
    # the invalid action is counted; the observations did not list the admissible actions
    assert [r["invalid_actions"] for r in rows] == [1, 1]
    requests = executor.api.requests  # type: ignore[attr-defined]
    assert all("Admissible actions" not in m.content for msgs, _, _ in requests for m in msgs)
    (cell,) = write_report(out)
    assert cell["invalid_action_rate"] == 0.5
    assert "invalid actions" in (out / "report.md").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["show_admissible"] is False
    assert manifest["outcome_gate"] == ["curated-skills-mem", "curated-skills-mem-gs"]


@pytest.mark.slow
def test_showing_the_admissible_actions_is_a_named_option(tmp_path: Path) -> None:
    executor = get_model("scripted/executor", script=["look"])
    out = tmp_path / "run"
    rows = run_chains(
        out, ["no-store"], model=executor, price_card=CARD, games=[PLACE], step_cap=1, show_admissible=True
    )
    (messages, _, _) = executor.api.requests[0]  # type: ignore[attr-defined]
    assert "Admissible actions: " in messages[1].content and "one of them" in messages[0].content
    assert rows[0]["invalid_actions"] == 0
    assert json.loads((out / "manifest.json").read_text())["show_admissible"] is True


@pytest.mark.slow
def test_cli_names_the_search_model_apart_from_the_executor(tmp_path: Path) -> None:
    from memdir.cli.main import cli

    out = tmp_path / "run"
    args = ["study", "skills", "--variants", "no-store", "--tasks", "1", "--out", str(out)]
    res = CliRunner().invoke(cli, [*args, "--model", "scripted/exec", "--search-model", "scripted/search"])
    assert res.exit_code != 0 and "ran out of replies" in str(res.exception)  # an empty script: aborted
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"] == "scripted/exec" and manifest["search_model"] == "scripted/search"
    assert manifest["curator_model"] == "scripted/exec" and manifest["show_admissible"] is False
