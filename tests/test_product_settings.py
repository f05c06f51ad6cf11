"""The product's roles run under the product's settings, never a study variant's (issue 35, item 1):
`Memory.add` and `memdir ingest` curate with no study variant in their steps, `memdir ingest` has
no `--variant`, and `Memory.ask` searches with the product's round cap, not the 20 rounds the
study gives a store nobody organized. Over the real store, journal and CLI; a scripted model at
the LLM boundary."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memdir import Memory
from memdir.agents.roles import SEARCH_ROUNDS_OTHER, SEARCH_ROUNDS_PRODUCT, get_role
from memdir.cli.main import cli
from memdir.models import get_model
from memdir.models.scripted import answer, call

ROUNDS = SEARCH_ROUNDS_OTHER + 5  # past the study's cap for an unorganized store


def test_ask_searches_with_the_product_round_cap(tmp_path: Path) -> None:
    """A model that needs 25 tool rounds gets its answer in: the product's store is organized by
    its own management role, so its search has the organized store's cap, not the study's 20."""
    assert SEARCH_ROUNDS_PRODUCT > ROUNDS and get_role("answer").round_cap == SEARCH_ROUNDS_PRODUCT
    looks = [call("grep", pattern=f"word{i}") for i in range(ROUNDS)]
    said = answer(json.dumps({"answer": "Lisbon", "citations": []}))
    with Memory(tmp_path / "m", model=get_model("scripted", script=[*looks, said])) as memory:
        memory.add("I moved to Lisbon in May.", model="offline")
        got = memory.ask("Where does the user live?")
    assert (got.answer, got.rounds) == ("Lisbon", ROUNDS + 1)


def test_add_names_no_study_variant_in_its_steps(tmp_path: Path) -> None:
    """Curated or dumped, an add's steps name no study variant (`agent-curated-keyed` and
    `verbatim-dump` were the study's names for what the product did)."""
    said = "I moved to Lisbon in May. My sister Ana lives in Porto."
    for shape in ("curate", "dump"):
        with Memory(tmp_path / shape) as memory:
            added = memory.add(said, shape=shape)
            steps = [s for s in memory.history() if s.role in ("management", "builder")]
        assert added.writes > 0 and steps, shape
        assert [s.meta.get("variant") for s in steps] == [None] * len(steps), shape


def test_ingest_takes_no_variant(tmp_path: Path) -> None:
    """`--variant` named the study's prompt and record; the product says `--curation`."""
    runner = CliRunner()
    root, chat = tmp_path / "m", tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"speaker": "user", "text": "I moved to Lisbon in May."}) + "\n")
    assert runner.invoke(cli, ["init", str(root)]).exit_code == 0
    refused = runner.invoke(
        cli, ["ingest", str(root), str(chat), "--model", "offline", "--variant", "agent-curated"]
    )
    assert refused.exit_code == 2 and "No such option '--variant'" in refused.output
    done = runner.invoke(cli, ["ingest", str(root), str(chat), "--model", "offline"])
    assert done.exit_code == 0, done.output
    with Memory(root) as memory:
        steps = [s for s in memory.history() if s.role == "management"]
    assert steps and all("variant" not in s.meta for s in steps)


def test_a_record_from_before_the_rename_reads_its_search_role_as_answer(tmp_path: Path) -> None:
    """The answering role was `search` (the name of a profile, a tool and a method too); a run
    recorded then groups with one recorded now."""
    from memdir.agents.record import read_record, summarize

    path = tmp_path / "calls.jsonl"
    old = {"kind": "episode", "role": "search", "variant": "verbatim-dump", "usage": {}, "rounds": 2}
    path.write_text(json.dumps(old) + "\n" + json.dumps({**old, "role": "answer"}) + "\n")
    entries = read_record(path)
    assert [e["role"] for e in entries] == ["answer", "answer"]
    assert summarize(entries)["answer / verbatim-dump"]["episodes"] == 2
