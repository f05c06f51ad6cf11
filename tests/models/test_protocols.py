"""The tool protocols on recorded payloads: what llama.cpp's server really returned for
Qwen2.5-Coder-1.5B, and what each protocol sends back. Pure converters, no server."""

from __future__ import annotations

import json
from typing import Any

from memdir.models import ChatMessage, GenerateConfig, ToolCall, ToolInfo
from memdir.models import openai as oai
from memdir.models.llama_server import _CACHED, annotate
from memdir.models.protocols import as_text_messages, recover_calls, reply_schema

VIEW = ToolInfo(
    "view",
    "View a file or a directory of the memory.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
CREATE = ToolInfo(
    "create",
    "Create a file.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "file_text": {"type": "string"}},
        "required": ["path", "file_text"],
    },
)
TOOLS = [VIEW, CREATE]
FENCED = '```json\n{\n  "name": "view",\n  "arguments": {\n    "path": "/memories"\n  }\n}\n```'


def _payload(content: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion exactly as llama-cpp-python's server answered (tool_calls absent)."""
    return {
        "id": "chatcmpl-134a6c69",
        "object": "chat.completion",
        "created": 1796120823,
        "model": "/root/.cache/memdir/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "choices": [
            {
                "index": 0,
                "message": {"content": content, "role": "assistant"},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage or {"prompt_tokens": 172, "completion_tokens": 28, "total_tokens": 200},
    }


def test_a_call_written_as_fenced_json_is_recovered_under_every_protocol() -> None:
    for protocol in ("native", "text"):
        out = oai.from_wire(_payload(FENCED), TOOLS, protocol)  # type: ignore[arg-type]
        assert out.stop_reason == "tool_calls"
        [call] = out.message.tool_calls
        assert (call.name, call.arguments, call.parse_error) == ("view", {"path": "/memories"}, None)
        assert out.message.raw_text == FENCED and out.message.content == ""
    # without tools offered the same text is an answer
    plain = oai.from_wire(_payload(FENCED))
    assert plain.message.tool_calls == [] and plain.message.content == FENCED


def test_cached_tokens_the_launcher_reports_become_cached_input() -> None:
    usage = {"prompt_tokens": 264, "completion_tokens": 28, "prompt_tokens_details": {"cached_tokens": 200}}
    out = oai.from_wire(_payload(FENCED, usage), TOOLS, "native")
    assert out.usage.input_cached == 200 and out.usage.input_uncached == 64
    _CACHED["chatcmpl-134a6c69"] = 200
    body = json.dumps(_payload("hi", {"prompt_tokens": 264, "completion_tokens": 2})).encode()
    annotated = json.loads(annotate(body))
    assert annotated["usage"]["prompt_tokens_details"] == {"cached_tokens": 200}
    assert annotate(body) == body  # each count is used once, then the body passes unchanged


def _rounds() -> list[ChatMessage]:
    first = oai.from_wire(_payload(FENCED), TOOLS, "text").message
    return [
        ChatMessage("system", "You are the management agent."),
        ChatMessage("user", "Integrate this chunk."),
        first,
        ChatMessage(
            "tool", "/memories/\n  /memories/MEMORY.md", tool_call_id=first.tool_calls[0].id, tool_name="view"
        ),
    ]


def test_text_protocol_describes_tools_in_the_prompt_and_returns_results_as_tool_responses() -> None:
    body = oai.to_wire("q", _rounds(), TOOLS, GenerateConfig(max_tokens=64), "max_tokens", "text")
    msgs = body["messages"]
    assert "tools" not in body and body["stop"] == ["</tool_call>"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert "<tools>" in msgs[0]["content"] and '"name": "create"' in msgs[0]["content"]
    assert msgs[2]["content"] == FENCED  # the model's own text, so the cached prefix still matches
    assert msgs[3]["content"].startswith("<tool_response>\nview:\n/memories/")


def test_native_protocol_rewrites_only_turns_whose_calls_were_text() -> None:
    body = oai.to_wire("q", _rounds(), TOOLS, GenerateConfig(), "max_tokens", "native")
    msgs = body["messages"]
    assert body["tools"][0]["function"]["name"] == "view"
    assert msgs[2] == {"role": "assistant", "content": FENCED}
    assert msgs[3]["role"] == "user" and "<tool_response>" in msgs[3]["content"]
    structured = [ChatMessage("system", "s"), ChatMessage("user", "u"),
                  ChatMessage("assistant", "", [ToolCall("c1", "view", {"path": "/memories"})])]  # fmt: skip
    sent = oai.to_wire("q", structured, TOOLS, GenerateConfig(), "max_tokens", "native")["messages"]
    assert sent[2]["content"] == "" and sent[2]["tool_calls"][0]["function"]["name"] == "view"


def test_json_schema_protocol_constrains_the_reply_to_one_call_or_a_final_reply() -> None:
    body = oai.to_wire("q", _rounds()[:2], TOOLS, GenerateConfig(), "max_tokens", "json-schema")
    fmt = body["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"] == reply_schema(TOOLS)
    assert [b["properties"]["name"].get("const") for b in fmt["schema"]["anyOf"][:2]] == ["view", "create"]
    reply = '{"name": "insert", "arguments": {"path": "/memories/MEMORY.md"}}'
    call = oai.from_wire(_payload(reply), [*TOOLS, ToolInfo("insert", "", {})], "json-schema")
    assert [c.name for c in call.message.tool_calls] == ["insert"]
    final = oai.from_wire(_payload('{"reply": "{\\"answer\\": \\"vegan\\"}"}'), TOOLS, "json-schema")
    assert final.message.tool_calls == [] and final.message.content == '{"answer": "vegan"}'
    assert final.stop_reason == "stop"


def test_the_last_call_of_a_capped_episode_can_only_answer() -> None:
    """At the round cap the local model kept emitting calls into its final-answer call, so every
    answer of a REALTALK cell came out empty: tool_choice "none" leaves the calls out of the
    schema (and is sent as such to a native server), with the tools still in the prompt."""
    answer = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    cfg = GenerateConfig(tool_choice="none", answer_schema=answer)
    body = oai.to_wire("q", _rounds()[:2], TOOLS, cfg, "max_tokens", "json-schema")
    assert body["response_format"]["schema"] == {"anyOf": [answer]}
    assert "view" in json.dumps(body["messages"])  # the tools are still described: same prefix
    native = oai.to_wire("q", _rounds()[:2], TOOLS, cfg, "max_tokens", "native")
    assert native["tool_choice"] == "none" and [t["function"]["name"] for t in native["tools"]] == [
        "view",
        "create",
    ]


def test_every_round_extends_the_prompt_of_the_round_before() -> None:
    """Prefix caching: the messages sent in round r+1 start with exactly those of round r."""
    history = _rounds()
    for protocol in ("native", "text", "json-schema"):
        native = protocol == "native"
        for r in range(2, len(history)):
            earlier = as_text_messages(history[:r], TOOLS, protocol, only_text_turns=native)  # type: ignore[arg-type]
            later = as_text_messages(history[: r + 1], TOOLS, protocol, only_text_turns=native)  # type: ignore[arg-type]
            assert [(m.role, m.content) for m in later[: len(earlier)]] == [
                (m.role, m.content) for m in earlier
            ]


def test_malformed_arguments_become_a_parse_error_not_a_crash() -> None:
    broken = (
        '<tool_call>\n{"name": "create", "arguments": {"path": "/memories/a.md", "file_text": "---\nname: a'
    )
    msg = recover_calls(ChatMessage("assistant", broken), TOOLS, "text")
    [call] = msg.tool_calls
    assert call.name == "create" and call.parse_error
