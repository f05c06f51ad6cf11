"""Live health feedback for a model (`--feedback health`): the findings an episode introduced go
back to it for one capped extra round, and the run record shows it. Real store, real health, the
scripted model at the LLM boundary."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import new_store
from memdir.agents import RunRecord
from memdir.agents.feedback import FEEDBACK_ROUNDS, feedback_totals
from memdir.agents.run import manage_chunk
from memdir.errors import MemdirError
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.stream import Turn, chunk_stream

CHUNK = chunk_stream([Turn("S1T1", "Alice", "My dog Rex is a beagle.", "2024-05-02")])[0]
DANGLING = (
    "---\nname: alice\ndescription: Alice and her pets\n---\n# Alice\n"
    "- Alice has a beagle named Rex [S1T1]; see /memories/pets/rex.md\n"
)
CLEAN = (
    "---\nname: alice\ndescription: Alice and her pets\n---\n# Alice\n- Alice has a beagle named Rex [S1T1]\n"
)


def _run(store: Any, script: list[Any], feedback: str = "health") -> tuple[Any, RunRecord, Any]:
    model = get_model("scripted", script=script)
    record = RunRecord(None)
    out = asyncio.run(manage_chunk(model, store, CHUNK, record=record, feedback=feedback))  # type: ignore[arg-type]
    return out, record, model


def _kinds(record: RunRecord, kind: str) -> list[dict[str, Any]]:
    return [e for e in record.entries if e["kind"] == kind]


def test_an_introduced_finding_goes_back_for_one_capped_round_and_is_mended(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    script = [
        call("create", path="/memories/alice.md", file_text=DANGLING),
        answer("filed"),
        # the feedback round: the model mends, and asks for more by calling a tool again...
        call("str_replace", path="/memories/alice.md", old_str="; see /memories/pets/rex.md", new_str=""),
    ]
    out, record, model = _run(store, script)
    # ... but the round cap is FEEDBACK_ROUNDS: no further model call was made (the script is spent)
    assert FEEDBACK_ROUNDS == 1 and model.usage.calls == 3
    sent = _kinds(record, "feedback")
    assert len(sent) == 1 and sent[0]["introduced"] == 1
    assert (
        sent[0]["findings"][0]["kind"] == "dangling-ref"
        and sent[0]["findings"][0]["path"] == "/memories/alice.md"
    )
    result = _kinds(record, "feedback_result")[0]
    assert (
        result["mended"] == 1 and result["remaining"] == 0 and result["rounds"] == 1 and result["writes"] == 1
    )
    extra = [e for e in _kinds(record, "model_call") if e.get("feedback")]
    assert len(extra) == 1 and extra[0]["chunk"] == CHUNK.id  # the extra round is marked in the record
    assert store.read_text("/memories/alice.md") == CLEAN
    assert out.episode.rounds == 3 and out.extra["writes"] == 2  # the chunk's work, feedback included
    assert feedback_totals(record.entries).line() == (
        "feedback: 1 chunk(s) introduced 1 finding(s); 1 mended in their extra round"
    )


def test_the_feedback_turn_names_the_finding_and_its_action(tmp_path: Path) -> None:
    script = [
        call("create", path="/memories/alice.md", file_text=DANGLING),
        answer("filed"),
        answer("cannot"),
    ]
    _, record, model = _run(new_store(tmp_path / "m"), script)
    prompt = model.api.requests[-1][0]  # the scripted model keeps every request it got
    turn = prompt[-1].content
    assert "introduced 1 problem(s)" in turn and "[dangling-ref] /memories/alice.md" in turn
    assert "Suggested:" in turn
    assert prompt[0].role == "system" and prompt[-2].content == "filed"  # the conversation, continued
    result = _kinds(record, "feedback_result")[0]
    assert result["mended"] == 0 and result["remaining"] == 1  # said, not hidden


def test_no_finding_introduced_means_no_extra_round(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    with store.step("seed"):  # a finding the episode did not make: never sent to it
        store.create("/memories/bob.md", "---\nname: bob\ndescription: Bob\n---\n- see /memories/gone.md\n")
    _, record, model = _run(store, [call("create", path="/memories/alice.md", file_text=CLEAN), answer("ok")])
    assert model.usage.calls == 2
    assert [e["introduced"] for e in _kinds(record, "feedback")] == [0]
    assert not _kinds(record, "feedback_result")
    assert feedback_totals(record.entries).turns == 0


def test_the_studys_protocol_stays_the_default(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    _, record, model = _run(
        store, [call("create", path="/memories/alice.md", file_text=DANGLING), answer("ok")], "none"
    )
    assert model.usage.calls == 2 and not _kinds(record, "feedback")
    with pytest.raises(MemdirError, match="unknown feedback"):
        _run(store, [answer("x")], "loud")


def test_feedback_measures_against_the_stores_guard_limits(tmp_path: Path) -> None:
    """A guarded store's fanout cap, not the default of 50, decides what the episode introduced,
    as it does for the `health` tool and for the guard that allows or refuses the write."""
    from memdir.analytics.health import health
    from memdir.tools.guards import Guards
    from memdir.tools.wiring import open_store

    root = tmp_path / "m"
    store = open_store(root, create=True, init=True, guards=Guards(fanout_cap=60))
    for i in range(49):
        (root / f"n{i}.md").write_text(f"---\nname: n{i}\ndescription: note {i}\n---\n- x [S1T1]\n")
    new = [call("create", path="/memories/alice.md", file_text=CLEAN)]
    _, record, _ = _run(store, [*new, answer("filed")])
    assert (root / "alice.md").is_file()  # 51 entries: under the guard's 60, which let it in
    assert [f.kind for f in health(store).findings] == ["fanout"]  # over the default cap of 50
    (sent,) = _kinds(record, "feedback")
    assert sent["introduced"] == 0 and not _kinds(record, "feedback_result")


def test_a_round_that_loses_a_source_is_undone_whole(tmp_path: Path) -> None:
    """What the local 1.5B model did: told to mend, it deleted the file holding the facts. The
    round is undone as one step, the store is as it was byte for byte, and the record says so."""
    from memdir.agents.mend_gate import UNDO_TOOL
    from memdir.store.journal import Journal

    store = new_store(tmp_path / "m")
    script = [
        call("create", path="/memories/alice.md", file_text=DANGLING),
        answer("filed"),
        call("delete", path="/memories/alice.md"),  # the "mend"
    ]
    stock = (tmp_path / "m" / "MEMORY.md").read_bytes()
    _, record, model = _run(store, script)
    assert model.usage.calls == 3  # the round ran: the delete happened, then was undone
    files = {p.name: p.read_bytes() for p in (tmp_path / "m").iterdir() if p.is_file()}
    assert files == {"MEMORY.md": stock, "alice.md": DANGLING.encode()}  # as the episode left it
    result = _kinds(record, "feedback_result")[0]
    assert result["undone"] is True and result["lost_sources"] == ["S1T1"] and result["writes"] == 1
    assert result["mended"] == 0 and result["remaining"] == 1  # the finding stands, said
    tools = [s.tool for s in Journal(store.root).steps()]
    assert tools[-2:] == ["delete", UNDO_TOOL]
    assert feedback_totals(record.entries).line().endswith("1 round(s) undone for losing a source")


def test_a_round_that_keeps_every_source_is_not_undone(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    script = [
        call("create", path="/memories/alice.md", file_text=DANGLING),
        answer("filed"),
        call("str_replace", path="/memories/alice.md", old_str="; see /memories/pets/rex.md", new_str=""),
    ]
    _, record, _ = _run(store, script)
    result = _kinds(record, "feedback_result")[0]
    assert result["undone"] is False and result["lost_sources"] == [] and result["mended"] == 1
    assert store.read_text("/memories/alice.md") == CLEAN
