"""A provider that replays a script: tool calls, answers and failures, in order.

Tests (and offline demos of the loop) use it at the LLM boundary. Usage is counted from the
actual prompt and reply with the o200k tokenizer, so meters and compaction behave as they would
with a real model whose prompt is never cached.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from memdir.jsontypes import JsonObject
from memdir.models.base import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelError,
    ModelOutput,
    ToolCall,
    ToolInfo,
)
from memdir.models.usage import Usage
from memdir.tokens import count_tokens


@dataclass
class ScriptedReply:
    """One scripted reply: some text, some tool calls (name, args), or an exception to raise. Not
    a store step (`store.store.Step`): what the model says, before any tool runs."""

    content: str = ""
    tool_calls: list[tuple[str, JsonObject]] = field(default_factory=list)
    error: BaseException | None = None
    stop_reason: str | None = None


ScriptItem: TypeAlias = (
    "ScriptedReply | str | tuple[str, JsonObject] | BaseException | Callable[[list[ChatMessage]], ScriptItem]"
)


def call(name: str, **args: Any) -> ScriptedReply:
    return ScriptedReply(tool_calls=[(name, args)])


def answer(text: str) -> ScriptedReply:
    return ScriptedReply(content=text)


def prompt_text(messages: list[ChatMessage]) -> str:
    parts: list[str] = []
    for m in messages:
        parts.append(m.content)
        parts += [json.dumps(c.arguments) for c in m.tool_calls]
    return "\n".join(parts)


class ScriptedAPI(ModelAPI):
    """Replays `script`; when it runs out, fails loudly (a test asked for more than it wrote)."""

    def __init__(self, script: Iterable[ScriptItem], model_name: str = "scripted") -> None:
        super().__init__(model_name)
        self.script: list[ScriptItem] = list(script)
        self.requests: list[tuple[list[ChatMessage], list[ToolInfo], GenerateConfig]] = []
        self._n = 0

    def is_retryable(self, exc: BaseException) -> bool:
        return isinstance(exc, TimeoutError | ConnectionError)

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        self.requests.append((list(messages), list(tools), config))
        if not self.script:
            raise ModelError(f"scripted model ran out of replies after {self._n}")
        item = self.script.pop(0)
        self._n += 1
        if callable(item) and not isinstance(item, BaseException | ScriptedReply):
            item = item(messages)
        reply = _as_reply(item)
        if reply.error is not None:
            raise reply.error
        calls = [ToolCall(f"call_{self._n}_{i}", n, dict(a)) for i, (n, a) in enumerate(reply.tool_calls)]
        out_tokens = count_tokens(reply.content + "".join(json.dumps(a) for _, a in reply.tool_calls))
        if config.max_tokens is not None and out_tokens > config.max_tokens:
            out_tokens = config.max_tokens
            stop = "max_tokens"
        else:
            stop = reply.stop_reason or ("tool_calls" if calls else "stop")
        usage = Usage(input_uncached=count_tokens(prompt_text(messages)), output=out_tokens)
        return ModelOutput(ChatMessage("assistant", reply.content, calls), stop, usage, self.model_name)  # type: ignore[arg-type]


def _as_reply(item: Any) -> ScriptedReply:
    if isinstance(item, ScriptedReply):
        return item
    if isinstance(item, str):
        return ScriptedReply(content=item)
    if isinstance(item, BaseException):
        return ScriptedReply(error=item)
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return ScriptedReply(tool_calls=[(item[0], item[1])])
    raise TypeError(f"cannot script {item!r}; use ScriptedReply, a string, (name, args) or an exception")


def load_script(data: list[Any]) -> list[ScriptedReply]:
    """A script from JSON: [{"tool_calls": [{"name": ..., "arguments": {...}}]}, {"content": "..."}]."""
    replies: list[ScriptedReply] = []
    for i, obj in enumerate(data):
        if isinstance(obj, str):
            replies.append(ScriptedReply(content=obj))
            continue
        if not isinstance(obj, dict):
            raise ValueError(f"script item {i + 1} must be a string or an object with content/tool_calls")
        calls = [(c["name"], c.get("arguments", {})) for c in obj.get("tool_calls", [])]
        replies.append(ScriptedReply(content=obj.get("content", ""), tool_calls=calls))
    return replies
