"""Renderings of one tool definition for each wire format; none is written by hand.

These are the schemas agent builders get (the Python API's `Memory.tools`, the MCP server), so
they carry memdir's extension parameters such as `expected_sha256` and the notes that teach the
store's conventions; memdir's own roles take the study's exact schemas and texts instead
(agents/loop.py, tool_infos).
"""

from __future__ import annotations

from typing import Any

from memdir.tools.base import ToolSpec


def openai_tool(spec: ToolSpec) -> dict[str, Any]:
    """Chat Completions `tools` entry (strict JSON schema off: optional parameters stay optional)."""
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.describe(), "parameters": spec.input_schema()},
    }


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.describe(), "input_schema": spec.input_schema()}


def mcp_tool(spec: ToolSpec) -> dict[str, Any]:
    """Fields of an MCP `Tool`: title, annotations (so clients know what may write) and, for a
    tool with structured results, their schema. The title is also given in the annotations,
    where clients of protocol versions before `Tool.title` look for it."""
    out: dict[str, Any] = {
        "name": spec.name,
        "title": spec.title,
        "description": spec.describe(),
        "inputSchema": spec.input_schema(),
        "annotations": {
            "title": spec.title,
            "readOnlyHint": spec.read_only,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.idempotent,
            "openWorldHint": False,
        },
    }
    if spec.output_schema is not None:
        out["outputSchema"] = spec.output_schema
    return out


def render(specs: list[ToolSpec], fmt: str) -> list[dict[str, Any]]:
    makers = {"openai": openai_tool, "anthropic": anthropic_tool, "mcp": mcp_tool}
    if fmt not in makers:
        raise ValueError(f"unknown schema format {fmt!r}; choose openai, anthropic or mcp")
    return [makers[fmt](s) for s in specs]
