"""Every model-driven management episode passes the mend gate: one that loses a cited locator,
breaks a file's frontmatter or writes raw turns into an index is undone whole, as one journaled
step, and the run record and the chunk's output say why (issue 32, item 5). Real store, index
and journal; the scripted model at the LLM boundary."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import new_store
from memdir.agents import RunRecord
from memdir.agents.ingest import NoOpWarning, ingest
from memdir.agents.mend_gate import EPISODE_UNDO_TOOL, reproduces_turn
from memdir.agents.run import manage_chunk
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.store.journal import Journal
from memdir.stream import Turn, chunk_stream
from memdir.tools.profiles import Harness

TURNS = [
    Turn("S1T1", "Alice", "My dog Rex is a beagle.", "2024-05-02"),
    Turn("S1T2", "Bob", "I started a pottery class on Tuesdays.", "2024-05-02"),
]
CHUNK = chunk_stream(TURNS)[0]
ALICE = (
    "---\nname: alice\ndescription: Alice and her pets\n---\n# Alice\n- Alice has a beagle named Rex [S1T1]\n"
)
INDEX_FRONTMATTER = (
    "---\ndescription: Root index of this memory; core memory, always loaded. List the folders here.\n---\n"
)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".memdir" not in p.parts
    }


def _episode(store: Any, script: list[Any]) -> tuple[Any, RunRecord]:
    model = get_model("scripted", script=script)
    record = RunRecord(None)
    out = asyncio.run(manage_chunk(model, store, CHUNK, record=record, curation="agentic"))
    return out, record


def _undone(record: RunRecord) -> list[dict[str, Any]]:
    return [e for e in record.entries if e["kind"] == "episode_undone"]


def _store_with_alice(tmp_path: Path) -> Any:
    store = new_store(tmp_path / "m")
    Harness(store, "manage").call_or_raise("create", {"path": "/memories/alice.md", "file_text": ALICE})
    return store


def test_an_episode_that_deletes_a_fact_file_is_undone_whole(tmp_path: Path) -> None:
    store = _store_with_alice(tmp_path)
    before = _files(tmp_path / "m")
    out, record = _episode(store, [call("delete", path="/memories/alice.md"), answer("tidied")])
    assert _files(tmp_path / "m") == before  # byte for byte
    (line,) = _undone(record)
    assert line["reasons"] == ["lost-sources"] and line["lost_sources"] == ["S1T1"]
    assert line["chunk"] == CHUNK.id and line["files_restored"] == 1
    assert out.extra["writes"] == 0 and out.extra["undone"] is True
    assert out.extra["episode_writes"] == 1
    last = Journal(store.root).steps()[-1]
    assert last.tool == EPISODE_UNDO_TOOL and last.meta.get("reason") == "lost-sources"


@pytest.mark.parametrize(
    "raw",
    [
        "[S1T1] (2024-05-02) Alice: My dog Rex is a beagle.",  # as the chunk renders it
        "- my dog Rex is a beagle (S1T1)",  # its words, at content F1 1.0
    ],
)
def test_an_episode_that_writes_raw_turns_into_the_index_is_undone(tmp_path: Path, raw: str) -> None:
    store = new_store(tmp_path / "m")
    before = _files(tmp_path / "m")
    script = [call("str_replace", path="/memories/MEMORY.md", old_str="# Memory", new_str=f"# Memory\n{raw}")]
    out, record = _episode(store, [*script, answer("indexed")])
    assert _files(tmp_path / "m") == before
    (line,) = _undone(record)
    assert line["reasons"] == ["raw-turns-in-index"] and line["paths"] == ["/memories/MEMORY.md"]
    assert line["raw_turn_lines"] == ["/memories/MEMORY.md:5"]
    assert out.extra["undo_reasons"] == ["raw-turns-in-index"]


def test_an_episode_that_breaks_the_index_frontmatter_is_undone(tmp_path: Path) -> None:
    """What the local model did: the root index lost its frontmatter fence (no file was refused:
    an index may go without frontmatter, so only the gate sees what was lost)."""
    store = new_store(tmp_path / "m")
    before = _files(tmp_path / "m")
    script = [call("str_replace", path="/memories/MEMORY.md", old_str=INDEX_FRONTMATTER, new_str="")]
    out, record = _episode(store, [*script, answer("cleaned the index")])
    assert _files(tmp_path / "m") == before
    (line,) = _undone(record)
    assert line["reasons"] == ["broken-frontmatter"]
    assert line["broken_frontmatter"] == [
        {"path": "/memories/MEMORY.md", "problem": "no frontmatter block (its '---' fences are gone)"}
    ]
    assert out.extra["writes"] == 0


def test_an_honest_episode_is_kept(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    script = [
        call("create", path="/memories/people/alice.md", file_text=ALICE.replace("alice.md", "x")),
        call(
            "str_replace",
            path="/memories/MEMORY.md",
            old_str="# Memory",
            new_str="# Memory\n- /memories/people/alice.md: Alice and her pets",
        ),
        answer("filed"),
    ]
    out, record = _episode(store, script)
    assert _undone(record) == [] and out.extra == {"writes": 2}
    assert "- Alice has a beagle named Rex [S1T1]" in store.read_text("/memories/people/alice.md")
    assert Journal(store.root).steps()[-1].tool != EPISODE_UNDO_TOOL


def test_ingest_names_an_undone_chunk_as_changing_nothing_and_why(tmp_path: Path) -> None:
    store = _store_with_alice(tmp_path)
    model = get_model("scripted", script=[call("delete", path="/memories/alice.md"), answer("done")])
    record = RunRecord(None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = asyncio.run(ingest(model, store, TURNS, record=record, curation="agentic"))
    assert result.unchanged == [CHUNK.id]
    assert any(isinstance(w.message, NoOpWarning) and "undone" in str(w.message) for w in caught)
    (no_op,) = [e for e in record.entries if e["kind"] == "no_op"]
    assert "undone" in no_op["reason"] and "lost-sources" in no_op["reason"]


def test_the_raw_turn_rule_leaves_notes_about_a_turn_alone() -> None:
    assert not reproduces_turn("- /memories/people/alice.md: Alice and her pets", TURNS)
    assert not reproduces_turn("- Bob: pottery (see /memories/people/bob.md)", TURNS)
    assert not reproduces_turn("Yes! [S1T1]", [Turn("S1T1", "Alice", "Yes!")])  # too short to tell
    assert reproduces_turn("Bob: I started a pottery class on Tuesdays. [S1T2]", TURNS)


def test_an_episode_that_writes_a_false_keyed_fact_is_undone_and_a_true_one_kept(tmp_path: Path) -> None:
    """The agentic curator's keyed writes are held to the truth rules split validates by
    (fact_truth): Alice's dog's breed filed as Alice's own job is false of S1T1 (the clause is
    about "my dog Rex"), so the episode is undone whole; the dog's breed filed under the dog's
    name, or under Alice with the dog named, is true and stays."""
    store = _store_with_alice(tmp_path)
    before = _files(tmp_path / "m")
    false = "- alice | job: a beagle (since 2024-05-02) [S1T1]\n"
    out, record = _episode(
        store,
        [
            call(
                "create",
                path="/memories/facts.md",
                file_text=f"---\nname: facts\ndescription: keyed\n---\n{false}",
            ),
            answer("ok"),
        ],
    )
    assert _files(tmp_path / "m") == before
    (line,) = _undone(record)
    assert line["reasons"] == ["false-fact-lines"] and line["false_lines"] == [
        "/memories/facts.md:5 wrong subject"
    ]
    true = (
        "- Rex | breed: a beagle (since 2024-05-02) [S1T1]\n"
        "- 2024-05-02: Alice | fact: dog Rex is a beagle [S1T1]\n"
    )
    out, record = _episode(
        store,
        [
            call(
                "create",
                path="/memories/facts.md",
                file_text=f"---\nname: facts\ndescription: keyed\n---\n{true}",
            ),
            answer("ok"),
        ],
    )
    assert not _undone(record) and out.extra["writes"] == 1
    assert (tmp_path / "m" / "facts.md").read_text().endswith(true)
