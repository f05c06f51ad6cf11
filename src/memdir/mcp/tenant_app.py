"""Many stores behind one HTTP endpoint: the bearer token picks the tenant, then the tenant's server.

Every token gets its own MCP server and session manager, built over its tenant's store and
profile, so a request is authenticated before any MCP handling and can only ever reach the
harness its token names: there is no shared dispatch table a path or session id could steer.
Sessions created with one token are unknown to every other token's manager.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memdir.mcp.server import MAX_SESSIONS, SESSION_IDLE_S, build_server
from memdir.mcp.tenants import Tenants
from memdir.store.store import Store
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def _security(host: str) -> TransportSecuritySettings | None:
    """The SDK's DNS-rebinding protection for a local bind, as `streamable_http_app` sets it."""
    if host not in LOCAL_HOSTS:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def bearer(scope: Scope) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for key, value in headers:
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None


async def _unauthorized(send: Send, reason: str) -> None:
    body = json.dumps({"error": "invalid_token", "error_description": reason}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (
                    b"www-authenticate",
                    f'Bearer realm="memdir", error="invalid_token", error_description="{reason}"'.encode(),
                ),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class TenantDispatch:
    """ASGI endpoint: authenticate, then hand the request to that token's own session manager."""

    def __init__(self, tenants: Tenants, host: str = "127.0.0.1", guards: Guards | None = None) -> None:
        self.tenants = tenants
        stores: dict[str, Store] = {}  # one Store per root, so its writer lock and observers are shared
        self.managers: dict[str, StreamableHTTPSessionManager] = {}
        self.harnesses: dict[str, Harness] = {}
        for entry in tenants.tokens:
            store = stores.get(entry.real_root)
            if store is None:
                store = stores[entry.real_root] = open_store(entry.real_root, guards=guards or Guards())
            harness = Harness(
                store,
                entry.profile,
                role="mcp",
                tenant=entry.tenant,
                reorganize=True if entry.reorganize else None,
            )
            server = build_server(harness, name=f"memdir:{entry.tenant}")
            self.harnesses[entry.token_sha256] = harness
            self.managers[entry.token_sha256] = StreamableHTTPSessionManager(
                app=server,
                security_settings=_security(host),
                max_sessions=MAX_SESSIONS,
                session_idle_timeout=SESSION_IDLE_S,
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = bearer(scope)
        if token is None:
            await _unauthorized(send, "send 'Authorization: Bearer <token>'; memdir token add makes one")
            return
        entry = self.tenants.lookup(token)
        if entry is None:
            await _unauthorized(send, "unknown token")
            return
        await self.managers[entry.token_sha256].handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for manager in self.managers.values():
                await stack.enter_async_context(manager.run())
            yield


def tenants_app(
    tenants: Tenants, host: str = "127.0.0.1", path: str = "/mcp", guards: Guards | None = None
) -> Starlette:
    """A Starlette app serving every tenant at `path`; each manager runs for the app's lifetime."""
    dispatch = TenantDispatch(tenants, host, guards)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with dispatch.run():
            yield

    app = Starlette(routes=[Route(path, endpoint=dispatch)], lifespan=lifespan)
    app.state.dispatch = dispatch
    return app


def serve_tenants(
    tenants: Tenants, port: int, host: str = "127.0.0.1", guards: Guards | None = None, **uvicorn_kw: Any
) -> None:
    from memdir.mcp.http_limits import serve

    serve(tenants_app(tenants, host, guards=guards), host, port, **uvicorn_kw)
