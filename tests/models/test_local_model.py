"""The local_model tier: the real local model (Qwen2.5-Coder-1.5B behind llama.cpp's server)
drives memdir's roles, the judge and the MCP server. Runs when the model is installed (`make
local-model`, which CI runs first) and is skipped with the reason otherwise. Temperature 0,
seed 42; the assertions are about structure (calls made, files valid, citations resolving),
not exact text. Run just these with `pytest -m local_model`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.mcp.test_mcp import stdio

from agent_helpers import new_store, snapshot
from local_helpers import ALICE, BOB, LOCAL_TIER
from memdir.agents import RunRecord, get_role, parse_answer, render, run_loop
from memdir.models import ChatMessage, GenerateConfig, Model, ToolInfo, get_model
from memdir.models.local import QWEN_CODER_1_5B, LocalServer
from memdir.store import frontmatter, spec
from memdir.stream import Chunk, Turn
from memdir.tools.profiles import Harness
from memdir_study.eval.citations import resolve_all
from memdir_study.eval.judges import judge_correctness

pytestmark = LOCAL_TIER


# Rounds a test episode may take: enough for a small model to look, write and correct itself,
# few enough that the tier fits in CI (a round of the 1.5B model takes 5-40 s on 2 cores).
ROUNDS = 8


@pytest.fixture(scope="module")
def model() -> Model:
    return get_model("local")


def _seeded(tmp: Path) -> Any:
    store = new_store(tmp / "mem")
    with store.step("seed"):
        store.create("/memories/people/alice.md", ALICE)
        store.create("/memories/people/bob.md", BOB)
        store.create(
            "/memories/people/MEMORY.md",
            "---\nname: MEMORY\ndescription: people index\n---\n- alice.md: Alice\n- bob.md: Bob\n",
        )
    return store


def test_management_episode_creates_a_valid_file_with_a_located_fact_and_says_so(
    model: Model, tmp_path: Path
) -> None:
    """The 1.5B model makes real calls through the harness: in a store with a people/ folder, a
    chunk about a new person gets a new, valid file holding a fact with its locator; and the
    record's account is true (`writes`, `wrote_nothing` match what changed on disk).

    Measured here (docs/local-model.md): on an empty store the model edits root MEMORY.md; with a
    folder to extend it creates people/alice.md. It first wrote `metadata:` as a list (the
    create tool's text now shows the mapping form) and later put a fact inside the frontmatter
    (now refused), so the check is on the file as it ends, through `validate`.
    """
    store = new_store(tmp_path / "mem")
    with store.step("seed"):
        store.create("/memories/people/bob.md", BOB)
        store.create(
            "/memories/people/MEMORY.md", "---\nname: MEMORY\ndescription: people index\n---\n- bob.md: Bob\n"
        )
        store.write(
            "/memories/MEMORY.md",
            "---\nname: MEMORY\ndescription: root index\n---\n- people/: one file per person\n",
        )
    before = snapshot(store)
    chunk = Chunk(1, (
        Turn("S1T1", "Alice", "Big news: I adopted a dog yesterday, a beagle named Max!", "2023-05-08"),
        Turn("S1T2", "Bob", "Congratulations! Max is a great name.", "2023-05-08"),
    ))  # fmt: skip
    record = RunRecord(tmp_path / "calls.jsonl")
    role = replace(get_role("management"), round_cap=ROUNDS)
    system, user = render(role, core_memory=spec.context(store).text, chunk=chunk.render(), chunk_id=1)
    harness = Harness(store, "manage", role="management", chunk=1)
    ep = asyncio.run(run_loop(model, harness, role, system, user, record=record, chunk=1))
    calls = [e for e in record.entries if e["kind"] == "model_call"]
    replies = [e.get("reply") for e in calls]
    assert ep.tool_calls >= 1, replies
    assert all(e["reply"] for e in calls) and {e["protocol"] for e in calls} == {model.api.tool_protocol}
    results = [r for e in calls for r in e["results"]]
    assert len(results) == ep.tool_calls and all(r["name"] in harness.specs for r in results)
    after = snapshot(store)
    created = sorted(p for p in after if p not in before and not p.endswith("/MEMORY.md"))
    assert created, (replies, [c for e in calls for c in e["calls"]])
    for path in created:
        text = store.read_text(path)
        assert frontmatter.validate(text, path.rsplit("/", 1)[-1]) == [], text
        assert any(loc in text.split("---", 2)[-1] for loc in ("[S1T1]", "[S1T2]")), text
    episode = next(e for e in record.entries if e["kind"] == "episode")
    assert episode["wrote_nothing"] is False and ep.writes > 0


def test_search_episode_opens_the_store_and_cites_a_file_that_holds_the_answer(
    model: Model, tmp_path: Path
) -> None:
    store = _seeded(tmp_path)
    role = replace(get_role("answer"), round_cap=ROUNDS)
    system, user = render(
        role, core_memory=spec.context(store).text, question="What diet does Alice follow now?"
    )
    ep = asyncio.run(run_loop(model, Harness(store, "search", role="answer"), role, system, user))
    answer = parse_answer(ep.final)
    assert ep.tool_calls >= 1 and ep.files_opened >= 1, ep.final
    resolved = [r for r in resolve_all(store, answer.citations) if r.text is not None]
    assert resolved, (ep.final, answer.citations)
    assert any("vegan" in (r.text or "") for r in resolved), [r.text for r in resolved]


def test_judge_verdict_parses(model: Model) -> None:
    from memdir_study.eval.runner import _JudgeModel

    verdict = asyncio.run(
        judge_correctness(_JudgeModel(model), "What diet does Alice follow?", "vegan", "Alice is vegan.")
    )
    assert verdict.score is not None, verdict.reply
    # The server the episodes ran on keeps no logits per position (`--logits_all false`): with
    # them kept it grew past 5 GB on a 3,400-token prompt; without, it stays near 2.5 GB.
    server = LocalServer.shared(QWEN_CODER_1_5B)
    assert server.rss_bytes() < 4 << 30, f"the local server holds {server.rss_bytes() >> 20} MB"


async def test_the_model_drives_memdir_serve_over_mcp(model: Model, tmp_path: Path) -> None:
    store = _seeded(tmp_path)
    async with stdio(store.root, "search") as client:
        listed = await client.list_tools()
        tools = [ToolInfo(t.name, t.description or "", t.input_schema) for t in listed.tools]
        messages = [
            ChatMessage(
                "system",
                "You answer questions about a memory stored under /memories. Use the tools "
                "to look before you answer; answer in one short sentence.",
            ),
            ChatMessage("user", "What instrument does Bob play? Start by viewing /memories/people."),
        ]
        served: list[dict[str, Any]] = []
        for _ in range(6):
            out = await model.generate(messages, tools, GenerateConfig(max_tokens=512, temperature=0.0))
            messages.append(out.message)
            if not out.message.tool_calls:
                break
            for call in out.message.tool_calls:
                result = await client.call_tool(call.name, call.arguments)
                body = "".join(getattr(c, "text", "") for c in result.content)
                served.append({"name": call.name, "error": result.is_error, "text": body})
                messages.append(
                    ChatMessage(
                        "tool",
                        body,
                        tool_call_id=call.id,
                        tool_name=call.name,
                        is_error=bool(result.is_error),
                    )
                )
    ok = [s for s in served if not s["error"]]
    assert ok, json.dumps(served)[:2000]
    # what the server returned is the store's own content: Bob's file or the listing naming it
    assert any("bob" in s["text"].lower() for s in ok), json.dumps(served)[:2000]
