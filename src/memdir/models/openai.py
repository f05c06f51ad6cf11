"""OpenAI Chat Completions, and every server that speaks it (vLLM, Ollama, llama.cpp) via base_url.

`to_wire` and `from_wire` are pure: they turn neutral messages into the request body and a
response body (a dict, as the API returns it) into a :class:`ModelOutput`, under one of the tool
protocols of `models/protocols.py`. The SDK is imported only when a client is made, and its own
retries are off: :class:`Model` owns them.

Real servers differ from the API: llama.cpp's server rejects an assistant turn whose `content` is
null (HTTP 500), so content is always a string, and it returns calls as text in `content`, which
`from_wire` recovers under every protocol.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from memdir.jsontypes import JsonObject, JsonValue, array, count, obj, text
from memdir.models.base import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelError,
    ModelOutput,
    StopReason,
    ToolCall,
    ToolInfo,
)
from memdir.models.protocols import (
    STOP_AFTER_CALL,
    ToolProtocol,
    as_text_messages,
    recover_calls,
    reply_schema,
)
from memdir.models.usage import Usage

# OpenAI's reasoning models, the ones that take `reasoning_effort` (others refuse the call).
REASONING_MODELS = re.compile(r"(o\d|gpt-5|gpt-oss)")
_STOP: dict[str, StopReason] = {"stop": "stop", "tool_calls": "tool_calls", "function_call": "tool_calls",
                                "length": "max_tokens"}  # fmt: skip


def message_to_wire(m: ChatMessage) -> JsonObject:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    if m.role == "assistant":
        out: JsonObject = {"role": "assistant", "content": m.content or ""}
        if m.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
                }
                for c in m.tool_calls
            ]
        return out
    return {"role": m.role, "content": m.content}


def to_wire(
    model: str,
    messages: list[ChatMessage],
    tools: list[ToolInfo],
    config: GenerateConfig,
    max_tokens_field: str = "max_completion_tokens",
    protocol: ToolProtocol = "native",
) -> JsonObject:
    native = protocol == "native"
    wire = as_text_messages(messages, tools, protocol, only_text_turns=native)
    body: JsonObject = {"model": model, "messages": [message_to_wire(m) for m in wire]}
    if protocol == "text" and tools:
        body["stop"] = [STOP_AFTER_CALL]
    if protocol == "json-schema" and tools:
        # llama.cpp's form: a json_object response constrained by a schema (a grammar server-side).
        schema = reply_schema(
            tools,
            final=config.answer_schema,
            call_required=config.tool_choice == "required",
            calls_allowed=config.tool_choice != "none",
        )
        body["response_format"] = {"type": "json_object", "schema": schema}
    elif protocol == "json-schema" and config.answer_schema is not None:
        # a reply with no tools, in a shape the caller parses (a judge's verdict)
        body["response_format"] = {"type": "json_object", "schema": config.answer_schema}
    elif protocol == "native" and config.answer_schema is not None and config.require_schema and not tools:
        body["response_format"] = structured_output(config.answer_schema)
    if tools and native:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in tools
        ]
    if tools and native and config.tool_choice is not None:
        body["tool_choice"] = config.tool_choice
    if config.max_tokens is not None:
        body[max_tokens_field] = config.max_tokens
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if config.seed is not None:
        body["seed"] = config.seed
    if config.reasoning_effort is not None:
        body["reasoning_effort"] = config.reasoning_effort
    return body


def structured_output(schema: JsonObject, name: str = "reply") -> JsonObject:
    """OpenAI's structured output (vLLM and Ollama take it too). `strict` only for a schema
    that closes its objects, which strict mode demands of every object in it."""
    strict = schema.get("additionalProperties") is False
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}


def _tool_call(raw: JsonValue) -> ToolCall:
    call = obj(raw)
    fn = obj(call.get("function"))
    args_text = text(fn.get("arguments")) or "{}"
    try:
        args = json.loads(args_text)
        error = None if isinstance(args, dict) else "arguments must be a JSON object"
    except json.JSONDecodeError as exc:
        args, error = {}, f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    return ToolCall(text(call.get("id")), text(fn.get("name")), args if isinstance(args, dict) else {}, error)


def usage_from_wire(raw: JsonValue) -> Usage:
    """The `usage` part of a response (absent or null: nothing spent)."""
    usage = obj(raw)
    cached = count(obj(usage.get("prompt_tokens_details")).get("cached_tokens"))
    return Usage(
        input_uncached=count(usage.get("prompt_tokens")) - cached,
        input_cached=cached,
        output=count(usage.get("completion_tokens")),
        reasoning=count(obj(usage.get("completion_tokens_details")).get("reasoning_tokens")),
    )


def from_wire(
    payload: Mapping[str, JsonValue], tools: list[ToolInfo] | None = None, protocol: ToolProtocol = "native"
) -> ModelOutput:
    """The response as a neutral output; calls the model wrote as text are recovered when
    `tools` were offered (under every protocol: a server may template tools it cannot parse)."""
    choices = array(payload.get("choices"))
    if not choices:
        raise ModelError(f"response has no choices: {json.dumps(payload)[:300]}")
    choice = obj(choices[0])
    msg = obj(choice.get("message"))
    calls = [_tool_call(c) for c in array(msg.get("tool_calls"))]
    reasoning = msg.get("reasoning_content") or msg.get("reasoning")
    message = ChatMessage(
        "assistant",
        text(msg.get("content")),
        calls,
        reasoning=reasoning if isinstance(reasoning, str) else None,
    )
    message = recover_calls(message, tools or [], protocol)
    finish = text(choice.get("finish_reason")) or "stop"
    stop = _STOP.get(finish, "other")
    if message.tool_calls and stop == "stop":
        stop = "tool_calls"  # some compatible servers say "stop" alongside tool calls
    return ModelOutput(
        message=message,
        stop_reason=stop,
        usage=usage_from_wire(payload.get("usage")),
        model=text(payload.get("model")),
        id=text(payload.get("id")),
    )


class OpenAIAPI(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_tokens_field: str | None = None,
        tool_protocol: ToolProtocol = "native",
        max_output: int | None = None,
    ) -> None:
        super().__init__(model_name)
        self.tool_protocol: ToolProtocol = tool_protocol
        self.max_output = max_output  # the server's own cap on output tokens per call, if lower
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.api_key_env = api_key_env
        # Local servers (llama.cpp, older vLLM) know only max_tokens; OpenAI wants the new name.
        self.max_tokens_field = max_tokens_field or (
            "max_tokens" if self.base_url else "max_completion_tokens"
        )
        self._client: Any = None
        self._client_loop: int | None = None

    def check_ready(self) -> None:
        if not os.environ.get(self.api_key_env) and not self.base_url:
            raise ModelError(f"set {self.api_key_env} in the environment to call {self.model_name}")

    def takes_reasoning_effort(self) -> bool:
        return REASONING_MODELS.match(self.model_name) is not None

    def client(self) -> Any:
        # The SDK's async client belongs to the event loop it was first used in; a Model reused
        # across asyncio.run calls (the Python API, tests) gets a fresh client per loop.
        try:
            loop: int | None = id(asyncio.get_running_loop())
        except RuntimeError:
            loop = None
        if self._client is not None and loop is not None and self._client_loop not in (None, loop):
            self._client = None
        if self._client is None:
            self._client_loop = loop
            import openai

            self.check_ready()
            key = os.environ.get(self.api_key_env)
            # A local server usually ignores the key; the SDK still insists on having one.
            self._client = openai.AsyncOpenAI(api_key=key or "unused", base_url=self.base_url, max_retries=0)
        return self._client

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        client = self.client()
        if self.max_output is not None:
            config = replace(config, max_tokens=min(config.max_tokens or self.max_output, self.max_output))
        body = to_wire(self.model_name, messages, tools, config, self.max_tokens_field, self.tool_protocol)
        create = client.chat.completions.create
        known = set(inspect.signature(create).parameters)
        kwargs = {k: v for k, v in body.items() if k in known}
        extra = {k: v for k, v in body.items() if k not in known}
        resp = await create(**kwargs, extra_body=extra or None, timeout=config.timeout or 600.0)
        return from_wire(resp.model_dump(mode="json"), tools, self.tool_protocol)

    def is_retryable(self, exc: BaseException) -> bool:
        import openai

        if isinstance(exc, openai.RateLimitError | openai.APITimeoutError | openai.APIConnectionError):
            return True
        return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500

    def retry_after(self, exc: BaseException) -> float | None:
        return _retry_after(exc)


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
