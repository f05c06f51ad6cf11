"""The front of the Ray Serve deployment: the token picks the tenant, the tenant picks the
replica.

Everything a single-node server checks before any MCP handling is checked here, with the same
code: the DNS-rebinding guard on a loopback host (mcp/loopback.py), the bearer token against
the tenants file as it is now (mcp/tenants_live.py: a revoked token is refused within a
second), the request body's size and one tenant's requests in flight (429 past the bound).
Then the request goes to the tenant's replica (`forward`, Ray Serve's multiplexing by the
tenant's name in ray_app.py). A request whose replica was lost on the way gets 503 with
`Retry-After`: it was not acknowledged, and the retry is served from the tenant's remote.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memdir.errors import MemdirError
from memdir.mcp.http_limits import MAX_BODY_BYTES
from memdir.mcp.loopback import RebindingGuard, is_loopback
from memdir.mcp.tenant_app import bearer, refuse, unauthorized
from memdir.mcp.tenants import PER_TENANT, TenantToken
from memdir.mcp.tenants_live import LiveTenants
from memdir.serving.wire import Forwarded, Grant, Reply


class ReplicaLost(MemdirError):
    """The replica serving the request ended before it answered (killed, its node gone)."""


Forward = Callable[[Forwarded], Awaitable[Reply]]
RemoteOf = Callable[[TenantToken], str | None]


class TooLarge(Exception):
    pass


class Front:
    """ASGI endpoint at /mcp: authenticate, bound, forward."""

    def __init__(
        self, tenants: LiveTenants, remote_of: RemoteOf, forward: Forward, per_tenant: int = PER_TENANT
    ) -> None:
        self.tenants = tenants
        self.remote_of = remote_of
        self.forward = forward
        self.per_tenant = per_tenant
        self.in_flight: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = bearer(scope)
        if token is None:
            await unauthorized(send, "send 'Authorization: Bearer <token>'; memdir token add makes one")
            return
        entry = self.tenants.lookup(token)  # one stat at most every CHECK_EVERY_S
        if entry is None:
            await unauthorized(send, "unknown token")
            return
        if scope.get("method") != "POST":
            reason = (
                "served on Ray, each request stands alone: there is no event stream to GET and no "
                "session to DELETE; send POST"
            )
            await refuse(send, 405, "method_not_allowed", reason, [(b"allow", b"POST")])
            return
        try:
            body = await _body(receive)
        except TooLarge:
            await refuse(
                send, 413, "too_large", f"a request body may hold at most {MAX_BODY_BYTES} bytes", []
            )
            return
        remote = self.remote_of(entry)
        if remote is None:
            reason = (
                f"tenant {entry.tenant!r} has no remote to serve it from; run "
                f"'memdir sync {entry.root} REMOTE' once, then restart the server"
            )
            await refuse(send, 503, "tenant_unavailable", reason, [])
            return
        busy = self.in_flight.get(entry.tenant, 0)
        if busy >= self.per_tenant:
            reason = f"this tenant already has {self.per_tenant} requests in flight; retry after one ends"
            await refuse(send, 429, "too_many_requests", reason, [(b"retry-after", b"1")])
            return
        grant = Grant(entry.tenant, remote, entry.profile, entry.token_sha256, entry.reorganize)
        headers = [(k, v) for k, v in scope.get("headers", []) if k not in (b"authorization", b"host")]
        self.in_flight[entry.tenant] = busy + 1
        try:
            answer = await self.forward(Forwarded(grant, headers, body))
        except ReplicaLost as lost:
            await refuse(send, 503, "replica_lost", str(lost), [(b"retry-after", b"1")])
            return
        finally:
            left = self.in_flight[entry.tenant] - 1
            if left:
                self.in_flight[entry.tenant] = left
            else:
                del self.in_flight[entry.tenant]
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
        await send({"type": "http.response.body", "body": answer.body})


async def _body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def front_app(front: Front, host: str, path: str = "/mcp") -> Any:
    """The ingress's ASGI app: `front` at `path`, behind the rebinding guard on a loopback host."""
    guard = [Middleware(RebindingGuard)] if is_loopback(host) else []
    return Starlette(
        routes=[Route(path, endpoint=front, methods=["GET", "POST", "DELETE"])], middleware=guard
    )
