"""The Python API's edges (issue 34, item 12): what `import memdir` offers, a Memory's lifetime
(`close`, the committer process), the model set once, and `add` over the ingest ledger; over
the real store, journal and committer process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import typing
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import memdir
from agent_helpers import StandIn, fixture
from memdir import AsyncMemory, MemdirError, Memory, NoOpWarning
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.store.journal import stop_committer


def _fm(name: str, body: str = "x\n") -> str:
    return f"---\nname: {name}\ndescription: notes on {name}\n---\n{body}"


def test_the_api_types_import_from_the_package_lazily() -> None:
    from memdir import AddResult, Answer, MemdirError, NoOpWarning, SearchHit
    from memdir.agents.ingest import NoOpWarning as ingest_warning
    from memdir.api.results import AddResult as home

    assert AddResult is home and ingest_warning is NoOpWarning and issubclass(NoOpWarning, UserWarning)
    assert {"AddResult", "Answer", "MemdirError", "NoOpWarning", "SearchHit"} <= set(memdir.__all__)
    assert {Answer.__name__, SearchHit.__name__, MemdirError.__name__} <= set(dir(memdir))
    # `import memdir` alone loads none of them (the CLI's version string stays cheap)
    code = "import sys, memdir; print(sorted(m for m in sys.modules if m.startswith('memdir')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "['memdir']"


def _committers() -> list[int]:
    """This process's live committer children, read from /proc (the real processes)."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == me and fields[0] != "Z" and b"journal.commitd" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_with_block_leaves_no_committer_and_every_step_journaled(tmp_path: Path) -> None:
    stop_committer()  # a committer another test of this process left
    with Memory(tmp_path / "m") as memory:
        for i in range(3):
            assert not memory.call(
                "create", {"path": f"/memories/n{i}.md", "file_text": _fm(f"n{i}")}
            ).is_error
        assert _committers(), "a journaled write starts the committer process"
    assert memory.closed and _committers() == []
    assert [s.tool for s in Memory(tmp_path / "m", journal=False).history()][-3:] == ["create"] * 3
    memory.close()  # again: nothing to do, no error
    for attempt in (
        lambda: memory.call("view", {"path": "/memories"}),
        lambda: memory.search("n1"),
        lambda: memory.add("hello"),
        lambda: memory.ask("what?"),
        lambda: memory.history(),
        lambda: memory.tools(),
        lambda: memory.context(),
    ):
        with pytest.raises(MemdirError, match=r"this Memory over .* is closed .* open a new Memory"):
            attempt()


def test_one_memory_closing_keeps_the_committer_for_another_open_one(tmp_path: Path) -> None:
    first, second = Memory(tmp_path / "a"), Memory(tmp_path / "b")
    for name in ("x", "y"):  # a process's first step lands in the call; the next pokes the committer
        second.call("create", {"path": f"/memories/{name}.md", "file_text": _fm(name)})
    first.close()
    assert _committers(), "the second Memory still writes"
    second.close()
    assert _committers() == []


def test_async_memory_is_an_async_context_manager(tmp_path: Path) -> None:
    async def run() -> AsyncMemory:
        async with AsyncMemory(tmp_path / "m") as memory:
            await memory.call("create", {"path": "/memories/a.md", "file_text": _fm("a")})
        return memory

    memory = asyncio.run(run())
    assert memory.closed and _committers() == []
    with pytest.raises(MemdirError, match="is closed"):
        asyncio.run(memory.search("a"))


def test_the_model_is_set_once_and_a_call_may_override_it(tmp_path: Path) -> None:
    text = _fm("diet", "- user | diet: vegan [S1T1]\n")
    scripted = get_model(
        "scripted", script=[call("create", path="/memories/diet.md", file_text=text), answer("ok")]
    )
    with Memory(tmp_path / "m", model=scripted) as memory:
        added = memory.add("I'm vegan now.")
        assert added.model == scripted.name and not added.baseline and added.writes == 1
        offline = memory.add("My sister Ana lives in Porto.", model="offline")
        assert offline.model == "offline" and offline.baseline
        replies = get_model("scripted", script=[answer('{"answer": "vegan", "citations": []}')])
        memory.model = replies
        assert memory.ask("What does the user eat?").answer == "vegan"
        assert memory.ask("What does the user eat?", model="offline").baseline


def test_add_leaves_out_turns_already_in_the_store_and_says_so(tmp_path: Path) -> None:
    chat = [
        {"role": "user", "content": "I moved to Lisbon in May 2024."},
        {"role": "assistant", "content": "Nice, Lisbon is lovely."},
    ]
    with Memory(tmp_path / "m") as memory:
        first = memory.add(chat, date="2024-06-01")
        assert first.turns == 2 and first.already == 0 and first.writes > 0
        before = {e.path.text: memory.store.read_text(e.path) for e in memory.store.files()}
        steps = len(memory.history())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            again = memory.add(chat, date="2024-06-01")
        assert again.turns == 0 and again.already == 2 and again.changed_nothing and again.went == "none"
        assert "every turn was already in the store; nothing was added" in again.summary
        assert any(issubclass(w.category, NoOpWarning) and "already" in str(w.message) for w in caught)
        assert {e.path.text: memory.store.read_text(e.path) for e in memory.store.files()} == before
        assert len(memory.history()) == steps
        # one new turn after the old ones: only the new one goes in, continuing their session
        more = memory.add(
            [*chat, {"role": "user", "content": "My sister Ana is a nurse."}], date="2024-06-01"
        )
        assert more.turns == 1 and more.already == 2 and "2 of 3 turn(s) already in the store" in more.summary
        assert "1 turn(s) continue S1" in more.summary
        stored = "".join(memory.store.read_text(e.path) for e in memory.store.files())
        assert "[S1T3]" in stored and "nurse" in stored
        # text too: the same line on the same day is the same turn
        memory.add("I drink green tea.", date="2024-06-02")
        with pytest.warns(NoOpWarning, match="already in the store"):
            assert memory.add("I drink green tea.", date="2024-06-02").turns == 0


def test_tools_for_the_openai_responses_api_have_its_documented_shape(tmp_path: Path) -> None:
    from openai.types.responses import FunctionToolParam

    with Memory(tmp_path / "m") as memory:
        for profile in ("manage", "search", "folder"):
            tools = memory.tools(profile, format="openai-responses")
            chat = memory.tools(profile, format="openai")
            assert [t["name"] for t in tools] == [t["function"]["name"] for t in chat]
            for tool, wrapped in zip(tools, chat, strict=True):
                assert tool["type"] == "function" and tool["strict"] is False  # optional stays optional
                assert FunctionToolParam.__required_keys__ <= tool.keys()
                assert (
                    tool.keys() <= FunctionToolParam.__required_keys__ | FunctionToolParam.__optional_keys__
                )
                assert tool["parameters"] == wrapped["function"]["parameters"]
                assert tool["description"] == wrapped["function"]["description"]
        with pytest.raises(ValueError, match="choose one of openai, openai-responses, anthropic, mcp"):
            memory.tools("manage", format="responses")  # type: ignore[arg-type]


def test_the_responses_api_takes_the_tools_and_its_function_call_runs(tmp_path: Path) -> None:
    """The SDK sends the tools as rendered; a recorded Responses reply's function call runs."""
    import openai

    standin = StandIn(replies=[(200, fixture("openai_responses_function_call.json"))]).start()
    try:
        with Memory(tmp_path / "m") as memory:
            tools = memory.tools("manage", format="openai-responses")
            client = openai.OpenAI(base_url=standin.url + "/v1", api_key="test-key", max_retries=0)
            response = client.responses.create(
                model="gpt-5-mini", input="I moved to Lisbon in May.", tools=typing.cast(Any, tools)
            )
            [sent] = standin.seen
            assert sent.path == "/v1/responses" and sent.body["tools"] == tools
            calls = [item for item in response.output if item.type == "function_call"]
            assert [c.name for c in calls] == ["create"]
            result = memory.call(calls[0].name, calls[0].arguments)  # the JSON string as it came
            assert not result.is_error
            assert "Lisbon" in memory.store.read_text("/memories/people/alice.md")
    finally:
        standin.stop()


def test_a_file_add_cannot_read_is_a_memdir_error_that_says_what_to_do(tmp_path: Path) -> None:
    """An app catches `MemdirError` around `add`: an export it cannot read (missing, of an
    unknown shape, or a LoCoMo file of several conversations) is one, and names the way on in
    Python, not a command-line flag; nothing is written."""
    several = tmp_path / "several.json"
    several.write_text(
        '[{"sample_id": "a", "conversation": {}}, {"sample_id": "b", "conversation": {}}]',
        encoding="utf-8",
    )
    odd = tmp_path / "odd.json"
    odd.write_text('{"a": 1}', encoding="utf-8")
    root = tmp_path / "mem"
    with Memory(root, model="offline") as mem:
        before = {p: p.read_bytes() for p in root.rglob("*.md")}
        with pytest.raises(MemdirError, match=r"read_chat\(path, sample='a'\)\.turns"):
            mem.add(several)
        with pytest.raises(MemdirError, match=r"none of these shapes|needs a speaker"):
            mem.add(odd)
        with pytest.raises(MemdirError, match="no such file"):
            mem.add(tmp_path / "missing.json")
        assert {p: p.read_bytes() for p in root.rglob("*.md")} == before


def test_an_undated_export_is_not_dated_today(tmp_path: Path) -> None:
    """A file is a record of the past: its undated turns stay undated, as `memdir ingest` leaves
    them, instead of taking the day of the call as the day they were said (an invented date:
    "Ana moved to Porto (since <today>)" for a move she made last spring). A date given to `add`
    still dates them."""
    export = tmp_path / "undated.jsonl"
    export.write_text(
        '{"speaker": "Ana", "text": "I moved to Porto last spring."}\n'
        '{"speaker": "Ben", "text": "Nice, I still live in Lisbon."}\n',
        encoding="utf-8",
    )
    today = datetime.now(UTC).date().isoformat()
    with Memory(tmp_path / "a", model="offline") as mem:
        mem.add(export)
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "a" / "people").rglob("*.md"))
    assert "Porto" in written and today not in written
    with Memory(tmp_path / "b", model="offline") as mem:
        mem.add(export, date="2025-04-02")
    facts = (tmp_path / "b" / "people" / "ana" / "facts.md").read_text(encoding="utf-8")
    assert "Porto (since 2025-04-02)" in facts
