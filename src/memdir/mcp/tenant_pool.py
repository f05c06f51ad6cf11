"""The open tenants of a multi-tenant server: a least-recently-used set of stores, each with its
harnesses, MCP servers and session managers, so 10,000 tenants cost what OPEN_TENANTS cost.

A tenant is opened on its first request and closed when it is the least recently used of more
than `capacity` idle open tenants. Idle means nothing of it in flight: no HTTP request and no
tool call (a call whose client hung up still runs in its worker thread, and still pins the
tenant). So an
eviction never interrupts a call, and every write it acknowledged has already passed through
the store's step (files, index, journal) before the reply left. Closing a tenant ends its MCP
sessions (a client that comes back with an old session id gets 404 and, as the MCP transport
requires, starts a new session), then releases what holds descriptors or threads: the search
index (SQLite manifest, tantivy, the inotify watch), the description cache, and the journal
(its background check waited for). The next request opens the tenant afresh.

Busy tenants come on top of `capacity`, and are bounded by the server's connection limit
(`http_limits.MAX_CONNECTIONS`: one tenant per request at most). A tenant's own requests in
flight are bounded too (`per_tenant`): past it a request gets 429, so one tenant's burst
cannot take every connection slot from the others. Event streams (`GET /mcp`, held open for a
session's life) are bounded per tenant and in all, the last few kept for tenants that hold
none (tenants.STREAMS_PER_TENANT, MAX_STREAMS, STREAMS_RESERVED), so streams never fill the
connections one address may open: on loopback that address is every client's.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from memdir.jsontypes import JsonObject
from memdir.mcp.resume import ResumableSessions
from memdir.mcp.server import MAX_SESSIONS, SESSION_IDLE_S, build_server
from memdir.mcp.tenants import (
    MAX_STREAMS,
    OPEN_TENANTS,
    PER_TENANT,
    STREAMS_PER_TENANT,
    STREAMS_RESERVED,
    TenantToken,
)
from memdir.store.store import Store
from memdir.tools.base import Meter
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store, release_store


class TenantBusy(Exception):
    """The request is past a bound (the tenant's requests in flight, or event streams); the
    message says which and what to do."""


@dataclass
class _Served:
    """One token's MCP server and session manager, running in the pool's task group."""

    manager: StreamableHTTPSessionManager
    ready: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class OpenTenant:
    root: str
    store: Store
    served: dict[str, _Served] = field(default_factory=dict)  # by token hash
    requests: int = 0  # HTTP requests in flight (its event streams included)
    streams: int = 0  # event streams (GET /mcp) held open
    calls: int = 0  # tool calls in flight (may outlive their request)

    @property
    def idle(self) -> bool:
        return self.requests == 0 and self.calls == 0


class TenantPool:
    """Opens tenants on demand and keeps at most `capacity` idle ones open. Used on the event
    loop's thread only (the ASGI app's), so its bookkeeping needs no lock."""

    def __init__(
        self,
        guards: Guards | None = None,
        capacity: int = OPEN_TENANTS,
        per_tenant: int = PER_TENANT,
        streams_per_tenant: int = STREAMS_PER_TENANT,
        max_streams: int = MAX_STREAMS,
        streams_reserved: int = STREAMS_RESERVED,
    ) -> None:
        if capacity < 1 or per_tenant < 1:
            raise ValueError("the pool needs room for at least one tenant and one request")
        if not 0 <= streams_reserved < max_streams:
            raise ValueError("the reserved streams must leave some of max_streams for any tenant")
        self.guards = guards or Guards()
        self.capacity = capacity
        self.per_tenant = per_tenant
        self.streams_per_tenant = streams_per_tenant
        self.max_streams = max_streams
        self.streams_reserved = streams_reserved
        self.streams = 0  # event streams held open, all tenants
        self.open: OrderedDict[str, OpenTenant] = OrderedDict()  # by real root, oldest first
        self.meters: dict[str, Meter] = {}  # by token hash: totals survive an eviction
        self.opened = 0  # tenants opened, re-openings included
        self.evicted = 0
        self._closing: dict[str, anyio.Event] = {}
        self._tg: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """The pool's lifetime: session managers run inside it; on exit every tenant is closed
        (sessions ended, journals flushed, search indexes closed) before the server process ends."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    for root in list(self.open):
                        await self._close(self.open.pop(root))
                self._tg = None
                tg.cancel_scope.cancel()

    @contextlib.asynccontextmanager
    async def use(
        self, entry: TenantToken, stream: bool = False
    ) -> AsyncIterator[StreamableHTTPSessionManager]:
        """The session manager of `entry`'s token, its tenant open and pinned while the request
        runs. Raises TenantBusy past `per_tenant` requests, or, for an event stream (`stream`),
        past the stream bounds."""
        root = entry.real_root
        while root in self._closing:  # an eviction of this tenant is still flushing
            await self._closing[root].wait()
        tenant = self.open.get(root)
        if tenant is None:
            tenant = self.open[root] = OpenTenant(root, open_store(root, guards=self.guards))
            self.opened += 1
        else:
            self.open.move_to_end(root)
        if tenant.requests >= self.per_tenant:
            raise TenantBusy(
                f"this tenant already has {self.per_tenant} requests in flight; retry after one ends"
            )
        if stream:
            refusal = self._stream_refusal(tenant)
            if refusal is not None:
                raise TenantBusy(refusal)
            tenant.streams += 1
            self.streams += 1
        tenant.requests += 1
        try:
            served = tenant.served.get(entry.token_sha256)
            if served is None:
                served = tenant.served[entry.token_sha256] = self._serve(tenant, entry)
                assert self._tg is not None, "TenantPool.use outside TenantPool.run"
                self._tg.start_soon(self._run_manager, served)
            await served.ready.wait()
            yield served.manager
        finally:
            tenant.requests -= 1
            if stream:
                tenant.streams -= 1
                self.streams -= 1
            self._evict_excess()

    def revoke(self, token_hashes: set[str]) -> int:
        """End the MCP sessions of these tokens (revoked from the tenants file, tenants_live.py):
        their session managers stop, which ends their sessions and event streams and cuts their
        requests in flight. Every other token's manager, the tenant's store and its other
        sessions go on untouched. Returns how many managers were stopped."""
        stopped = 0
        for tenant in self.open.values():
            for digest in token_hashes & tenant.served.keys():
                tenant.served.pop(digest).stop.set()
                stopped += 1
        return stopped

    def _stream_refusal(self, tenant: OpenTenant) -> str | None:
        """Why `tenant` may not open another event stream now, or None. A tenant that holds none
        may take a reserved one, so streams held by others never lock it out."""
        if tenant.streams >= self.streams_per_tenant:
            return (
                f"this tenant already holds {self.streams_per_tenant} event streams (GET /mcp); "
                "close one (end a session you no longer use), or retry later"
            )
        room = self.max_streams - (0 if tenant.streams == 0 else self.streams_reserved)
        if self.streams >= room:
            return "the server holds as many event streams as it serves; retry later (requests are served)"
        return None

    def _serve(self, tenant: OpenTenant, entry: TenantToken) -> _Served:
        harness = Harness(
            tenant.store,
            entry.profile,
            keep_indexes=True,
            role="mcp",
            tenant=entry.tenant,
            reorganize=True if entry.reorganize else None,
        )
        harness.meter = self.meters.setdefault(entry.token_sha256, Meter())

        @contextlib.contextmanager
        def pinned() -> Iterator[None]:
            tenant.calls += 1
            try:
                yield
            finally:
                tenant.calls -= 1
                self._evict_excess()

        server = build_server(harness, name=f"memdir:{entry.tenant}", in_flight=pinned)
        manager = ResumableSessions(server, max_sessions=MAX_SESSIONS, session_idle_timeout=SESSION_IDLE_S)
        return _Served(manager)

    async def _run_manager(self, served: _Served) -> None:
        try:
            async with served.manager.run():
                served.ready.set()
                await served.stop.wait()
        finally:
            served.ready.set()  # a request waiting on a manager that failed to start fails, not hangs
            served.done.set()

    def _evict_excess(self) -> None:
        """Close idle tenants, least recently used first, until at most `capacity` idle ones
        are open. Busy tenants do not count against it: with every slot taken by a long call,
        the tenant a request just used would otherwise be closed at once, and its session with
        it, on every request."""
        if self._tg is None:
            return
        idle = [r for r, t in self.open.items() if t.idle]
        excess = len(idle) - self.capacity
        if excess <= 0:  # (a negative slice bound below would close nearly all of them)
            return
        for root in idle[:excess]:
            tenant = self.open.pop(root)
            self._closing[root] = anyio.Event()
            self.evicted += 1
            self._tg.start_soon(self._close, tenant)

    async def _close(self, tenant: OpenTenant) -> None:
        try:
            for served in tenant.served.values():
                served.stop.set()
            for served in tenant.served.values():
                await served.done.wait()
            await anyio.to_thread.run_sync(release_store, tenant.store)
        finally:
            closing = self._closing.pop(tenant.root, None)
            if closing is not None:
                closing.set()

    def stats(self) -> JsonObject:
        return {
            "open": len(self.open),
            "opened": self.opened,
            "evicted": self.evicted,
            "streams": self.streams,
        }
