"""Wire converters on recorded payloads, usage and price arithmetic, and the SDK providers
end to end against a local stand-in server (retries on 429 and 500 included)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_helpers import StandIn, fixture
from memdir.agents.record import RunRecord, read_record
from memdir.models import (
    Bounds,
    ChatMessage,
    GenerateConfig,
    ModelError,
    RetryPolicy,
    ToolCall,
    ToolInfo,
    Usage,
    cell_bounds,
    episode_bounds,
    get_model,
    price_card,
)
from memdir.models import anthropic as anth
from memdir.models import openai as oai
from memdir.tools import schemas
from memdir.tools.profiles import profile_specs

FAST = RetryPolicy(max_retries=3, initial_delay=0.01, max_delay=0.05)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    s = StandIn().start()
    yield s
    s.stop()


def _infos(profile: str) -> list[ToolInfo]:
    return [ToolInfo(s.name, s.description, s.input_schema()) for s in profile_specs(profile)]


def _conversation() -> list[ChatMessage]:
    return [
        ChatMessage("system", "You are the search agent."),
        ChatMessage("user", "What does Alice prefer?"),
        ChatMessage(
            "assistant",
            "",
            [
                ToolCall("c1", "grep", {"pattern": "prefer"}),
                ToolCall("c2", "toc", {"path": "/memories/a.md"}),
            ],
            raw_blocks=[{"type": "thinking", "thinking": "hm", "signature": "sig"}],
        ),
        ChatMessage("tool", "1 matching line", tool_call_id="c1", tool_name="grep"),
        ChatMessage("tool", "Error: no such file", tool_call_id="c2", tool_name="toc", is_error=True),
        ChatMessage("user", "Answer now."),
    ]


# -- OpenAI ---------------------------------------------------------------------------
def test_openai_tool_calls_and_cached_reasoning_usage() -> None:
    out = oai.from_wire(fixture("openai_tool_calls.json"))
    assert out.stop_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in out.message.tool_calls] == [
        ("call_Qm3Zk1YV8n2b", "grep", {"pattern": "prefer", "path": "/memories/people"}),
        ("call_Wc7Tr4Lp0s9d", "view", {"path": "/memories/people/alice.md", "start_line": 5, "end_line": 9}),
    ]
    assert out.message.content == ""
    # prompt_tokens includes the cached ones: uncached = 4213 - 3840
    assert out.usage == Usage(input_uncached=373, input_cached=3840, output=322, reasoning=256)


def test_openai_answer_and_compatible_server_quirks() -> None:
    out = oai.from_wire(fixture("openai_answer.json"))
    assert out.stop_reason == "stop" and out.message.tool_calls == []
    assert out.usage.prompt == 4890 and out.usage.input_cached == 4224
    vllm = oai.from_wire(fixture("openai_compatible_vllm.json"))
    # finish_reason "stop" with a tool call, truncated JSON arguments, reasoning_content, null details
    assert vllm.stop_reason == "tool_calls"
    assert vllm.message.reasoning == "The user wants the diet; grep first."
    call = vllm.message.tool_calls[0]
    assert call.arguments == {} and call.parse_error is not None and "not valid JSON" in call.parse_error
    assert vllm.usage == Usage(input_uncached=812, input_cached=0, output=39, reasoning=0)


def test_openai_to_wire_messages_and_tools() -> None:
    cfg = GenerateConfig(max_tokens=8192, temperature=0.0, seed=42)
    body = oai.to_wire("gpt-5.4-mini", _conversation(), _infos("search"), cfg)
    assert body["max_completion_tokens"] == 8192 and body["temperature"] == 0.0 and body["seed"] == 42
    msgs = body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert msgs[2]["content"] == ""  # never null: llama.cpp's server answers HTTP 500 to null content
    assert msgs[2]["tool_calls"][0] == {
        "id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"pattern": "prefer"}'},
    }  # fmt: skip
    assert msgs[4] == {"role": "tool", "tool_call_id": "c2", "content": "Error: no such file"}
    # the tools we send are exactly the harness's own OpenAI rendering
    assert body["tools"] == schemas.render(profile_specs("search"), "openai")
    local = oai.to_wire("m", _conversation(), [], cfg, max_tokens_field="max_tokens")
    assert local["max_tokens"] == 8192 and "tools" not in local and "max_completion_tokens" not in local


# -- Anthropic ------------------------------------------------------------------------
def test_anthropic_tool_use_thinking_and_cache_usage() -> None:
    out = anth.from_wire(fixture("anthropic_tool_use.json"))
    assert out.stop_reason == "tool_calls"
    assert out.message.content == "Let me search the store."
    assert out.message.reasoning == "I should look for Alice's preferences first."
    assert out.message.raw_blocks and out.message.raw_blocks[0]["signature"].startswith("EqQB")
    assert out.message.tool_calls[0].arguments == {"pattern": "prefer", "path": "/memories/people"}
    # input_tokens excludes cache reads and writes; writes are paid as uncached input
    assert out.usage == Usage(
        input_uncached=23 + 1204, input_cached=3952, output=187, reasoning=94, cache_write=1204
    )
    ans = anth.from_wire(fixture("anthropic_answer.json"))
    assert ans.stop_reason == "stop" and ans.usage.input_cached == 5156 and ans.usage.reasoning == 0


def test_anthropic_to_wire_alternates_roles_and_echoes_thinking() -> None:
    body = anth.to_wire(
        "claude-sonnet-4-5", _conversation(), _infos("search"), GenerateConfig(max_tokens=8192)
    )
    assert body["system"] == "You are the search agent."
    assert body["max_tokens"] == 8192 and body["cache_control"] == {"type": "ephemeral"}
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]  # two tool results and a user note merged
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["thinking", "tool_use", "tool_use"]
    last = body["messages"][2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert last[1] == {
        "type": "tool_result",
        "tool_use_id": "c2",
        "content": "Error: no such file",
        "is_error": True,
    }
    assert body["tools"] == schemas.render(profile_specs("search"), "anthropic")
    no_cache = anth.to_wire("m", _conversation()[:2], [], GenerateConfig(cache=False))
    assert "cache_control" not in no_cache and no_cache["max_tokens"] == anth.DEFAULT_MAX_TOKENS


# -- usage, prices, bounds -------------------------------------------------------------
def test_usage_adds_and_study_card_prices() -> None:
    a = Usage(100, 900, 50, 10, 0, 1, 0.5)
    b = Usage(10, 90, 5, 0, 0, 1, 0.25)
    assert a + b == Usage(110, 990, 55, 10, 0, 2, 0.75)
    card = price_card("openai/gpt-5.4-mini")
    assert card is not None
    # 1M uncached + 1M cached + 1M output = 0.75 + 0.075 + 4.50
    assert card.cost(Usage(1_000_000, 1_000_000, 1_000_000)) == pytest.approx(5.325)
    assert price_card("openai/no-such-model") is None
    claude = price_card("anthropic/claude-sonnet-4-5")
    assert claude is not None and claude.cost(Usage(1_000_000, 0, 0, cache_write=1_000_000)) == pytest.approx(
        3.75
    )


def test_intrinsic_bounds() -> None:
    rounds = [Usage(1000, 0, 100), Usage(200, 1100, 50), Usage(150, 1300, 20)]
    b = episode_bounds(rounds)
    assert b.no_cache == (1000 + 1300 + 1450) + 170
    assert b.measured == (1000 + 200 + 150) + 170
    assert b.perfect == 1450 + 20
    assert b.caching_efficiency == pytest.approx((b.no_cache - b.measured) / (b.no_cache - b.perfect))
    assert episode_bounds([Usage(500, 0, 10)]).caching_efficiency is None  # one round: nothing to cache
    cell = cell_bounds([rounds, rounds])
    assert cell == Bounds(2 * b.no_cache, 2 * b.measured, 2 * b.perfect)


# -- providers end to end over HTTP ----------------------------------------------------
def test_openai_provider_retries_429_and_500_then_succeeds(
    standin: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdef-SECRET"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    standin.replies = [
        (
            429,
            {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
        ),
        (500, {"error": {"message": "The server had an error", "type": "server_error"}}),
        (200, fixture("openai_tool_calls.json")),
    ]
    record = RunRecord(tmp_path / "calls.jsonl", command="test")
    model = get_model(
        "openai/gpt-5.4-mini",
        base_url=standin.url + "/v1",
        retry=FAST,
        on_call=lambda c: record.write("model_call", **c.as_dict()),
    )
    out = asyncio.run(model.generate(_conversation(), _infos("search"), GenerateConfig(max_tokens=100)))
    assert [c.name for c in out.message.tool_calls] == ["grep", "view"]
    assert len(standin.seen) == 3 and all(s.path == "/v1/chat/completions" for s in standin.seen)
    assert standin.seen[0].headers["authorization"] == f"Bearer {secret}"  # the key went to the server...
    body = standin.seen[-1].body
    assert body["model"] == "gpt-5.4-mini" and body["max_tokens"] == 100 and len(body["tools"]) == 4
    assert model.calls[-1].attempts == 3 and model.usage.input_cached == 3840 and model.usage.calls == 1
    log = (tmp_path / "calls.jsonl").read_text()
    assert secret not in log and "authorization" not in log.lower()  # ...and never into the record
    assert read_record(tmp_path / "calls.jsonl")[0]["usage"]["reasoning"] == 256


def test_anthropic_provider_end_to_end_with_retry(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-000000000000")
    standin.replies = [
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        (200, fixture("anthropic_tool_use.json")),
    ]
    model = get_model("anthropic/claude-haiku-4-5", base_url=standin.url, retry=FAST)
    out = asyncio.run(
        model.generate(_conversation(), _infos("search"), GenerateConfig(max_tokens=512, temperature=0))
    )
    assert out.usage.input_cached == 3952 and out.message.tool_calls[0].name == "grep"
    seen = standin.seen[-1]
    assert seen.path == "/v1/messages"
    assert any("sk-ant-test-key-000000000000" in v for v in seen.headers.values())
    assert seen.body["max_tokens"] == 512 and seen.body["temperature"] == 0
    assert (
        seen.body["cache_control"] == {"type": "ephemeral"}
        and seen.body["system"] == "You are the search agent."
    )
    assert model.calls[-1].attempts == 2


def test_client_errors_are_not_retried(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000")
    standin.replies = [(400, {"error": {"message": "Invalid 'messages'", "type": "invalid_request_error"}})]
    model = get_model("openai/gpt-5.4-mini", base_url=standin.url + "/v1", retry=FAST)
    with pytest.raises(ModelError, match="not retryable"):
        asyncio.run(model.generate(_conversation(), []))
    assert len(standin.seen) == 1


def test_retries_give_up_after_the_limit(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000")
    standin.replies = [(503, {"error": {"message": "unavailable"}})] * 10
    model = get_model("openai/m", base_url=standin.url + "/v1", retry=RetryPolicy(2, 0.01, 0.02))
    with pytest.raises(ModelError, match="after 3 attempt"):
        asyncio.run(model.generate(_conversation(), []))
    assert len(standin.seen) == 3


def test_missing_key_and_unknown_provider_say_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = get_model("openai/gpt-5.4-mini", retry=FAST)
    with pytest.raises(ModelError, match="set OPENAI_API_KEY"):
        asyncio.run(model.generate([ChatMessage("user", "hi")]))
    with pytest.raises(ModelError, match="unknown model"):
        get_model("gemini/x")


def test_models_package_stands_alone() -> None:
    """models imports nothing of memdir but itself and the leaves memdir.tokens, memdir.cache and
    memdir.jsontypes."""
    import ast

    root = Path(__file__).parents[2] / "src" / "memdir" / "models"
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name.startswith("memdir"):
                    allowed = ("memdir.models", "memdir.tokens", "memdir.cache", "memdir.jsontypes")
                    assert name.startswith(allowed), f"{path.name} imports {name}"
    assert json.loads((root / "prices.json").read_text())["cards"]["gpt-5.4-mini"]["output"] == 4.5


def test_readiness_asks_a_key_of_cloud_providers_and_none_of_the_local_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`memdir study skills --model local` was refused for want of MEMDIR_LOCAL_API_KEY: the check
    before a run asked every OpenAI-compatible client for a key, the local one included."""
    from memdir.models import ModelError, get_model
    from memdir.models.local import missing_reason

    for name in ("OPENAI_API_KEY", "MEMDIR_LOCAL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelError, match="set OPENAI_API_KEY"):
        get_model("openai/gpt-5.4-mini").api.check_ready()
    local = get_model("local")
    reason = missing_reason()
    if reason is None:
        local.api.check_ready()  # installed: nothing to ask for
    else:
        with pytest.raises(ModelError, match="memdir local-model install"):
            local.api.check_ready()
    get_model("openai/qwen", base_url="http://127.0.0.1:9/v1").api.check_ready()  # a named server


def test_the_local_model_is_built_without_its_weights_and_refused_only_at_readiness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make test` failed on a machine without the local model (issue 34, item 9): building
    `get_model("local")` raised when the weights were absent, so every test that only named the
    model failed. Readiness is `check_ready`'s question, and its answer names the one command
    that installs what is missing."""
    from memdir.models.local import missing_reason

    monkeypatch.setenv("MEMDIR_MODELS", str(tmp_path / "no-models"))  # a fresh machine's cache
    local = get_model("local")
    assert local.name == "local/qwen2.5-coder-1.5b"
    reason = missing_reason()
    assert reason is not None and "memdir local-model install" in reason
    with pytest.raises(ModelError, match="memdir local-model install"):
        local.api.check_ready()


# -- the study's model settings (docs/study.md, Configuration of record (Table 11)) -------------
def test_gpt_5_4_cards_price_cached_input_exactly() -> None:
    nano = price_card("openai/gpt-5.4-nano")
    full = price_card("gpt-5.4")
    assert nano is not None and full is not None
    used = Usage(input_uncached=120_000, input_cached=880_000, output=50_000, reasoning=20_000)
    # 0.12 M x $0.20 + 0.88 M x $0.02 + 0.05 M x $1.25 (reasoning is inside output, priced once)
    assert nano.cost(used) == pytest.approx(0.024 + 0.0176 + 0.0625, rel=1e-12, abs=0)
    assert full.cost(Usage(1_000_000, 1_000_000, 1_000_000)) == pytest.approx(2.50 + 0.25 + 15.00, abs=1e-12)


def test_reasoning_share_is_reasoning_over_output() -> None:
    assert Usage(output=400, reasoning=300).reasoning_share == pytest.approx(0.75)
    assert (Usage(output=400, reasoning=300) + Usage(output=600, reasoning=0)).reasoning_share == 0.3
    assert Usage().reasoning_share is None


def test_role_cards_price_each_role_and_refuse_unknowns() -> None:
    from memdir.models import role_cards

    cards = role_cards("gpt-5.4-mini", {"execution": "gpt-4.1"}, ("search", "execution"))
    assert (cards["search"].name, cards["execution"].name) == ("gpt-5.4-mini", "gpt-4.1")
    with pytest.raises(ValueError, match="no price card 'gpt-9'"):
        role_cards("gpt-9", {}, ("search",))
    with pytest.raises(ValueError, match="no role judge"):
        role_cards("gpt-5.4-mini", {"judge": "gpt-5.4-nano"}, ("search",))


def test_openai_reasoning_effort_reaches_reasoning_models_only(
    standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000")
    standin.replies = [(200, fixture("openai_answer.json"))] * 2
    cfg = GenerateConfig(max_tokens=64, reasoning_effort="high")
    for name in ("openai/gpt-5.4-mini", "openai/gpt-4.1"):
        asyncio.run(
            get_model(name, base_url=standin.url + "/v1", retry=FAST).generate(_conversation(), [], cfg)
        )
    reasoning, plain = (s.body for s in standin.seen)
    assert reasoning["model"] == "gpt-5.4-mini" and reasoning["reasoning_effort"] == "high"
    assert plain["model"] == "gpt-4.1" and "reasoning_effort" not in plain  # it would refuse the call


def test_anthropic_reasoning_effort_is_a_thinking_budget() -> None:
    msgs = [ChatMessage("user", "hi")]
    high = anth.to_wire(
        "claude-sonnet-4-5", msgs, [], GenerateConfig(max_tokens=32768, reasoning_effort="high")
    )
    assert high["thinking"] == {"type": "enabled", "budget_tokens": 16384} and "temperature" not in high
    capped = anth.to_wire("m", msgs, [], GenerateConfig(max_tokens=8192, reasoning_effort="high"))
    assert capped["thinking"]["budget_tokens"] == 8191  # below max_tokens, as the API demands
    # the judge's temperature 0 wins: the API takes no temperature with thinking
    judge = anth.to_wire("m", msgs, [], GenerateConfig(temperature=0.0, reasoning_effort="low"))
    assert "thinking" not in judge and judge["temperature"] == 0.0
    assert "thinking" not in anth.to_wire(
        "m", msgs, [], GenerateConfig(max_tokens=1000, reasoning_effort="low")
    )
    assert anth.AnthropicAPI("claude-haiku-4-5").takes_reasoning_effort()
    assert not anth.AnthropicAPI("claude-3-5-haiku").takes_reasoning_effort()
