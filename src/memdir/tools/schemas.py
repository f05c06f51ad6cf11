"""Renderings of one tool definition for each wire format; none is written by hand."""

from __future__ import annotations

from typing import Any

from memdir.tools.base import ToolSpec


def openai_tool(spec: ToolSpec) -> dict[str, Any]:
    """Chat Completions `tools` entry (strict JSON schema off: optional parameters stay optional)."""
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.input_schema()},
    }


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema()}


def mcp_tool(spec: ToolSpec) -> dict[str, Any]:
    """Fields of an MCP `Tool`, annotations included so clients know what may write."""
    return {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": spec.input_schema(),
        "annotations": {
            "readOnlyHint": spec.read_only,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.read_only,
            "openWorldHint": False,
        },
    }


def render(specs: list[ToolSpec], fmt: str) -> list[dict[str, Any]]:
    makers = {"openai": openai_tool, "anthropic": anthropic_tool, "mcp": mcp_tool}
    if fmt not in makers:
        raise ValueError(f"unknown schema format {fmt!r}; choose openai, anthropic or mcp")
    return [makers[fmt](s) for s in specs]
