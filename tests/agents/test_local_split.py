"""The local_model tier for split curation: one chunk of a real conversation curated by the real
1.5B local model (llama.cpp, json-schema grammar). Skipped with the reason when the model is not
installed. The assertions are about structure (facts written with the chunk's locators, indexes
intact, the store valid and clean, one journaled step), not exact text."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from unittest import mock

from agent_helpers import new_store
from local_helpers import LOCAL_TIER
from memdir.agents import RunRecord, ingest, read_record
from memdir.analytics.integrity import check
from memdir.conventions import parse_distilled, parse_keyed
from memdir.models import GenerateConfig, ModelOutput, get_model
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.stream import Chunk, Turn

pytestmark = LOCAL_TIER

DAY = "2023-05-08"
# The first turns of LoCoMo conv-26, session 1 (the chunk issue 32's warning was measured on).
CHUNK = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    (
        "Melanie",
        "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?",
    ),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    (
        "Melanie",
        "Wow, that's cool, Caroline! What happened that was awesome? Did you hear any inspiring stories?",
    ),
    (
        "Caroline",
        "The transgender stories were so inspiring! I was so happy and thankful for all the support.",
    ),
    ("Melanie", "Wow, love that painting! So cool you found such a helpful group. What's it done for you?"),
    (
        "Caroline",
        "The support group has made me feel accepted and given me courage to embrace myself.",
    ),
    ("Melanie", "That's really cool. You've got guts. What now?"),
]
TURNS = [Turn(f"S1T{i}", who, text, DAY) for i, (who, text) in enumerate(CHUNK, start=1)]


def test_one_chunk_is_curated_split_facts_with_locators_index_intact_store_valid(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    before = len(Journal(store.root).steps())
    record = RunRecord(tmp_path / "calls.jsonl")
    model = get_model("local")
    result = asyncio.run(ingest(model, store, TURNS, record=record))  # auto: split for the local model
    out = result.outputs[0]
    assert out.extra["curation"] == "split" and out.extra["model_calls"] == 1
    assert out.extra["facts_kept"] >= 1, out.extra
    distilled = []
    for path in (store.root / "people").rglob("*.md"):
        for n, line in enumerate(path.read_text().split("\n"), start=1):
            fact = parse_keyed(str(path), n, line) or parse_distilled(line)
            if fact is not None:
                distilled.append(fact)
    assert distilled and all(set(f.locators) <= {t.locator for t in TURNS} for f in distilled)
    people = (store.root / "people" / "MEMORY.md").read_text()
    assert "- caroline/: Caroline" in people and "- melanie/: Melanie" in people
    assert "people/" in (store.root / "MEMORY.md").read_text()
    assert spec.validate(store).valid, spec.validate(store).violations
    assert check(store).problems == []
    steps = Journal(store.root).steps()[before:]
    assert [s.tool for s in steps] == ["split_curation"]
    entry = next(e for e in read_record(tmp_path / "calls.jsonl") if e["kind"] == "split_curation")
    assert entry["tokens_in"] > 0 and entry["reply"]


def _served(chunk: Chunk, env: dict[str, str], max_tokens: int = 160) -> ModelOutput:
    """One extraction call, at temperature 0, to a server of its own started under `env`."""
    from memdir.agents.split.extract import messages, schema
    from memdir.models.local import QWEN_CODER_1_5B, LocalServer

    config = GenerateConfig(
        answer_schema=schema(chunk), require_schema=True, max_tokens=max_tokens, temperature=0.0
    )
    server = LocalServer(QWEN_CODER_1_5B)
    with mock.patch.dict(os.environ, env):  # the server process inherits them
        server.start()
    try:
        return asyncio.run(get_model("local", base_url=server.base_url).generate(messages(chunk), [], config))
    finally:
        server.stop()


def test_the_drawn_token_checked_first_gives_the_reply_the_library_samples() -> None:
    """The server checks each drawn token against the grammar and runs the grammar over the
    vocabulary only for a rejected one (`models/grammar.py`): meant to change the time of a
    reply, never its text. The same call to a server sampling llama-cpp-python's own way (the
    grammar over the whole vocabulary at every token) must come back byte-identical."""
    from memdir.models.llama_server import GRAMMAR_EVERY_TOKEN, NO_DRAFTS

    chunk = Chunk(1, tuple(TURNS[:5]))
    ours = _served(chunk, {GRAMMAR_EVERY_TOKEN: "0", NO_DRAFTS: "1"})
    theirs = _served(chunk, {GRAMMAR_EVERY_TOKEN: "1", NO_DRAFTS: "1"})
    assert ours.usage.output > 40, ours.message.content  # long enough to pass JSON and values
    assert ours.message.content == theirs.message.content


def test_a_reply_with_the_forced_text_drafted_is_whole_and_held_to_the_schema() -> None:
    """With drafts of the schema's forced text verified in batches (`models/forced.py`, the
    server's default), the reply is still one JSON object keyed by every turn of the chunk, in
    order, each fact of the schema's shape."""
    from memdir.agents.split.extract import asks_only, key, parse_facts

    chunk = Chunk(1, tuple(TURNS[:5]))
    out = _served(chunk, {}, max_tokens=900)
    whole = json.loads(out.message.content)
    assert list(whole) == [key(t) for t in chunk.turns], out.message.content
    assert all(whole[key(t)] == [] for t in chunk.turns if asks_only(t))
    facts, malformed, error = parse_facts(out.message.content)
    assert facts and malformed == 0 and error is None, out.message.content
