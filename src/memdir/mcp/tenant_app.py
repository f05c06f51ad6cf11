"""Many stores behind one HTTP endpoint: the bearer token picks the tenant, then the tenant's server.

Every token gets its own MCP server and session manager, built over its tenant's store and
profile, so a request is authenticated before any MCP handling and can only ever reach the
harness its token names: there is no shared dispatch table a path or session id could steer.
Sessions created with one token are unknown to every other token's manager. Tenants are opened
on their first request and the least recently used idle ones closed (tenant_pool.py), so the
process holds OPEN_TENANTS tenants' descriptors and memory however many the file lists.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memdir.errors import MemdirError
from memdir.mcp.loopback import RebindingGuard, is_loopback
from memdir.mcp.tenant_pool import TenantBusy, TenantPool
from memdir.mcp.tenants import OPEN_TENANTS, PER_TENANT, Tenants
from memdir.mcp.tenants_live import LiveTenants, grant
from memdir.tools.base import Meter
from memdir.tools.guards import Guards


def bearer(scope: Scope) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for key, value in headers:
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None


async def refuse(send: Send, status: int, error: str, reason: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"error": error, "error_description": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def unauthorized(send: Send, reason: str) -> None:
    challenge = f'Bearer realm="memdir", error="invalid_token", error_description="{reason}"'
    await refuse(send, 401, "invalid_token", reason, [(b"www-authenticate", challenge.encode())])


class TenantDispatch:
    """ASGI endpoint: authenticate, then hand the request to that token's own session manager,
    its tenant opened on demand by the pool (tenant_pool.py)."""

    def __init__(
        self,
        tenants: Tenants | LiveTenants,
        host: str = "127.0.0.1",
        guards: Guards | None = None,
        open_tenants: int = OPEN_TENANTS,
        per_tenant: int = PER_TENANT,
    ) -> None:
        self.tenants = tenants if isinstance(tenants, LiveTenants) else LiveTenants(tenants)
        self.pool = TenantPool(guards, open_tenants, per_tenant)

    @property
    def meters(self) -> dict[str, Meter]:
        """Each token's call totals (by token hash), kept across evictions."""
        return self.pool.meters

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = bearer(scope)
        if token is None:
            await unauthorized(send, "send 'Authorization: Bearer <token>'; memdir token add makes one")
            return
        entry = self.tenants.current.lookup(token)  # as last read: the file is watched off the loop
        if entry is None:
            await unauthorized(send, "unknown token")
            return
        handed = False
        stream = scope.get("method") == "GET"  # an event stream, held open for its session's life
        try:
            async with self.pool.use(entry, stream=stream) as manager:
                if grant(self.tenants.current.entry(entry.token_sha256)) != grant(entry):  # revoked meanwhile
                    self.pool.revoke({entry.token_sha256})
                    await unauthorized(send, "unknown token")
                    return
                handed = True
                await manager.handle_request(scope, receive, send)
        except TenantBusy as busy:
            await refuse(send, 429, "too_many_requests", str(busy), [(b"retry-after", b"1")])
        except MemdirError as exc:
            if handed:
                raise
            # the tenant's root cannot be opened (gone since the tenants file was read)
            await refuse(send, 503, "tenant_unavailable", str(exc), [])

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """The pool's lifetime, and the watch on the tenants file beside it."""
        async with self.pool.run(), anyio.create_task_group() as tg:
            tg.start_soon(self._watch)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _watch(self) -> None:
        """Read the tenants file again whenever it changes (a stat every CHECK_EVERY_S, the
        read in a worker thread) and end the sessions of the tokens it no longer holds."""
        if self.tenants.path is None:
            return
        while True:
            await anyio.sleep(self.tenants.every)
            gone = await anyio.to_thread.run_sync(lambda: self.tenants.refresh(force=True))
            if gone:
                self.pool.revoke(gone)


def tenants_app(
    tenants: Tenants | LiveTenants,
    host: str = "127.0.0.1",
    path: str = "/mcp",
    guards: Guards | None = None,
    open_tenants: int = OPEN_TENANTS,
    per_tenant: int = PER_TENANT,
) -> Starlette:
    """A Starlette app serving every tenant at `path`; the tenant pool runs for the app's lifetime."""
    dispatch = TenantDispatch(tenants, host, guards, open_tenants, per_tenant)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with dispatch.run():
            yield

    # On loopback, the DNS-rebinding guard (loopback.py) answers before any token is looked at.
    guard = [Middleware(RebindingGuard)] if is_loopback(host) else []
    app = Starlette(routes=[Route(path, endpoint=dispatch)], middleware=guard, lifespan=lifespan)
    app.state.dispatch = dispatch
    return app


def serve_tenants(
    tenants: Tenants | LiveTenants,
    port: int,
    host: str = "127.0.0.1",
    guards: Guards | None = None,
    open_tenants: int = OPEN_TENANTS,
    per_tenant: int = PER_TENANT,
    **uvicorn_kw: Any,
) -> None:
    from memdir.mcp.http_limits import serve

    serve(
        tenants_app(tenants, host, guards=guards, open_tenants=open_tenants, per_tenant=per_tenant),
        host,
        port,
        **uvicorn_kw,
    )
