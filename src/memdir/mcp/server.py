"""The MCP server: one profile of one store, over stdio or streamable HTTP.

Built on the SDK's low-level `Server` so the tool list is exactly our generated schemas (names,
titles, parameter names, annotations, output schemas), not a re-inference from Python
signatures. Tool errors come back as `is_error` results carrying our message, which the model
can act on; a tool the server does not list is the spec's protocol error (-32602), naming it.
A successful call of a tool with an output schema also carries its structured result
(`structuredContent`, which the SDK's client validates against that schema) and, when the
result names a file's sha256, that hash in `_meta` (docs/tools.md, "Structured results").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from memdir import __version__
from memdir.store.store import Store
from memdir.tools.base import ToolResult
from memdir.tools.profiles import Harness
from memdir.tools.schemas import mcp_annotations

# Bounds for the HTTP transport, so hostile or careless clients cannot exhaust the server: a
# bounded number of MCP sessions per store (an idle one is dropped after SESSION_IDLE_S; an
# open GET event stream keeps it alive). Connection limits (open, idle, request-head deadline,
# shutdown) are in `http_limits`. Request bodies are capped by the SDK (4 MB, answered 413).
MAX_SESSIONS = 256
SESSION_IDLE_S = 600.0

INSTRUCTIONS = (
    "Long-term memory as markdown files under /memories. Every path starts with /memories. "
    "Files open with frontmatter (name = file stem, one-line description). To edit safely beside "
    "other writers, pass the sha256 that view returns as expected_sha256: a file changed since "
    "is then refused, not overwritten."
)


def mcp_tools(harness: Harness) -> list[types.Tool]:
    tools: list[types.Tool] = []
    for spec in harness.specs.values():
        ann = mcp_annotations(spec)  # the tool as tools.schemas.mcp_tool renders it
        tools.append(
            types.Tool(
                name=spec.name,
                title=spec.title,
                description=spec.describe(),
                input_schema=spec.input_schema(),
                output_schema=spec.output_schema,
                annotations=types.ToolAnnotations(
                    title=ann["title"],
                    read_only_hint=ann["readOnlyHint"],
                    destructive_hint=ann["destructiveHint"],
                    idempotent_hint=ann["idempotentHint"],
                    open_world_hint=ann["openWorldHint"],
                ),
            )
        )
    return tools


def call_result(result: ToolResult, structured: bool) -> types.CallToolResult:
    """The MCP form of one call's result. `structured`: the tool declares an output schema, so
    a success carries its data (every such tool sets it); an error carries text only, which the
    protocol exempts from the schema."""
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=result.text)]
    data = result.data if structured and not result.is_error else None
    if data is None:
        return types.CallToolResult(content=content, is_error=result.is_error)
    sha = data.get("sha256")
    meta = {"sha256": sha} if isinstance(sha, str) else None
    return types.CallToolResult(content=content, structured_content=data, is_error=False, _meta=meta)


def unknown_tool(harness: Harness, name: str) -> str:
    """The message of the spec's error for a tool this server does not list: the name first, as
    in the spec's example, then what the profile serves instead."""
    return f"Unknown tool: {name} (the '{harness.profile}' profile serves {', '.join(harness.specs)})"


def build_server(
    harness: Harness,
    name: str = "memdir",
    in_flight: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
) -> Server[Any]:
    """An MCP server exposing `harness`'s profile; every call goes through the harness.
    `in_flight` is entered around each call, on the event loop (the tenant pool counts calls
    with it, so it never closes a store under a running call)."""
    tools = mcp_tools(harness)

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = harness.specs.get(params.name)
        if spec is None:  # a protocol error, not a tool result (docs/serving.md)
            raise MCPError(INVALID_PARAMS, unknown_tool(harness, params.name))
        args = params.arguments or {}
        # No lock here: reads run side by side (one slow grep must not hold up every other
        # client of the store); writes queue on the store's writer lock, across threads and
        # processes alike, and the harness keeps its meter under its own lock.
        with in_flight():
            result = await anyio.to_thread.run_sync(lambda: harness.call(params.name, dict(args)))
        return call_result(result, spec.output_schema is not None)

    return Server(
        name,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(store: Store, profile: str, **meta: Any) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(Harness(store, profile, keep_indexes=True, **{"role": "mcp", **meta}))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app(store: Store, profile: str, host: str = "127.0.0.1", **meta: Any) -> Any:
    """The streamable HTTP app at /mcp, its streams resumable (resume.py); on a loopback
    `host`, behind the DNS-rebinding guard (loopback.py: the SDK's own guard knows three
    spellings of loopback, so it is left off)."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    from memdir.mcp.loopback import RebindingGuard, is_loopback
    from memdir.mcp.resume import ResumableSessions

    server = build_server(Harness(store, profile, keep_indexes=True, **{"role": "mcp", **meta}))
    manager = ResumableSessions(
        server,
        max_sessions=MAX_SESSIONS,
        session_idle_timeout=SESSION_IDLE_S,
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app = Starlette(
        routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))], lifespan=lambda _app: manager.run()
    )
    if is_loopback(host):
        app.add_middleware(RebindingGuard)
    return app


def serve_http(store: Store, profile: str, port: int, host: str = "127.0.0.1", **meta: Any) -> None:
    from memdir.mcp.http_limits import serve

    serve(http_app(store, profile, host, **meta), host, port)
