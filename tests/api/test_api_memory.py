"""The agent builder's three lines (add, search, ask), history and snapshots, sync and async,
over the real store, index and journal; the scripted model only at the LLM boundary."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import typing
import warnings
from pathlib import Path
from typing import Any

import pytest

import memdir
import memdir.api
from memdir import AsyncMemory, Memory
from memdir.agents.ingest import NoOpWarning
from memdir.agents.ingest_batch import Ingested, IngestSettings, ingest_batch
from memdir.api import AddResult, Answer, Profile, SearchHit
from memdir.api.inputs import to_turns
from memdir.api.results import Citation, Operation
from memdir.errors import MemdirError
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.search.embed import embedder_missing
from memdir.store import journal
from memdir.store import store as store_module
from memdir.tools.profiles import PROFILES

ALICE = (
    "---\nname: alice\ndescription: Alice: diet and home\n---\n# Alice\n## Diet\n"
    "- alice | diet: vegan (since 2024-05-02) [S2T1]\n## Home\n- Alice lives in Lisbon [S1T2]\n"
)


def test_a_profile_is_a_name_in_the_profiles_table_not_a_copy_of_it(tmp_path: Path) -> None:
    # issue 35: Profile was a Literal kept by hand beside PROFILES; the table is the one source
    assert typing.get_origin(Profile) is None and not typing.get_args(Profile)
    memory = Memory(tmp_path / "m")
    memory.add("I moved to Lisbon in May 2024.", date="2024-06-01")
    before = {p: p.read_bytes() for p in (tmp_path / "m").rglob("*.md")}
    choices = "choose one of " + ", ".join(PROFILES)
    for refused in (
        lambda: _study_add(memory, "My sister Ana is a nurse in Porto.", profile="manage-everything"),
        lambda: memory.ask("Where did the user move?", profile="serach"),
        lambda: memory.call("view", {"path": "/memories"}, profile="viewer"),
    ):
        with pytest.raises(MemdirError, match=f"unknown profile .*; {choices}$"):
            refused()
    assert {p: p.read_bytes() for p in (tmp_path / "m").rglob("*.md")} == before
    assert [memory.tools(name)[0]["type"] for name in ("manage", "search-bm25")] == ["function"] * 2


@pytest.mark.parametrize("record", [AddResult, Answer, SearchHit, Citation, Operation])
def test_a_result_is_never_built_from_positional_arguments(record: type) -> None:
    # issue 35: AddResult was built from eleven positional arguments, an easy order to get wrong
    fields = [f for f in dataclasses.fields(record) if f.default is dataclasses.MISSING]
    with pytest.raises(TypeError, match="positional"):
        record(*[None] * len(fields))


def test_add_text_then_search_and_ask_offline(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    added = memory.add("I moved to Lisbon in May 2024.", date="2024-06-01")
    assert isinstance(added, AddResult) and added.source == "text" and added.baseline
    assert added.turns == 1 and added.writes > 0 and not added.unchanged and added.model == "offline"
    stored = "".join(memory.store.read_text(e.path) for e in memory.store.files())
    assert "Lisbon" in stored and "[S1T1]" in stored
    again = memory.add("My sister Ana is a nurse in Porto.")
    assert again.writes > 0
    stored = "".join(memory.store.read_text(e.path) for e in memory.store.files())
    assert "[S2T1]" in stored  # the next call is the next session: no locator is reused

    hits = memory.search("Lisbon", k=3, mode="bm25")
    assert hits and all(isinstance(h, SearchHit) for h in hits)
    top = hits[0]
    text = memory.store.read_text(top.path).splitlines()
    assert 1 <= top.start_line <= top.end_line <= len(text) and "bm25" in top.ranks
    assert any("Lisbon" in line for _, line in top.snippet)

    got = memory.ask("Where did the user move?")
    assert isinstance(got, Answer) and got.baseline and got.question == "Where did the user move?"
    assert "Lisbon" in got.answer and got.citations and all(c.found for c in got.citations)
    assert got.files_opened and not got.opened_nothing


def test_search_defaults_to_hybrid_when_embeddings_are_installed(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    memory.call("create", {"path": "/memories/people/alice.md", "file_text": ALICE})
    if embedder_missing() is not None:
        assert memory.search("where does alice live")[0].ranks.keys() == {"bm25"}
        return
    hits = memory.search("which city is Alice's home", k=2)
    assert hits[0].path == "/memories/people/alice.md" and hits[0].heading.endswith("Home")
    assert "dense" in hits[0].ranks
    with pytest.raises(MemdirError, match="unknown search mode"):
        memory.search("x", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(MemdirError, match="k must be at least 1"):
        memory.search("x", k=0)


def test_add_with_a_model_writes_through_its_tool_calls_and_counts_usage(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    text = "---\nname: diet\ndescription: the user's diet\n---\n- user | diet: vegan [S1T1]\n"
    model = get_model(
        "scripted", script=[call("create", path="/memories/diet.md", file_text=text), answer("done")]
    )
    added = memory.add([{"role": "user", "content": "I'm vegan now."}], model=model)
    assert added.writes == 1 and not added.baseline and added.usage.calls == 2 and added.usage.prompt > 0
    assert memory.store.read_text("/memories/diet.md") == text


def test_add_that_changes_nothing_says_so(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    model = get_model("scripted", script=[answer("Nothing worth keeping.")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        added = memory.add("hello", model=model)
    assert added.changed_nothing and added.unchanged == added.chunks == (1,)
    assert "1 changed nothing (1)" in added.summary
    assert any(issubclass(w.category, NoOpWarning) for w in caught)


def test_ask_with_a_model_resolves_its_citations(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    memory.call("create", {"path": "/memories/people/alice.md", "file_text": ALICE})
    reply = '{"answer": "vegan", "citations": ["/memories/people/alice.md:6", "/memories/people/bob.md:1"]}'
    model = get_model("scripted", script=[call("view", path="/memories/people/alice.md"), answer(reply)])
    got = memory.ask("What does Alice eat?", model=model)
    assert got.answer == "vegan" and got.tool_calls == 1 and not got.baseline
    assert [(c.path, c.start_line, c.found) for c in got.citations] == [
        ("/memories/people/alice.md", 6, True),
        ("/memories/people/bob.md", 1, False),  # no such file: reported, not hidden
    ]


def test_history_and_a_read_only_snapshot_of_a_past_step(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    memory.call("create", {"path": "/memories/people/alice.md", "file_text": ALICE})
    memory.call("str_replace", {"path": "/memories/people/alice.md", "old_str": "Lisbon", "new_str": "Porto"})
    steps = memory.history()
    assert [s.tool for s in steps][-2:] == ["create", "str_replace"] and steps[0].index == 0
    assert steps[-1].changes[0].path == "/memories/people/alice.md" and steps[-1].role == "api"
    created = next(s for s in steps if s.tool == "create")
    with memory.at(created.index) as past:
        assert past.step == created and "/memories/people/alice.md" in past.paths()
        assert "Lisbon" in past.read("/memories/people/alice.md")
        assert "Porto" in memory.store.read_text("/memories/people/alice.md")
        refused = past.call("create", {"path": "/memories/x.md", "file_text": "x"})
        assert refused.is_error and "not available" in refused.text
        assert not past.call("view", {"path": "/memories/people/alice.md"}).is_error
        assert past.search("Lisbon", mode="bm25")[0].path == "/memories/people/alice.md"
        folder = past._dir
    assert not folder.exists()  # closed: the private copy is gone
    assert memory.at(created.commit[:8]).step == created and memory.at(-1).step == steps[-1]
    with pytest.raises(MemdirError, match="no step 99"):
        memory.at(99)


def test_a_step_and_its_changes_have_one_definition_from_the_store_to_the_api(tmp_path: Path) -> None:
    # issue 35: `Change` and the journaled step were copied into api/results.py and the journal
    assert memdir.api.Change is memdir.Change is store_module.Change
    assert memdir.api.JournalStep is memdir.JournalStep is journal.JournalStep
    assert not hasattr(memdir.api, "Step")  # the name belongs to the store's step in the making
    memory = Memory(tmp_path / "m")
    memory.call("create", {"path": "/memories/people/alice.md", "file_text": ALICE})
    memory.call("rename", {"old_path": "/memories/people/alice.md", "new_path": "/memories/alice.md"})
    steps, ops = memory.history(), memory.operations()
    assert all(type(s) is journal.JournalStep for s in steps)
    changes = [c for s in steps for c in s.changes]
    assert changes and all(type(c) is store_module.Change for c in changes)
    moved = store_module.Change("rename", "/memories/people/alice.md", "/memories/alice.md")
    assert moved in steps[-1].changes
    assert ops[-1].steps == (steps[-1],)


def test_async_memory_and_the_sync_face_inside_a_loop(tmp_path: Path) -> None:
    async def run() -> None:
        memory = AsyncMemory(tmp_path / "m")
        added = await memory.add("I moved to Lisbon in May 2024.")
        assert added.writes > 0
        assert (await memory.search("Lisbon", mode="bm25"))[0].snippet
        assert "Lisbon" in (await memory.ask("Where did the user move?")).answer
        assert len(await memory.history()) >= 2
        r = await memory.call("view", {"path": "/memories"})
        assert not r.is_error
        sync = Memory(tmp_path / "m")
        with pytest.raises(MemdirError, match=r"use memdir\.AsyncMemory"):
            sync.add("inside a loop")

    asyncio.run(run())


def test_add_keeps_a_dump_until_the_switch_point_then_curates(tmp_path: Path) -> None:
    """`strategy="auto"`: the verbatim dump at no model cost while it is small, then curation; the
    result says where each batch went and at what size it switched (docs/eval.md)."""
    memory = Memory(tmp_path / "m")
    first = _study_add(memory, "I moved to Lisbon in May 2024.", strategy="auto", switch_kb=0.6).shaped
    assert first is not None and first.went == "dump" and first.ingest is None and first.merge is not None
    assert len(first.merge.created) == 1 and "strategy auto: dump" in first.summary()
    second = _study_add(
        memory, "My sister Ana is a nurse in Porto. " * 20, strategy="auto", switch_kb=0.6
    ).shaped
    assert second is not None and second.went == "switch" and second.switch is not None
    assert second.switch.dump_kb > 0.6 and "switched to curation" in second.summary()
    assert second.ingest is not None and second.ingest.turns == 2 and sum(second.ingest.writes.values()) > 0
    stored = "".join(memory.store.read_text(e.path) for e in memory.store.files())
    assert "[S1T1]" in stored and "[S2T1]" in stored and "Lisbon" in stored
    with pytest.raises(MemdirError, match="unknown strategy"):
        _study_add(memory, "x", strategy="round")


def test_add_takes_the_products_choices_and_refuses_the_studys(tmp_path: Path) -> None:
    """The study's settings (shape, switch point, tool profile, LoCoMo sample) are the one
    ingest's, not `add`'s: Python refuses them by name, on both faces, before the store is touched;
    the signature `help()` shows is the one both faces take."""
    memory, amemory = Memory(tmp_path / "m"), AsyncMemory(tmp_path / "m")
    before, steps = {p: p.read_bytes() for p in (tmp_path / "m").rglob("*.md")}, len(memory.history())
    for knob, value in (("strategy", "auto"), ("switch_kb", 1.0), ("profile", "manage"), ("sample", "a")):
        with pytest.raises(
            TypeError, match=rf"^Memory\.add\(\) got an unexpected keyword argument '{knob}'$"
        ):
            memory.add("I moved to Lisbon.", **{knob: value})
        with pytest.raises(
            TypeError, match=rf"^AsyncMemory\.add\(\) got an unexpected keyword argument '{knob}'"
        ):
            amemory.add("I moved to Lisbon.", **{knob: value})
    assert {p: p.read_bytes() for p in (tmp_path / "m").rglob("*.md")} == before
    assert len(memory.history()) == steps
    sync, both = inspect.signature(Memory.add), inspect.signature(AsyncMemory.add)
    assert sync == both and list(sync.parameters) == [
        *("self", "data", "model", "speaker", "date", "session_gap", "curation", "feedback")
    ]
    added = memory.add("I moved to Lisbon.", date="2024-06-01", curation="agentic", feedback="health")
    assert added.went == "curate" and added.writes > 0 and added.model == "offline"
    memory.close()
    asyncio.run(amemory.close())


def _study_add(memory: Memory, text: str, **settings: Any) -> Ingested:
    """What the study does in place of `add`: the one ingest with the study's settings."""
    given = to_turns(text, when="2024-06-01")
    run = ingest_batch(
        get_model("offline"), memory.store, given.turns, derived=True, kind="add",
        settings=IngestSettings(**settings),
    )  # fmt: skip
    return asyncio.run(run)
