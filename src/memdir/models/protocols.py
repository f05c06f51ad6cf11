"""How tools reach a model and how its calls come back: the three tool protocols.

- `native`: the API's own `tools` parameter and structured `tool_calls` (OpenAI, vLLM and Ollama
  with a tool parser). Servers that only template the tools into the prompt (llama.cpp's server
  with a model's own chat template) return the call as text in `content`; it is recovered from
  there, and that turn is sent back in text form, since the server could not have parsed it.
- `text`: no `tools` parameter. The tools are described in the system prompt in the Hermes /
  Qwen form those models were trained on (`<tools>`, `<tool_call>`), calls are parsed from the
  reply, and results go back as a user turn of `<tool_response>` blocks, which is what such chat
  templates render a tool result as anyway.
- `json-schema`: as `text`, but the server is asked to constrain the reply to one JSON object,
  a call of one of the tools or a final reply (llama.cpp's `response_format` with a schema),
  so every reply parses.

Everything here is pure: neutral messages in, neutral messages (or a schema) out. Each turn is
rendered the same way every time (an assistant turn as the exact text the model produced), so
the prompt of round r+1 extends the prompt of round r and a server's prefix cache keeps hitting.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal, get_args

from memdir.jsontypes import JsonObject
from memdir.models.base import ChatMessage, ModelError, ToolCall, ToolInfo
from memdir.models.textcalls import parse_text_calls, render_text_call

ToolProtocol = Literal["native", "text", "json-schema"]
PROTOCOLS: tuple[str, ...] = get_args(ToolProtocol)
FINAL_KEY = "reply"
# The text protocol stops generation at the end of the first call (one call per reply, and no
# tokens spent on calls planned before the first result is known).
STOP_AFTER_CALL = "</tool_call>"

_TEXT_TOOLS = """# Tools

You may call one or more functions to do the task. The functions are listed, one JSON signature \
per line, inside <tools></tools>:
<tools>
{tools}
</tools>

To call a function, write a JSON object with the function name and its arguments inside \
<tool_call></tool_call> tags:
<tool_call>
{{"name": "<function-name>", "arguments": {{<argument-name>: <value>, ...}}}}
</tool_call>
You may write several such blocks in one reply; they run in order. The results come back to you \
inside <tool_response></tool_response>, written by the tools, never by you. When you are \
finished, reply with plain text and no tool call."""

_SCHEMA_TOOLS = """# Tools

You act by calling functions. The functions are listed, one JSON signature per line, inside \
<tools></tools>:
<tools>
{tools}
</tools>

Every reply you write is exactly one JSON object, either a function call:
{{"name": "<function-name>", "arguments": {{<argument-name>: <value>, ...}}}}
or, when you are finished, your final reply:
{{"{final}": "<your final reply as text>"}}
Each call's result comes back to you inside <tool_response></tool_response>."""


def check_protocol(name: str) -> ToolProtocol:
    if name not in PROTOCOLS:
        raise ModelError(f"unknown tool protocol {name!r}; choose one of {', '.join(PROTOCOLS)}")
    return name  # type: ignore[return-value]


def _signature(t: ToolInfo) -> str:
    fn = {"name": t.name, "description": t.description, "parameters": t.parameters}
    return json.dumps({"type": "function", "function": fn}, ensure_ascii=False)


def tools_prompt(tools: list[ToolInfo], protocol: ToolProtocol) -> str:
    listing = "\n".join(_signature(t) for t in tools)
    if protocol == "json-schema":
        return _SCHEMA_TOOLS.format(tools=listing, final=FINAL_KEY)
    return _TEXT_TOOLS.format(tools=listing)


def reply_schema(
    tools: list[ToolInfo],
    *,
    final: JsonObject | None = None,
    call_required: bool = False,
    calls_allowed: bool = True,
) -> JsonObject:
    """One JSON object: a call of one of `tools` (name and its arguments' schema) or the final reply.

    `final` replaces the plain `{"reply": text}` with a structured answer (the answering role's
    `{"answer", "citations"}`); `call_required` leaves the final reply out (a first round that
    must look before it answers); `calls_allowed=False` leaves the calls out (the last call of an
    episode at its round cap, which must answer: the 1.5B local model kept calling tools there).
    """
    calls: list[JsonObject] = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters},
            "required": ["name", "arguments"],
        }
        for t in tools
    ]
    if call_required:
        return {"anyOf": calls}
    plain: JsonObject = {
        "type": "object",
        "properties": {FINAL_KEY: {"type": "string"}},
        "required": [FINAL_KEY],
    }
    if not calls_allowed:
        return {"anyOf": [final or plain]}
    return {"anyOf": [*calls, final or plain]}


def assistant_text(m: ChatMessage) -> str:
    """An assistant turn as text: what the model wrote, or a canonical rendering of its calls."""
    if m.raw_text is not None:
        return m.raw_text
    parts = [m.content] if m.content else []
    parts += [render_text_call(c) for c in m.tool_calls]
    return "\n".join(parts)


def _response(m: ChatMessage) -> str:
    status = " (error)" if m.is_error else ""
    return f"<tool_response>\n{m.tool_name or 'tool'}{status}:\n{m.content}\n</tool_response>"


def as_text_messages(messages: list[ChatMessage], tools: list[ToolInfo], protocol: ToolProtocol,
                     *, only_text_turns: bool = False) -> list[ChatMessage]:  # fmt: skip
    """`messages` for a server that sees tools only as text.

    With `only_text_turns` (the native protocol) only assistant turns whose calls were recovered
    from text, and their results, are rewritten; structured turns stay structured.
    """
    out: list[ChatMessage] = []
    text_ids: set[str] = set()
    for m in messages:
        if m.role == "system" and not only_text_turns and tools:
            out.append(ChatMessage("system", f"{m.content}\n\n{tools_prompt(tools, protocol)}"))
        elif m.role == "assistant" and (not only_text_turns or m.raw_text is not None):
            text_ids.update(c.id for c in m.tool_calls)
            out.append(ChatMessage("assistant", assistant_text(m)))
        elif m.role == "tool" and (not only_text_turns or m.tool_call_id in text_ids):
            if out and out[-1].role == "user" and out[-1].content.startswith("<tool_response>"):
                out[-1] = ChatMessage("user", f"{out[-1].content}\n{_response(m)}")
            else:
                out.append(ChatMessage("user", _response(m)))
        else:
            out.append(m)
    return out


def recover_calls(message: ChatMessage, tools: list[ToolInfo], protocol: ToolProtocol) -> ChatMessage:
    """The assistant message with calls written as text turned into tool calls (raw text kept)."""
    if message.tool_calls or not tools:
        return message
    raw = message.content
    if protocol == "json-schema":
        final = _final_reply(raw)
        if final is not None:
            return ChatMessage("assistant", final, raw_text=raw, reasoning=message.reasoning)
    if protocol == "text" and raw.count("<tool_call>") > raw.count("</tool_call>"):
        raw = raw.rstrip() + "\n" + STOP_AFTER_CALL  # the server stopped on it and dropped it
    found = parse_text_calls(raw, [t.name for t in tools], id_prefix="textcall")
    if not found.calls:
        return message
    tag = hashlib.sha1(raw.encode("utf-8", "replace")).hexdigest()[:8]
    calls = [ToolCall(f"{c.id}_{tag}", c.name, c.arguments, c.parse_error) for c in found.calls]
    return ChatMessage("assistant", found.text, calls, raw_text=raw, reasoning=message.reasoning)


def _final_reply(raw: str) -> str | None:
    """The final reply of a json-schema turn: the `reply` text, or a structured answer as is."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict) or "name" in value:
        return None
    if isinstance(value.get(FINAL_KEY), str):
        return str(value[FINAL_KEY])
    return raw if "answer" in value else None
