"""The local_model tier of the read search (issue 32, item 4): the real 1.5B model answers from
the top sections in one schema-held call and cites the file that holds the fact. Structure, not
exact text: one call, no tools, a citation inside what it was shown that names the fact's file.
Run with `pytest -m local_model`; skipped with the reason when the model is not installed."""

from __future__ import annotations

from pathlib import Path

from agent_helpers import new_store
from local_helpers import ALICE, BOB, LOCAL_TIER
from memdir import Memory

pytestmark = LOCAL_TIER


def test_the_read_search_answers_citing_the_file_that_holds_the_fact(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    with store.step("seed"):
        store.create("/memories/people/alice.md", ALICE)
        store.create("/memories/people/bob.md", BOB)
    answer = Memory(tmp_path / "mem").ask("What instrument does Bob play?", model="local", search="read")
    assert answer.usage.calls == 1 and answer.tool_calls == 0 and answer.rounds == 1
    assert "cello" in answer.answer.lower(), answer.reply
    assert answer.citations, answer.reply  # kept only when inside the lines it was shown
    assert all(c.found for c in answer.citations)
    assert "/memories/people/bob.md" in {c.path for c in answer.citations}, answer.reply
