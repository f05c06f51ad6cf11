"""No silent no-ops and no endless repeats: what the loop, `ingest` and `ask` say when a model
does nothing useful (scripted at the LLM boundary; the store, harness and CLI are real)."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_helpers import new_store
from memdir.agents import NoOpWarning, RunRecord, get_role, ingest, read_record, render, run_loop
from memdir.cli.main import cli
from memdir.models import get_model
from memdir.models.scripted import ScriptedReply, answer, call
from memdir.stream import Turn
from memdir.tools.profiles import Harness

TURNS = [
    Turn("S1T1", "Alice", "I became vegan last week.", "2023-05-09"),
    Turn("S1T2", "Bob", "Good for you!", "2023-05-09"),
]
GOOD_FILE = (
    "---\nname: alice\ndescription: Alice's diet\n---\n- alice | diet: vegan (since 2023-05-02) [S1T1]\n"
)


def test_same_call_with_same_result_is_stopped_with_a_reason(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[call("view", path="/memories")] * 5 + [answer('{"answer": "x"}')])
    role = get_role("answer")
    system, user = render(role, core_memory="", question="anything?")
    record = RunRecord(None)
    ep = asyncio.run(run_loop(model, Harness(store, "search"), role, system, user, record=record))
    assert ep.stop == "repeated_calls" and ep.rounds == 3
    assert ep.stop_reason is not None and "same call(s) 3 times" in ep.stop_reason
    calls = [e for e in record.entries if e["kind"] == "model_call"]
    # the second identical round was told so in its tool result; the answer call came after the stop
    assert [c.get("repeated") for c in calls[:3]] == [None, 1, 2] and calls[-1]["final_answer_call"]
    assert "repeats your previous one" in ep.messages[5].content
    episode = next(e for e in record.entries if e["kind"] == "episode")
    assert episode["stop"] == "repeated_calls" and "stopped without progress" in episode["stop_reason"]


def test_the_same_text_inserted_again_at_another_line_is_a_repeat(tmp_path: Path) -> None:
    """The local 1.5B model curating conv-50 (issue 32) inserted one fact line into MEMORY.md at
    line 35, 36, 37 ... until the 40-round cap: each call and result named a new line, so the
    rounds never equalled each other. The same text into the same file is the same call."""
    store = new_store(tmp_path / "mem")
    line = "- calvin | home: a mansion [S1T7]"
    again = [
        call("insert", path="/memories/MEMORY.md", insert_line=n, insert_text=line) for n in (3, 4, 5, 6, 7)
    ]
    other = call(
        "insert", path="/memories/MEMORY.md", insert_line=3, insert_text="- calvin | job: singer [S1T2]"
    )
    model = get_model("scripted", script=[other, *again, answer("done")])
    record = RunRecord(None)
    ep = asyncio.run(
        run_loop(model, Harness(store, "manage"), get_role("management"), "s", "u", record=record)
    )
    assert ep.stop == "repeated_calls" and ep.rounds == 4  # the new line, then the same text 3 times
    assert ep.stop_reason is not None and "same call(s) 3 times (insert)" in ep.stop_reason
    calls = [e for e in record.entries if e["kind"] == "model_call"]
    assert [c.get("repeated") for c in calls] == [None, None, 1, 2]
    assert "repeats your previous one" in ep.messages[-1].content
    assert (store.root / "MEMORY.md").read_text().count(line) == 3  # not 5: the loop was cut


def test_the_record_keeps_reply_text_and_parse_errors(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    model = get_model(
        "scripted",
        script=[
            ScriptedReply(content="Let me look.", tool_calls=[("view", {"path": "/memories"})]),
            answer("done"),
        ],
    )
    record = RunRecord(None)
    asyncio.run(run_loop(model, Harness(store, "search"), get_role("answer"), "s", "u", record=record))
    first = next(e for e in record.entries if e["kind"] == "model_call")
    assert first["reply"] == "Let me look." and first["calls"] == [
        {"name": "view", "args": {"path": "/memories"}}
    ]
    assert model.calls[0].as_dict()["reply"] == "Let me look."


def test_ingest_names_chunks_that_changed_nothing(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    record = RunRecord(tmp_path / "calls.jsonl")
    talker = get_model("scripted", script=[answer("I have noted that Alice is vegan.")])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = asyncio.run(ingest(talker, store, TURNS, record=record))
    assert result.unchanged == [1] and result.changed_nothing
    assert any(issubclass(w.category, NoOpWarning) for w in seen)
    lines = read_record(tmp_path / "calls.jsonl")
    no_op = [e for e in lines if e["kind"] == "no_op"]
    assert len(no_op) == 1 and no_op[0]["chunk"] == 1 and "noted that Alice" in no_op[0]["reply"]
    episode = next(e for e in lines if e["kind"] == "episode")
    assert episode["wrote_nothing"] is True
    writer = get_model(
        "scripted",
        script=[call("create", path="/memories/alice.md", file_text=GOOD_FILE), answer("created alice.md")],
    )
    result = asyncio.run(ingest(writer, store, TURNS))
    assert result.unchanged == [] and result.writes == {1: 1}


def test_ingest_cli_exits_non_zero_when_nothing_changed(tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(json.dumps(t.__dict__) + "\n" for t in TURNS))
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["I will remember that."]))
    root = tmp_path / "mem"
    CliRunner().invoke(cli, ["init", str(root)])
    res = CliRunner().invoke(
        cli, ["ingest", str(root), "--model", "scripted", "--script", str(script), str(turns)]
    )
    assert res.exit_code == 1, res.output
    assert "0 changed the store, 1 changed nothing (1)" in res.output
    assert "1 of 1 chunk(s) changed nothing in the store" in res.output
    assert sorted(p.name for p in root.iterdir() if p.suffix == ".md") == ["MEMORY.md"]


def test_ask_warns_when_the_answer_opened_nothing(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    new_store(root)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(['{"answer": "vegan", "citations": ["/memories/alice.md:5"]}']))
    res = CliRunner().invoke(
        cli,
        ["ask", str(root), "--model", "scripted", "--script", str(script), "What does Alice eat?"],
    )
    assert res.exit_code == 0, res.output
    assert "answer: vegan" in res.output and "without opening any file" in res.output


def test_a_cycle_of_calls_is_stopped_too(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    a, b = call("view", path="/memories/ghost.md"), call("view", path="/memories")
    model = get_model("scripted", script=[a, b, a, b, a, b, answer("done")])
    ep = asyncio.run(run_loop(model, Harness(store, "search"), get_role("answer"), "s", "u"))
    assert ep.stop == "repeated_calls" and ep.rounds == 5  # the third sighting of the failing view
    assert "to make a new file, use create" in ep.messages[3].content


def test_a_model_round_cap_lowers_the_roles_cap_and_the_answer_call_names_it(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    paths = ["/memories", "/memories/MEMORY.md", "/memories/MEMORY.md"]
    steps = [call("view", path=p, view_range=[1, n + 1]) for n, p in enumerate(paths)]
    model = get_model("scripted", script=[*steps, answer('{"answer": "x", "citations": []}')])
    model.api.round_cap = 2  # what `--round-cap 2` sets on every model of an eval or skills run
    role = get_role("answer")
    assert role.round_cap == 40  # the product's store (no variant)
    system, user = render(role, core_memory="", question="anything?")
    record = RunRecord(None)
    ep = asyncio.run(run_loop(model, Harness(store, "search"), role, system, user, record=record))
    assert ep.stop == "round_cap" and ep.rounds == 2 and ep.tool_calls == 2
    assert "You have used all 2 tool rounds." in ep.messages[-2].content


def test_ingest_one_live_value_refuses_a_repeated_keyed_fact_and_the_model_sees_why(tmp_path: Path) -> None:
    """What the local model did in every curated store it built (two live lines for one key):
        with the guard on, the write is refused as a tool error (its text: test_guards.py) and the
    model's corrected write lands."""
    turns = tmp_path / "turns.jsonl"
    turns.write_text("".join(json.dumps(t.__dict__) + "\n" for t in TURNS))
    twice = GOOD_FILE + "- Alice | diet: vegan (since 2023-05-09) [S1T1]\n"
    script = tmp_path / "script.json"
    steps = [
        {"tool_calls": [{"name": "create", "arguments": {"path": "/memories/alice.md", "file_text": twice}}]},
        {
            "tool_calls": [
                {"name": "create", "arguments": {"path": "/memories/alice.md", "file_text": GOOD_FILE}}
            ]
        },
        "created alice.md",
    ]
    script.write_text(json.dumps(steps))
    root = tmp_path / "mem"
    CliRunner().invoke(cli, ["init", str(root)])
    args = ["ingest", str(root), "--model", "scripted", "--script", str(script), "--one-live-value"]
    res = CliRunner().invoke(cli, [*args, str(turns)])
    assert res.exit_code == 0, res.output
    assert (root / "alice.md").read_text() == GOOD_FILE
    calls = [e for e in read_record(root / ".memdir" / "calls.jsonl") if e["kind"] == "model_call"]
    assert [r["is_error"] for c in calls for r in c["results"]] == [True, False]


def test_an_ingest_of_no_turns_says_nothing_was_ingested_and_offers_no_undo(tmp_path: Path) -> None:
    """Issue 46 item 12: a file with no turn ran an ingest of 0 chunks, exited 0 and printed an
    'undo it' line for an operation that changed nothing. It says plainly that nothing was
    ingested and why, offers nothing to undo, and exits 1 as every other no-op of ingest does."""
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    system_only = tmp_path / "system.jsonl"
    system_only.write_text(json.dumps({"role": "system", "content": "You are a helpful bot."}) + "\n")
    empty = tmp_path / "empty.json"
    empty.write_text("[]\n")
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".memdir" not in p.parts)
    for file, why in ((system_only, "skipped 1 system message(s)"), (empty, "it holds no records")):
        for strategy in ("curate", "dump", "auto"):
            res = CliRunner().invoke(
                cli, ["ingest", str(root), "--model", "offline", "--strategy", strategy, str(file)]
            )
            said = f"{file.name} --strategy {strategy}: {res.output}"
            assert res.exit_code == 1, said
            assert f"nothing was ingested: {file} holds no turn" in res.output and why in res.output, said
            assert "undo it" not in res.output and "operation" not in res.output, said
            assert "already in the dump" not in res.output, said
    after = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".memdir" not in p.parts)
    assert after == before
    # Memory.add refuses such input too, before any operation (api/inputs.py)
    from memdir import Memory
    from memdir.errors import MemdirError

    memory = Memory(root)
    try:
        with pytest.raises(MemdirError, match="found no turn to remember"):
            memory.add(system_only)
    finally:
        memory.close()
