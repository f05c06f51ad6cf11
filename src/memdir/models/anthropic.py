"""Anthropic Messages API: pure wire converters and a thin provider over the SDK.

Anthropic takes the system prompt apart, wants tool results inside a user turn, and insists
on alternating roles, so consecutive tool results (and a user note after them) merge into one
user turn. Usage: `input_tokens` excludes cache reads and cache writes, so uncached input is
input_tokens + cache_creation_input_tokens; reasoning is output_tokens_details.thinking_tokens.
"""

from __future__ import annotations

import inspect
import json
import os
import re
from collections.abc import Mapping
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
from memdir.models.openai import _retry_after
from memdir.models.usage import Usage

DEFAULT_MAX_TOKENS = 8192
REPLY_TOOL = "reply"
REPLY_DOC = "Give your reply: its input is the whole reply, in the required shape."
# Anthropic takes extended thinking as a token budget, not a level: the budget for each
# reasoning effort (the API's minimum is 1,024, and it must stay below max_tokens).
THINKING_BUDGET = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384}
THINKING_MODELS = re.compile(r"claude-(3-7|(sonnet|opus|haiku)-4)")
_STOP: dict[str, StopReason] = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
                                "max_tokens": "max_tokens"}  # fmt: skip


def _blocks(m: ChatMessage) -> list[JsonObject]:
    if m.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": m.tool_call_id or "",
                "content": m.content,
                "is_error": m.is_error,
            }
        ]
    if m.role == "assistant":
        blocks: list[JsonObject] = list(m.raw_blocks or [])
        if m.content:
            blocks.append({"type": "text", "text": m.content})
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls
        ]
        return blocks
    return [{"type": "text", "text": m.content}]


def to_wire(
    model: str, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> JsonObject:
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns: list[dict[str, Any]] = []  # a turn's content grows as blocks of its role follow
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    body: JsonObject = {
        "model": model,
        "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": turns,
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
        ]
    elif config.require_schema and config.answer_schema is not None:
        # Anthropic constrains output through tools: one tool, forced; `from_wire` turns its
        # input back into the reply's text.
        body["tools"] = [{"name": REPLY_TOOL, "description": REPLY_DOC, "input_schema": config.answer_schema}]
        body["tool_choice"] = {"type": "tool", "name": REPLY_TOOL}
    thinking = thinking_budget(config, forced="tool_choice" in body)
    if thinking is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking}
    elif config.temperature is not None:
        body["temperature"] = config.temperature
    if config.cache is not False:
        body["cache_control"] = {"type": "ephemeral"}  # automatic caching of the growing prefix
    return body


def thinking_budget(config: GenerateConfig, forced: bool = False) -> int | None:
    """The thinking budget a call's reasoning effort asks for, or None: no effort (or `none`),
    a temperature set (the API takes no temperature with thinking, and a judge runs at
    temperature 0), a forced tool (refused with thinking), or max_tokens too small for the
    minimum budget."""
    effort = config.reasoning_effort
    if effort is None or effort not in THINKING_BUDGET or config.temperature is not None or forced:
        return None
    cap = (config.max_tokens or DEFAULT_MAX_TOKENS) - 1
    budget = min(THINKING_BUDGET[effort], cap)
    return budget if budget >= THINKING_BUDGET["minimal"] else None


def usage_from_wire(raw: JsonValue) -> Usage:
    """The `usage` part of a response (absent or null: nothing spent)."""
    usage = obj(raw)
    written = count(usage.get("cache_creation_input_tokens"))
    return Usage(
        input_uncached=count(usage.get("input_tokens")) + written,
        input_cached=count(usage.get("cache_read_input_tokens")),
        output=count(usage.get("output_tokens")),
        reasoning=count(obj(usage.get("output_tokens_details")).get("thinking_tokens")),
        cache_write=written,
    )


def from_wire(payload: Mapping[str, JsonValue], forced_reply: bool = False) -> ModelOutput:
    """The response as a neutral output; with `forced_reply` (the request forced `REPLY_TOOL`),
    that call's input is the reply's text, as JSON, and not a tool call."""
    if payload.get("type") == "error":
        raise ModelError(f"API error: {payload.get('error')}")
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    raw_blocks: list[JsonObject] = []
    for item in array(payload.get("content")):
        block = obj(item)
        kind = block.get("type")
        if kind == "text":
            texts.append(text(block.get("text")))
        elif kind == "tool_use" and forced_reply and block.get("name") == REPLY_TOOL:
            texts.append(json.dumps(block.get("input"), ensure_ascii=False))
        elif kind == "tool_use":
            args = block.get("input")
            ok = isinstance(args, Mapping)
            calls.append(
                ToolCall(
                    text(block.get("id")),
                    text(block.get("name")),
                    dict(obj(args)),
                    None if ok else "input must be a JSON object",
                )
            )
        elif kind in ("thinking", "redacted_thinking"):
            raw_blocks.append(dict(block))
            if kind == "thinking":
                thoughts.append(text(block.get("thinking")))
    stop = _STOP.get(text(payload.get("stop_reason")), "other")
    if forced_reply and stop == "tool_calls" and not calls:
        stop = "stop"
    return ModelOutput(
        message=ChatMessage(
            "assistant",
            "".join(texts),
            calls,
            reasoning="\n".join(thoughts) or None,
            raw_blocks=raw_blocks or None,
        ),
        stop_reason=stop,
        usage=usage_from_wire(payload.get("usage")),
        model=text(payload.get("model")),
        id=text(payload.get("id")),
    )


class AnthropicAPI(ModelAPI):
    def __init__(
        self, model_name: str, base_url: str | None = None, api_key_env: str = "ANTHROPIC_API_KEY"
    ) -> None:
        super().__init__(model_name)
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL")
        self.api_key_env = api_key_env
        self._client: Any = None

    def check_ready(self) -> None:
        if not os.environ.get(self.api_key_env) and not self.base_url:
            raise ModelError(f"set {self.api_key_env} in the environment to call {self.model_name}")

    def takes_reasoning_effort(self) -> bool:
        return THINKING_MODELS.match(self.model_name) is not None

    def client(self) -> Any:
        if self._client is None:
            import anthropic

            self.check_ready()
            key = os.environ.get(self.api_key_env)
            self._client = anthropic.AsyncAnthropic(
                api_key=key or "unused", base_url=self.base_url, max_retries=0
            )
        return self._client

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        client = self.client()
        body = to_wire(self.model_name, messages, tools, config)
        create = client.messages.create
        known = set(inspect.signature(create).parameters)
        kwargs = {k: v for k, v in body.items() if k in known}
        extra = {k: v for k, v in body.items() if k not in known}
        resp = await create(**kwargs, extra_body=extra or None, timeout=config.timeout or 600.0)
        forced = not tools and bool(config.require_schema) and config.answer_schema is not None
        return from_wire(resp.model_dump(mode="json"), forced)

    def is_retryable(self, exc: BaseException) -> bool:
        import anthropic

        if isinstance(
            exc, anthropic.RateLimitError | anthropic.APITimeoutError | anthropic.APIConnectionError
        ):
            return True
        return isinstance(exc, anthropic.APIStatusError) and exc.status_code >= 500

    def retry_after(self, exc: BaseException) -> float | None:
        return _retry_after(exc)
