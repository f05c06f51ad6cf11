"""Renderings of one tool definition for each wire format; none is written by hand.

These are the schemas agent builders get (the Python API's `Memory.tools`, the MCP server), so
they carry memdir's extension parameters such as `expected_sha256` and the notes that teach the
store's conventions; memdir's own roles take the base schemas and texts instead
(agents/loop.py, tool_infos).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypedDict, cast

from memdir.jsontypes import JsonObject
from memdir.tools.base import ToolSpec


def openai_tool(spec: ToolSpec) -> JsonObject:
    """Chat Completions `tools` entry (strict JSON schema off: optional parameters stay optional)."""
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.describe(), "parameters": spec.input_schema()},
    }


def openai_responses_tool(spec: ToolSpec) -> JsonObject:
    """Responses API `tools` entry: flat, no `function` wrapper. `strict` is said, off: the
    Responses API makes a function strict when it is left out, and strict mode would make every
    optional parameter (`start_line`, `expected_sha256`...) required."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.describe(),
        "parameters": spec.input_schema(),
        "strict": False,
    }


def anthropic_tool(spec: ToolSpec) -> JsonObject:
    return {"name": spec.name, "description": spec.describe(), "input_schema": spec.input_schema()}


class McpAnnotations(TypedDict):
    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


def mcp_annotations(spec: ToolSpec) -> McpAnnotations:
    """What an MCP client is told a tool may do (the MCP server's `Tool.annotations` too)."""
    return McpAnnotations(
        title=spec.title,
        readOnlyHint=spec.read_only,
        destructiveHint=spec.destructive,
        idempotentHint=spec.idempotent,
        openWorldHint=False,
    )


def mcp_tool(spec: ToolSpec) -> JsonObject:
    """Fields of an MCP `Tool`: title, annotations (so clients know what may write) and, for a
    tool with structured results, their schema. The title is also given in the annotations,
    where clients of protocol versions before `Tool.title` look for it."""
    out: JsonObject = {
        "name": spec.name,
        "title": spec.title,
        "description": spec.describe(),
        "inputSchema": spec.input_schema(),
        "annotations": cast(JsonObject, mcp_annotations(spec)),  # every value a JSON scalar
    }
    if spec.output_schema is not None:
        out["outputSchema"] = spec.output_schema
    return out


# The wire formats a tool list is rendered in; the API's `Memory.tools(format=...)` takes this type.
Format = Literal["openai", "openai-responses", "anthropic", "mcp"]
FORMATS: dict[Format, Callable[[ToolSpec], JsonObject]] = {
    "openai": openai_tool,
    "openai-responses": openai_responses_tool,
    "anthropic": anthropic_tool,
    "mcp": mcp_tool,
}


def render(specs: list[ToolSpec], fmt: str) -> list[JsonObject]:
    if fmt not in FORMATS:
        raise ValueError(f"unknown schema format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return [FORMATS[fmt](s) for s in specs]
