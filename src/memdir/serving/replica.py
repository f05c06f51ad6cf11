"""The work of one tenant replica: its tenants' copies, an MCP server per token, one request
at a time answered whole.

The MCP servers here are stateless (the SDK's `stateless=True`, JSON responses): each POST
stands alone, with no session to lose. That is what lets a request go to whichever replica Ray
Serve picks, and a tenant move to another replica when its own is lost, without the client
starting over; a replica-bound session would end with its replica. So there are no event
streams to GET and no sessions to DELETE (the ingress answers both 405).

A write is acknowledged only after its sync to the tenant's remote (durable.py), inside the
tool call: `DurableHarness.call` returns the result only then, so the reply cannot leave first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from memdir.errors import MemdirError
from memdir.mcp.server import build_server
from memdir.serving.durable import TenantCopy
from memdir.serving.wire import Forwarded, Grant, Reply
from memdir.tools.base import Meter, ToolArgs, ToolResult
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness


class DurableHarness(Harness):
    """A harness over a tenant copy: a call first sees every write other replicas acknowledged,
    and a write's result is returned only once the write is in the tenant's remote."""

    def __init__(self, copy: TenantCopy, grant: Grant) -> None:
        super().__init__(
            copy.store,
            grant.profile,
            keep_indexes=True,
            role="mcp",
            tenant=grant.tenant,
            reorganize=True if grant.reorganize else None,
        )
        self.copy = copy

    def call(self, name: str, args: ToolArgs | None = None, **meta: Any) -> ToolResult:
        spec = self.specs.get(name)
        try:
            self.copy.refresh()
        except MemdirError as exc:
            return ToolResult(f"Error: {exc}; nothing was done, call again", True, Meter(calls=1))
        result = super().call(name, args, **meta)
        if spec is None or spec.read_only or result.is_error:
            return result  # a refused call left the store as it was (docs/tools.md)
        try:
            self.copy.make_durable(self.copy.wrote())
        except MemdirError as exc:
            return ToolResult(
                f"Error: the write was made on this server but did not reach the tenant's remote "
                f"({exc}), so it is not acknowledged; view the file before writing it again",
                True,
                result.meter,
            )
        return result


@dataclass
class LoadedTenant:
    """A tenant loaded on this replica: its copy, and one stateless MCP server per token.

    Serve's multiplexer loads one model at a time per replica (one lock around the whole
    load), and a tenant's load is a clone of its remote: 16 clients reaching 16 cold tenants
    queued on each other's clones for seconds (benchmarks/results/2026-12-06-ray-serve.md).
    So the multiplexed load only makes this object, and the clone runs on the tenant's first
    request, under the tenant's own lock: cold tenants load side by side. A clone that fails
    is tried again by the next request."""

    grant: Grant
    workdir: Path
    guards: Guards | None = None
    copy: TenantCopy | None = None
    managers: dict[str, StreamableHTTPSessionManager] = field(default_factory=dict)
    stops: list[asyncio.Event] = field(default_factory=list)
    calls: int = 0  # requests in flight
    closing: bool = False  # unloaded: no new request may use it
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    loading: asyncio.Lock = field(default_factory=asyncio.Lock)

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        self.calls += 1
        self.idle.clear()
        try:
            yield
        finally:
            self.calls -= 1
            if self.calls == 0:
                self.idle.set()

    async def ready(self) -> TenantCopy:
        """The tenant's copy, cloned from its remote by the first request that needs it."""
        async with self.loading:
            if self.copy is None:
                g = self.grant
                self.copy = await anyio.to_thread.run_sync(
                    lambda: TenantCopy.load(g.tenant, g.remote, self.workdir, self.guards)
                )
            return self.copy

    async def manager(self, grant: Grant) -> StreamableHTTPSessionManager:
        found = self.managers.get(grant.token_sha256)
        if found is not None:
            return found
        harness = DurableHarness(await self.ready(), grant)
        manager = StreamableHTTPSessionManager(
            build_server(harness, name=f"memdir:{grant.tenant}"),
            json_response=True,
            stateless=True,
            # the ingress checked Host and Origin already (loopback.RebindingGuard)
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        ready, stop = asyncio.Event(), asyncio.Event()
        asyncio.get_running_loop().create_task(_run(manager, ready, stop))
        await ready.wait()
        self.managers.setdefault(grant.token_sha256, manager)
        self.stops.append(stop)
        return self.managers[grant.token_sha256]

    async def close(self) -> None:
        """Wait for the requests in flight, stop the servers, then release and delete the copy."""
        self.closing = True
        if self.calls:
            await self.idle.wait()
        for stop in self.stops:
            stop.set()
        if self.copy is not None:
            await anyio.to_thread.run_sync(self.copy.close)


async def _run(manager: StreamableHTTPSessionManager, ready: asyncio.Event, stop: asyncio.Event) -> None:
    async with manager.run():
        ready.set()
        await stop.wait()


async def answer(tenant: LoadedTenant, request: Forwarded) -> Reply:
    """Run one forwarded POST through the token's MCP server and collect its reply whole; 503
    when the tenant cannot be loaded (its remote unreachable), saying why."""
    with tenant.pinned():
        try:
            manager = await tenant.manager(request.grant)
        except MemdirError as exc:
            body = json.dumps({"error": "tenant_unavailable", "error_description": str(exc)}).encode()
            return Reply(503, [(b"content-type", b"application/json"), (b"retry-after", b"1")], body)
        return await _exchange(manager, request)


async def _exchange(manager: StreamableHTTPSessionManager, request: Forwarded) -> Reply:
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": request.headers,
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 80),
    }
    answered = Reply(500)
    done = asyncio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": request.body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered.status = int(message["status"])
            answered.headers = list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            answered.body += message.get("body", b"")
            if not message.get("more_body", False):
                done.set()

    try:
        await manager.handle_request(scope, receive, send)
    finally:
        done.set()
    return answered
