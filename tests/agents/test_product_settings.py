"""The product's roles run under the product's settings, never a study variant's (issue 35, item 1):
`Memory.add` and `memdir ingest` curate with no study variant in their steps, `memdir ingest` has
no `--variant`, and `Memory.ask` searches with the product's round cap, not the 20 rounds the
study gives a store nobody organized. Over the real store, journal and CLI; a scripted model at
the LLM boundary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from memdir import Memory
from memdir.agents.ingest_batch import IngestSettings, ingest_batch
from memdir.agents.roles import SEARCH_ROUNDS_OTHER, SEARCH_ROUNDS_PRODUCT, get_role
from memdir.api.inputs import to_turns
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
            if shape == "curate":
                assert memory.add(said).writes > 0
            else:  # the dump is the study's shape: driven through the one ingest, as the study does
                run = ingest_batch(
                    get_model("offline"), memory.store, to_turns(said).turns, derived=True, kind="add",
                    settings=IngestSettings(strategy="dump"),
                )  # fmt: skip
                assert asyncio.run(run).operation is not None
            steps = [s for s in memory.history() if s.role in ("management", "builder")]
        assert steps, shape
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


def test_the_product_names_no_study_variant() -> None:
    """A variant is the study's word: the product's code (store, search, tools, agents, models,
    analytics, api, mcp, integrations, chatlogs) holds no variant's name, so no study setting
    can reach a product role by name; the study brings its variant's role itself
    (`memdir_study.roles.variant_role`). A profile that shares a variant's name is a profile."""
    import ast

    import memdir
    from memdir.tools.profiles import PROFILES
    from memdir_study.skills.variants import SKILL_VARIANTS
    from memdir_study.variants import VARIANTS

    names = (set(VARIANTS) | set(SKILL_VARIANTS)) - set(PROFILES)
    src = Path(memdir.__file__).parent
    rooms = (
        "store",
        "search",
        "tools",
        "agents",
        "models",
        "analytics",
        "api",
        "mcp",
        "integrations",
        "chatlogs",
    )
    found = [
        f"{path.relative_to(src)}:{node.lineno} {node.value!r}"
        for room in rooms
        for path in sorted((src / room).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert len(names) > 10 and found == []
