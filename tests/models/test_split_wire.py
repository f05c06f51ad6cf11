"""How each provider holds a tool-less reply to a schema (`GenerateConfig.require_schema`, split
curation's extraction call): constructed requests and recorded-shape responses, pure converters."""

from __future__ import annotations

import json

from memdir.agents.split.extract import messages, schema
from memdir.models import ChatMessage, GenerateConfig
from memdir.models import anthropic as ant
from memdir.models import openai as oai
from memdir.stream import Turn, chunk_stream

CHUNK = chunk_stream([Turn("S1T1", "Ann", "I adopted a puppy named Max.", "2023-05-08")])[0]
SCHEMA = schema(CHUNK)
CFG = GenerateConfig(answer_schema=SCHEMA, require_schema=True, max_tokens=900, temperature=0.0)
FACTS = {"S1T1": [{"subject": "Ann", "kind": "relation", "attribute": "pet",
                    "value": "adopted a puppy named Max", "date": ""}]}  # fmt: skip


def test_the_local_model_and_llama_cpp_get_a_json_object_held_to_the_schema() -> None:
    body = oai.to_wire("qwen", messages(CHUNK), [], CFG, "max_tokens", "json-schema")
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "tools" not in body and body["max_tokens"] == 900 and body["temperature"] == 0.0
    assert body["messages"][0]["role"] == "system" and body["messages"][1]["content"].endswith("Its JSON:")


def test_openai_compatible_servers_get_strict_structured_output() -> None:
    body = oai.to_wire("gpt-5.4-mini", messages(CHUNK), [], CFG, "max_completion_tokens", "native")
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": SCHEMA, "strict": True},
    }
    # strict only for a schema that closes its objects; a judge's schema without the flag gets none
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert oai.structured_output(open_schema)["json_schema"]["strict"] is False
    judge = GenerateConfig(answer_schema=open_schema)
    assert "response_format" not in oai.to_wire(
        "m", [ChatMessage("user", "x")], [], judge, "max_tokens", "native"
    )
    message = {"role": "assistant", "content": json.dumps(FACTS)}
    reply = {
        "choices": [{"message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40},
    }
    out = oai.from_wire(reply, [], "native")
    assert json.loads(out.message.content) == FACTS and out.usage.output == 40


def test_anthropic_gets_one_forced_tool_whose_input_comes_back_as_the_reply() -> None:
    body = ant.to_wire("claude-sonnet-4-5", messages(CHUNK), [], CFG)
    assert body["tools"] == [{"name": "reply", "description": ant.REPLY_DOC, "input_schema": SCHEMA}]
    assert body["tool_choice"] == {"type": "tool", "name": "reply"}
    assert "Its JSON:" in body["messages"][0]["content"][0]["text"] and "facts" in body["system"]
    payload = {
        "id": "msg_1",
        "type": "message",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "reply", "input": FACTS}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 310, "output_tokens": 52},
    }
    out = ant.from_wire(payload, forced_reply=True)
    assert json.loads(out.message.content) == FACTS and out.message.tool_calls == []
    assert out.stop_reason == "stop"
    # without the forced reply, the same block is an ordinary tool call
    assert ant.from_wire(payload).message.tool_calls[0].name == "reply"
    assert "tool_choice" not in ant.to_wire("c", messages(CHUNK), [], GenerateConfig(answer_schema=SCHEMA))
