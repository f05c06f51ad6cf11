"""The skill setting with the scripted provider: the execution agent in a small text
environment, trajectory rendering, and distilling an attempt into the store."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_helpers import new_store, snapshot
from memdir.agents import RunRecord, render
from memdir.models import get_model
from memdir.models.scripted import ScriptedAPI, answer, call
from memdir_study.roles import study_role
from memdir_study.skills.execution import NOTES_RULE, execute, manage_trajectory, parse_action


class KeyRoom:
    """Take the key, then open the door: two right actions win; anything else is 'Nothing happens.'"""

    def __init__(self) -> None:
        self.has_key = False
        self.actions: list[str] = []

    def reset(self) -> str:
        return "You are in a room. You see a key on the table and a locked door."

    def step(self, action: str) -> tuple[str, bool, bool]:
        self.actions.append(action)
        if action == "take key from table":
            self.has_key = True
            return "You pick up the key.", False, False
        if action == "open door" and self.has_key:
            return "The door opens. You win.", True, True
        return "Nothing happens.", False, False


SKILL = (
    "---\nname: open-locked-door\ndescription: Procedure for opening a locked door with a key\n"
    "metadata:\n  type: skill\n---\n# Open a locked door\n1. Take the key. [E1]\n2. Open the door. [E1]\n"
)


def test_execution_plays_until_done_and_records_each_step(tmp_path: Path) -> None:
    env = KeyRoom()
    model = get_model("scripted", script=["look", "Action: take key from table", "> open door"])
    record = RunRecord(tmp_path / "calls.jsonl")
    traj = asyncio.run(
        execute(model, env, "open the door", episode=1, guidance="Keys open doors.", record=record)
    )
    assert traj.success and env.actions == ["look", "take key from table", "open door"]
    assert [e["action"] for e in record.entries if e["kind"] == "model_call"] == env.actions
    assert record.entries[-1]["kind"] == "episode" and record.entries[-1]["success"] is True
    api = model.api
    assert isinstance(api, ScriptedAPI)
    system, _, config = api.requests[0]
    assert "Keys open doors." in system[0].content and config.temperature == 0.0
    # the conversation is appended: the third call saw both earlier observations
    assert [m.content for m in api.requests[2][0] if m.role == "user"][1:] == [
        "Nothing happens.",
        "You pick up the key.",
    ]
    text = traj.render()
    assert (
        text.startswith("Task [E1]: open the door\nOutcome: success") and "2. > take key from table" in text
    )


def test_execution_stops_at_the_step_cap() -> None:
    env = KeyRoom()
    model = get_model("scripted", script=["wait"] * 5)
    traj = asyncio.run(execute(model, env, "open the door", episode=2, max_steps=3))
    assert not traj.success and len(traj.steps) == 3 and traj.usage.calls == 3
    assert traj.stop == "step_cap"


def test_execution_stops_when_the_same_action_gets_the_same_observation() -> None:
    """The local model sent "examine armchair 1" step after step: after REPEAT_STOP identical
    steps nothing new can happen at temperature 0, and the attempt ends with that reason."""
    from memdir_study.skills.execution import REPEAT_STOP

    env = KeyRoom()
    model = get_model("scripted", script=["look", *(["wait"] * 20)])
    record = RunRecord(None)
    traj = asyncio.run(execute(model, env, "open the door", episode=3, record=record))
    assert len(traj.steps) == 1 + REPEAT_STOP and traj.stop == "repeated_actions" and not traj.success
    assert record.entries[-1]["stop"] == "repeated_actions"
    varied = get_model("scripted", script=["look", "wait", "look", "wait", "look", "wait", "look"])
    traj = asyncio.run(execute(varied, KeyRoom(), "open the door", episode=4, max_steps=7))
    assert traj.stop == "step_cap" and len(traj.steps) == 7  # alternating is not repeating


def test_execution_stops_when_nothing_it_sees_is_new() -> None:
    """The local model took and put objects in turn for 27 steps, never one step five times
    running: after NO_PROGRESS_STOP steps that each repeated a seen (action, observation), the
    attempt ends as `no_progress`; a step with something new resets the count."""
    from memdir_study.skills.execution import NO_PROGRESS_STOP

    script = ["look", "wait"] * 4 + ["take key from table"] + ["look", "wait"] * 10
    record = RunRecord(None)
    traj = asyncio.run(
        execute(get_model("scripted", script=script), KeyRoom(), "open the door", episode=5, record=record)
    )
    # 2 new steps, 6 stale, the key (new: the count starts again), then NO_PROGRESS_STOP stale
    assert traj.stop == "no_progress" and not traj.success
    assert len(traj.steps) == 2 + 6 + 1 + NO_PROGRESS_STOP
    assert record.entries[-1]["stop"] == "no_progress"


def test_manage_trajectory_distils_a_skill(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    env = KeyRoom()
    traj = asyncio.run(
        execute(
            get_model("scripted", script=["take key from table", "open door"]),
            env,
            "open the door",
            episode=1,
        )
    )
    model = get_model(
        "scripted",
        script=[call("create", path="/memories/skills/open-locked-door.md", file_text=SKILL), answer("ok")],
    )
    out = asyncio.run(manage_trajectory(model, store, traj, notes=True))
    assert snapshot(store)["/memories/skills/open-locked-door.md"] == SKILL and out.text == "ok"
    api = model.api
    assert isinstance(api, ScriptedAPI)
    system, user = api.requests[0][0][0].content, api.requests[0][0][1].content
    assert "Outcome gate" in system and NOTES_RULE in system and "Task attempt E1 (outcome: success)" in user
    values = {"core_memory": "", "chunk": "", "chunk_id": "E1", "outcome": "failure", "served": "(none)"}
    no_notes = render(study_role("management_skills"), **values, outcome_rules="- Write procedures only.")
    assert NOTES_RULE not in no_notes[0]


def test_parse_action() -> None:
    assert parse_action("Action: go to fridge 1\nbecause it is cold") == "go to fridge 1"
    assert parse_action("\n> `open drawer 2`") == "open drawer 2"
    assert parse_action("   ") == ""


def test_an_empty_store_serves_nothing_without_asking_the_model(tmp_path: Path) -> None:
    """The first task of a chain: the store holds only MEMORY.md, so there is nothing to cite."""
    from memdir_study.skills.serving import guide, select

    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[])  # any call would fail the test
    record = RunRecord(None)
    docs, usage = asyncio.run(
        select(model, store, "open the door", strict=True, k=3, variant="curated-skills-mem", index=1,
               record=record, profile="search")
    )  # fmt: skip
    assert docs == [] and usage.calls == 0
    text, cited, usage = asyncio.run(
        guide(model, store, "open the door", index=1, record=record, profile="search")
    )
    assert (text, cited, usage.calls) == ("", [], 0)
    assert [e["kind"] for e in record.entries] == ["serve_skipped", "serve_skipped"]
    with store.step("seed"):
        store.create("/memories/open-locked-door.md", SKILL)
    from memdir_study.skills.serving import has_entries

    assert has_entries(store)
