"""The tool loop with the scripted provider: dispatch, caps, compaction, the run record,
read-only enforcement, and the foldering check."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import new_store, snapshot
from memdir.agents import (
    RunRecord,
    answer_question,
    get_role,
    manage_chunk,
    read_record,
    render,
    run_loop,
)
from memdir.agents.loop import SUMMARIZER
from memdir.agents.record import summarize
from memdir.errors import MemdirError
from memdir.models import ChatMessage, Usage, get_model
from memdir.models.scripted import ScriptedAPI, ScriptedReply, answer, call
from memdir.store.store import Step, Store, StoreObserver
from memdir.stream import Chunk, Turn
from memdir.tools.profiles import Harness
from memdir_study.roles import FolderingError, file_digests, folder, study_role, verify_moves
from memdir_study.variants import variant_role

ALICE = (
    "---\nname: alice\ndescription: Alice's preferences\n---\n"
    "# Alice\n## Drinks\n- alice | drink: tea (since 2023-06-10) [S2T1]\n"
)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_dispatch_writes_through_the_harness_and_records_every_call(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    steps: list[Step] = []

    class Spy(StoreObserver):  # a real observer: sees every journal step the store publishes
        def on_step(self, store: Store, step: Step) -> None:
            steps.append(step)

    store.observers.append(Spy())
    model = get_model("scripted", script=[
        call("create", path="/memories/people/alice.md", file_text=ALICE),
        ScriptedReply(tool_calls=[
            ("view", {"path": "/memories/people/alice.md"}), ("grep", {"pattern": "tea"}),
        ]),
        answer("Wrote Alice's drink."),
    ])  # fmt: skip
    record = RunRecord(tmp_path / "calls.jsonl", run="t1")
    chunk = Chunk(3, (Turn("S2T1", "Alice", "I drink tea now.", "2023-06-10"),))
    out = _run(manage_chunk(model, store, chunk, variant="agent-curated", record=record))
    assert snapshot(store)["/memories/people/alice.md"] == ALICE
    assert out.text == "Wrote Alice's drink." and out.episode is not None
    assert (out.episode.rounds, out.episode.tool_calls, out.episode.stop) == (3, 3, "answer")
    # the journal step knows who wrote it
    assert (
        steps[-1].tool == "create" and steps[-1].meta["role"] == "management" and steps[-1].meta["chunk"] == 3
    )
    lines = read_record(tmp_path / "calls.jsonl")
    calls = [e for e in lines if e["kind"] == "model_call"]
    assert len(calls) == 3 and all(e["role"] == "management" and e["chunk"] == 3 for e in calls)
    assert all(e["variant"] == "agent-curated" and e["run"] == "t1" for e in lines)
    assert calls[0]["calls"] == [
        {"name": "create", "args": {"path": "/memories/people/alice.md", "file_text": ALICE}}
    ]
    # result sizes are the bytes of what the model was shown
    view_reply = next(m for m in out.episode.messages if m.role == "tool" and m.tool_name == "view")
    assert calls[1]["results"][0]["bytes"] == len(view_reply.content.encode()) > len(ALICE)
    assert calls[1]["results"][1]["name"] == "grep" and calls[1]["results"][1]["is_error"] is False
    assert all(e["usage"]["input_uncached"] > 0 and e["usage"]["calls"] == 1 for e in calls)
    episode = lines[-1]
    assert episode["kind"] == "episode" and episode["rounds"] == 3
    total = sum((Usage.from_dict(e["usage"]) for e in calls), Usage())
    assert (
        episode["usage"]["input_uncached"] == total.input_uncached
        and episode["usage"]["output"] == total.output
    )
    assert episode["bounds"]["no_cache"] == total.prompt + total.output
    assert episode["harness"]["calls"] == 3 and episode["harness"]["bytes_returned"] > 0
    cell = summarize(lines)["management / agent-curated"]
    assert cell["episodes"] == 1 and cell["usage"]["calls"] == 3 and cell["bounds"] == episode["bounds"]
    # the management prompt carried the chunk and its locator
    api = model.api
    assert isinstance(api, ScriptedAPI)
    first_user = api.requests[0][0][1].content
    assert "[S2T1] (2023-06-10) Alice: I drink tea now." in first_user and "<core_memory>" in first_user
    assert {t.name for t in api.requests[0][1]} == {
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
        "grep",
    }


def test_round_cap_stops_and_forces_an_answer(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    loops = [call("grep", pattern=f"word{i}") for i in range(4)]  # distinct calls: no repeat stop
    model = get_model("scripted", script=[*loops, answer('{"answer": "nothing", "citations": []}')])
    role = replace(get_role("answer"), round_cap=4)
    harness = Harness(store, "search", role="answer")
    system, user = render(role, core_memory="", question="anything?")
    record = RunRecord(None)
    ep = _run(run_loop(model, harness, role, system, user, record=record, question="q1"))
    assert ep.rounds == 4 and ep.stop == "round_cap" and ep.tool_calls == 4
    assert json.loads(ep.final)["answer"] == "nothing"
    nudge = ep.messages[-2]
    assert nudge.role == "user" and "used all 4 tool rounds" in nudge.content
    assert [e.get("final_answer_call") for e in record.entries if e["kind"] == "model_call"][-1] is True
    configs = [cfg for _, _, cfg in model.api.requests]  # type: ignore[attr-defined]
    assert [c.tool_choice for c in configs][-2:] == [None, "none"]  # the last call may only answer
    # a writing role is simply stopped at its cap
    model2 = get_model("scripted", script=[call("grep", pattern=f"w{i}") for i in range(3)])
    role2 = replace(get_role("management"), round_cap=2)
    ep2 = _run(run_loop(model2, Harness(store, "manage"), role2, "s", "u"))
    assert ep2.rounds == 2 and ep2.stop == "round_cap"
    assert isinstance(model2.api, ScriptedAPI) and len(model2.api.script) == 1  # no third call was made


def test_round_and_output_caps_of_record() -> None:
    assert get_role("management").round_cap == 60 and get_role("management").output_cap == 32_768
    # the product's own store (no variant) is organized by its management role: 40, not 20
    assert get_role("answer").round_cap == 40 and variant_role("answer", "verbatim-dump").round_cap == 20
    assert (
        variant_role("answer", "agent-curated").round_cap == 40
        and variant_role("answer", "reorg-preserve").round_cap == 40
    )
    assert get_role("answer").output_cap == 8_192 and study_role("closed_book").round_cap == 1
    assert get_role("reorganize_condense").output_cap == 100_000 and get_role("answer").compact_at == 96_000


def test_output_cap_is_sent_and_truncation_reported(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[answer("word " * 400)])
    role = replace(get_role("answer"), output_cap=50)
    ep = _run(run_loop(model, Harness(store, "search"), role, "s", "u"))
    assert isinstance(model.api, ScriptedAPI) and model.api.requests[0][2].max_tokens == 50
    assert ep.stop == "max_tokens" and ep.usage.output == 50


class _Worker:
    """Script that views a big file every round and answers after `rounds`, summarizing on request."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.n = 0
        self.summaries: list[list[ChatMessage]] = []

    def __call__(self, messages: list[ChatMessage]) -> ScriptedReply:
        if messages[0].content == SUMMARIZER:
            self.summaries.append(messages)
            return answer(f"SUMMARY-{len(self.summaries)}: read big.md {self.n} times")
        self.n += 1
        if self.n > self.rounds:
            return answer("done")
        return call("view", path="/memories/big.md", start_line=self.n, end_line=-1)


def test_compaction_keeps_summary_and_three_recent_turns(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    body = "\n".join(f"- fact number {i} about the garden and the lake [S1T{i}]" for i in range(120))
    with store.step("seed"):
        store.create("/memories/big.md", f"---\nname: big\ndescription: many facts\n---\n{body}\n")
    worker = _Worker(rounds=6)
    model = get_model("scripted", script=[worker] * 20)
    role = replace(get_role("management"), compact_at=5_000)
    record = RunRecord(tmp_path / "calls.jsonl")
    ep = _run(
        run_loop(model, Harness(store, "manage"), role, "system prompt", "TASK: integrate", record=record)
    )
    assert ep.final == "done" and ep.compactions >= 1 and worker.summaries
    # the summarizer saw the dropped turns' tool results
    assert "TOOL RESULT (view)" in worker.summaries[0][1].content
    api = model.api
    assert isinstance(api, ScriptedAPI)
    after = [msgs for msgs, _, _ in api.requests if msgs[0].content != SUMMARIZER][-1]
    assert after[1].role == "user" and after[1].content.startswith("TASK: integrate")
    assert "SUMMARY-" in after[1].content and "<summary_of_earlier_work>" in after[1].content
    assert sum(1 for m in after if m.role == "assistant") == 3
    comp = [e for e in read_record(tmp_path / "calls.jsonl") if e["kind"] == "compaction"]
    assert len(comp) == ep.compactions and comp[0]["tokens_after"] < comp[0]["tokens_before"]
    assert comp[0]["kept_turns"] == 3 and comp[0]["dropped_turns"] >= 1 and comp[0]["usage"]["calls"] == 1
    # a compaction call is metered with the episode but kept out of the per-round bounds
    assert ep.usage.calls == len(api.requests) and len(ep.round_usage) == ep.rounds


def test_search_is_read_only(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    with store.step("seed"):
        store.create("/memories/people/alice.md", ALICE)
    before = snapshot(store)
    model = get_model("scripted", script=[
        call("create", path="/memories/x.md", file_text="---\nname: x\ndescription: x\n---\n"),
        call("delete", path="/memories/people/alice.md"),
        call("grep", pattern="tea"),
        answer('{"answer": "tea", "citations": ["/memories/people/alice.md:7"]}'),
    ])  # fmt: skip
    record = RunRecord(None)
    out = _run(answer_question(model, store, "What does Alice drink?", question_id="q7", record=record))
    assert snapshot(store) == before
    assert (out.answer, out.citations) == ("tea", ["/memories/people/alice.md:7"])
    results = [r for e in record.entries if e["kind"] == "model_call" for r in e["results"]]
    assert [r["is_error"] for r in results] == [True, True, False]
    tool_msgs = [m for m in out.episode.messages if m.role == "tool"] if out.episode else []
    assert "not available in the 'search' profile" in tool_msgs[0].content
    assert all(e["question"] == "q7" for e in record.entries)
    with pytest.raises(MemdirError, match="read-only"):
        _run(answer_question(get_model("scripted"), store, "q", profile="manage"))


def test_record_never_holds_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-proj-THIS-IS-A-SECRET-0123456789"
    plain = "no-known-format-but-secret"  # no scanner rule knows it: only the environment says so
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("SERVICE_TOKEN", plain)
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[call("grep", pattern=secret), answer(f"keys: {secret} {plain}")])
    _run(answer_question(model, store, "what is the key?", record=RunRecord(tmp_path / "calls.jsonl")))
    text = (tmp_path / "calls.jsonl").read_text()
    # a key's format is redacted by its kind (docs/secrets.md); the environment's values, second
    assert secret not in text and "[redacted: openai-key]" in text
    assert plain not in text and "[redacted]" in text


def test_folderer_moves_only_and_is_verified(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    with store.step("seed"):
        for i in (1, 2):
            store.create(
                f"/memories/session-{i}.md",
                f"---\nname: session-{i}\ndescription: Session {i}\n---\nhi {i}\n",
            )
    before = file_digests(store)
    model = get_model("scripted", script=[
        call("view", path="/memories"),
        call("rename", old_path="/memories/session-1.md", new_path="/memories/may/session-1.md"),
        call("create", path="/memories/x.md", file_text="---\nname: x\ndescription: x\n---\n"),
        answer("Moved session 1 into may/."),
    ])  # fmt: skip
    out = _run(folder(model, store))
    assert out.extra["moves"] == {"/memories/session-1.md": "/memories/may/session-1.md"}
    assert sorted(file_digests(store).values()) == sorted(before.values())
    assert not store.exists("/memories/x.md")  # create is not in the folder profile
    changed = dict(file_digests(store))
    changed["/memories/session-2.md"] = "0" * 64
    with pytest.raises(FolderingError, match="changed file contents"):
        verify_moves(file_digests(store), changed)


def test_prompts_render_and_reorganize_versions_differ_by_one_rule() -> None:
    pre = render(get_role("reorganize_preserve"), core_memory="CORE", **{"pass": 1, "passes": 3})
    con = render(get_role("reorganize_condense"), core_memory="CORE", **{"pass": 1, "passes": 3})
    diff = set(pre[0].splitlines()) ^ set(con[0].splitlines())
    assert len(diff) == 1 and "Keep every fact" in diff.pop() and pre[1] == con[1]
    system, user = render(get_role("management"), core_memory="CORE", chunk="[S1T1] A: hi", chunk_id=1)
    for needle in (
        "Sibling distinction",
        "Structural economy",
        "(since 2023-05-02)",
        "see /memories/",
        "name:",
    ):
        assert needle in system
    assert "[S1T1] A: hi" in user
    s_system, _ = render(get_role("answer"), core_memory="", question="q")
    assert '"citations"' in s_system and "only from the store" in s_system
    roles = [study_role("closed_book"), study_role("folder"), study_role("execution"), study_role("guidance")]
    for role in roles:
        values = {
            "core_memory": "",
            "question": "q",
            "task": "t",
            "guidance": "g",
            "observation": "o",
            "actions_rule": "a",
            "gs_instruction": "i",
        }
        assert render(role, **values)[0]
    with pytest.raises(MemdirError, match="needs a value"):
        render(get_role("answer"), core_memory="")


def test_search_end_to_end_through_the_openai_wire(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider -> loop -> harness -> record, with recorded OpenAI payloads served over HTTP."""
    from agent_helpers import StandIn, fixture
    from memdir.models import RetryPolicy

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-e2e-000000000000000")
    store = new_store(tmp_path / "mem")
    with store.step("seed"):
        store.create("/memories/people/alice.md", ALICE + "## Pets\n- 2023-05-01: Alice adopted Rex [S1T3]\n")
    server = StandIn(
        replies=[(200, fixture("openai_tool_calls.json")), (200, fixture("openai_answer.json"))]
    ).start()
    try:
        model = get_model(
            "openai/gpt-5.4-mini", base_url=server.url + "/v1", retry=RetryPolicy(1, 0.01, 0.01)
        )
        record = RunRecord(tmp_path / "calls.jsonl")
        out = _run(
            answer_question(
                model,
                store,
                "What does Alice drink?",
                question_id="q1",
                variant="agent-curated",
                record=record,
            )
        )
    finally:
        server.stop()
    assert (out.answer, out.citations) == ("tea", ["/memories/people/alice.md:7"])
    # the second request carried the real tool results of the first reply's two calls
    tool_msgs = [m for m in server.seen[1].body["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["call_Qm3Zk1YV8n2b", "call_Wc7Tr4Lp0s9d"]
    assert "/memories/people/alice.md:3: description: Alice's preferences" in tool_msgs[0]["content"]
    assert "7\t- alice | drink: tea" in tool_msgs[1]["content"]
    assert (
        server.seen[0].body["max_tokens"] == 8192
    )  # the search output cap, under a local server's field name
    episode = read_record(tmp_path / "calls.jsonl")[-1]
    assert episode["usage"]["input_cached"] == 3840 + 4224 and episode["usage"]["reasoning"] == 256
    assert episode["cost_usd"] == pytest.approx(((373 + 666) * 0.75 + 8064 * 0.075 + 363 * 4.5) / 1e6)
    b = episode["bounds"]
    assert (b["no_cache"], b["measured"], b["perfect"]) == (4213 + 4890 + 363, 373 + 666 + 363, 4890 + 41)
    # above 1: the first prompt was already cached by earlier calls (a shared prefix across episodes)
    assert b["caching_efficiency"] == pytest.approx((9466 - 1402) / (9466 - 4931))


def test_answer_many_keeps_order_and_ids(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    with store.step("seed"):
        store.create("/memories/people/alice.md", ALICE)
    from memdir.agents import answer_many

    record = RunRecord(None)
    qs = [(f"q{i}", q) for i, q in enumerate(["What does Alice drink?", "Who is Alice?", "tea?"])]
    outs = _run(answer_many(get_model("offline"), store, qs, in_flight=2, record=record))
    assert outs[0].answer == "tea" and len(outs) == 3
    assert sorted(e["question"] for e in record.entries) == ["q0", "q1", "q2"]


def test_transient_failures_are_retried_and_fatal_ones_logged(tmp_path: Path) -> None:
    from memdir.models import ModelError, RetryPolicy

    store = new_store(tmp_path / "mem")
    fast = RetryPolicy(2, 0.01, 0.01)
    model = get_model("scripted", retry=fast, script=[ConnectionError("reset"), TimeoutError(), answer("ok")])
    ep = _run(run_loop(model, Harness(store, "search"), get_role("answer"), "s", "u"))
    assert ep.final == "ok" and model.calls[-1].attempts == 3
    record = RunRecord(None)
    broken = get_model("scripted", retry=fast, script=[ValueError("bad request shape")])
    with pytest.raises(ModelError, match="not retryable"):
        _run(
            run_loop(
                broken, Harness(store, "search"), get_role("answer"), "s", "u", record=record, question="q9"
            )
        )
    assert record.entries[-1]["kind"] == "error" and record.entries[-1]["question"] == "q9"
