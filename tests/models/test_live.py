"""Live calls to real providers. They run only when the provider's key is in the environment
(OPENAI_API_KEY, ANTHROPIC_API_KEY); pick models with MEMDIR_LIVE_OPENAI_MODEL and
MEMDIR_LIVE_ANTHROPIC_MODEL. Run just these with `pytest -m live`."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agent_helpers import new_store
from memdir.agents import RunRecord, answer_question, manage_chunk, read_record
from memdir.models import ChatMessage, GenerateConfig, ToolInfo, get_model
from memdir.stream import Turn, chunk_stream

PROVIDERS = [
    pytest.param(
        "openai/" + os.environ.get("MEMDIR_LIVE_OPENAI_MODEL", "gpt-5.4-mini"),
        "OPENAI_API_KEY",
        marks=pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY is not set"),
        id="openai",
    ),
    pytest.param(
        "anthropic/" + os.environ.get("MEMDIR_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5"),
        "ANTHROPIC_API_KEY",
        marks=pytest.mark.skipif(
            not os.environ.get("ANTHROPIC_API_KEY"), reason="ANTHROPIC_API_KEY is not set"
        ),
        id="anthropic",
    ),
]
TURNS = [
    Turn("S1T1", "Alice", "I prefer coffee in the morning.", "2023-05-01"),
    Turn("S2T1", "Alice", "These days I prefer green tea over coffee.", "2023-06-10"),
]


@pytest.mark.live
@pytest.mark.parametrize(("name", "key_env"), PROVIDERS)
def test_live_tool_call_and_usage(name: str, key_env: str) -> None:
    model = get_model(name)
    tool = ToolInfo(
        "grep",
        "Search memory files for a regex.",
        {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
    )
    msgs = [
        ChatMessage("system", "Use the grep tool to look for the word 'tea'. Call it once."),
        ChatMessage("user", "Find tea."),
    ]
    out = asyncio.run(model.generate(msgs, [tool], GenerateConfig(max_tokens=1024)))
    assert out.message.tool_calls and out.message.tool_calls[0].name == "grep"
    assert out.usage.prompt > 0 and out.usage.output > 0 and out.usage.seconds > 0


@pytest.mark.live
@pytest.mark.parametrize(("name", "key_env"), PROVIDERS)
def test_live_search_over_an_offline_curated_store(name: str, key_env: str, tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    record = RunRecord(tmp_path / "calls.jsonl")

    async def go() -> object:
        for chunk in chunk_stream(TURNS):
            await manage_chunk(get_model("offline"), store, chunk, record=record)
        return await answer_question(
            get_model(name), store, "What does Alice prefer to drink now?", record=record
        )

    out = asyncio.run(go())
    assert "tea" in (out.answer or "").lower()  # type: ignore[attr-defined]
    assert any(c.startswith("/memories/people/alice.md") for c in out.citations)  # type: ignore[attr-defined]
    text = (tmp_path / "calls.jsonl").read_text()
    assert os.environ[key_env] not in text
    episode = [e for e in read_record(tmp_path / "calls.jsonl") if e["kind"] == "episode"][-1]
    assert episode["usage"]["calls"] >= 1 and episode["bounds"]["no_cache"] > 0


@pytest.mark.live
@pytest.mark.parametrize(("name", "key_env"), PROVIDERS)
def test_live_execution_agent_plays_one_alfworld_task(name: str, key_env: str, tmp_path: Path) -> None:
    """The model-backed skill chain on the first task of the full chain: played, priced, no key kept."""
    pytest.importorskip("alfworld", reason="the optional 'alfworld' extra is not installed")
    from memdir.models import price_card
    from memdir_study.bench.alfworld import chains, load_games
    from memdir_study.skills.chain import run_chains
    from memdir_study.skills.variants import Roles

    model = get_model(name)
    record = RunRecord(tmp_path / "run" / "record.jsonl")
    first = chains(load_games(), "full", 1)[0]
    rows = run_chains(
        tmp_path / "run", ["no-store"], model=model, roles=Roles(searcher=model, record=record),
        price_card=price_card("gpt-5.4-mini"), games=first,
    )  # fmt: skip
    assert rows[0]["steps"] >= 1 and rows[0]["deploy_usage"]["calls"] == rows[0]["steps"]
    assert rows[0]["deploy_cost_usd"] > 0
    assert os.environ[key_env] not in (tmp_path / "run" / "record.jsonl").read_text()
