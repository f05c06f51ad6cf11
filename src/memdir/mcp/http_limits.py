"""The HTTP transport's limits: uvicorn's settings, plus the two guards its settings lack.

uvicorn answers 503 past `limit_concurrency` open connections and closes a keep-alive
connection left idle after a response, but a connection that never sends a complete request
head has no timer at all: 300 sockets that sent nothing held every slot, and every client's
`initialize` got 503 for as long as they stayed open. `GuardedH11Protocol` is uvicorn's h11
protocol plus

- a deadline for each request head: HEAD_TIMEOUT_S from the moment the connection opens or
  its previous response ends; dribbling bytes does not extend it (a slow-headers client is
  closed at the same deadline as a silent one);
- a bound on the connections waiting for a head, per client address (MAX_WAITING_PER_CLIENT)
  and in all (MAX_WAITING): a newcomer past the bound closes the oldest waiting connection, so
  it is always let in and idle sockets can never fill MAX_CONNECTIONS. A client sends its
  request head as soon as it connects, so only connections that send nothing are closed;
- a deadline for each request body: BODY_TIMEOUT_S from the end of its head to the end of its
  body, however it trickles in (a slow-body client is answered 408 and closed);
- a bound on the connections one client address holds open (MAX_CONNECTIONS_PER_CLIENT): a
  newcomer past it closes that client's oldest connection still waiting for a head, or, when
  every one of them is busy, is answered 503 and closed, so one address cannot take every slot;
- a request that declares a body over MAX_BODY_BYTES is answered 413 and closed before the app
  sees it (the MCP SDK also counts a streamed body against the same 4 MiB); a head over
  MAX_HEAD_BYTES is answered 431 and closed (h11's own 16 KiB bound holds only for a head that
  arrives in pieces: one sent whole passed at any size).

`serve` runs an app with these limits and obeys SIGTERM within EXIT_AFTER_S even while a tool
call runs in a worker thread (which uvicorn's own shutdown would wait for): in-flight requests
get SHUTDOWN_GRACE_S to finish, and a call still running when EXIT_AFTER_S has passed is ended
with the process, as a crash would end it (the store is built to survive that:
docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import weakref
from types import FrameType
from typing import Any

import h11
import uvicorn
from uvicorn.config import STARTUP_FAILURE, Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

MAX_CONNECTIONS = 256  # open connections; uvicorn answers 503 beyond
KEEP_ALIVE_S = 5  # an idle keep-alive connection is closed after this
HEAD_TIMEOUT_S = 5.0  # a request head must be complete this long after connecting or the last response
MAX_WAITING_PER_CLIENT = 32  # connections of one address still waiting to send a request head
MAX_WAITING = 128  # connections waiting for a head, all addresses: well below MAX_CONNECTIONS
BODY_TIMEOUT_S = 10.0  # a request body must be complete this long after its head (4 MiB at 400 KB/s)
MAX_CONNECTIONS_PER_CLIENT = 64  # open connections of one address
MAX_BODY_BYTES = 4 * 1024 * 1024  # the MCP SDK's own cap on a request body
MAX_HEAD_BYTES = 16 * 1024  # request line and headers, as h11 bounds a head that arrives in pieces
SHUTDOWN_GRACE_S = 3  # after SIGTERM, in-flight requests may finish within this
EXIT_AFTER_S = 5.0  # after SIGTERM, the process ends by this time whatever still runs


class _Waiting:
    """The connections of one server that have not sent their request head yet, oldest first
    (dicts keep insertion order). Used on the event loop's thread only."""

    def __init__(self) -> None:
        self.all: dict[GuardedH11Protocol, None] = {}
        self.by_client: dict[str, dict[GuardedH11Protocol, None]] = {}
        self.open_by_client: dict[str, dict[GuardedH11Protocol, None]] = {}

    def connect(self, conn: GuardedH11Protocol) -> tuple[bool, GuardedH11Protocol | None]:
        """Register an open connection; (admitted, a waiting one of the same client to close)."""
        mine = self.open_by_client.setdefault(conn.client_key, {})
        victim: GuardedH11Protocol | None = None
        if len(mine) >= MAX_CONNECTIONS_PER_CLIENT:
            victim = next(iter(self.by_client.get(conn.client_key, {})), None)
            if victim is None:
                return False, None
        mine[conn] = None
        return True, victim

    def disconnect(self, conn: GuardedH11Protocol) -> None:
        mine = self.open_by_client.get(conn.client_key)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.open_by_client[conn.client_key]

    def add(self, conn: GuardedH11Protocol) -> list[GuardedH11Protocol]:
        """Register `conn`; return the waiting connections it pushes past a bound (to close)."""
        mine = self.by_client.setdefault(conn.client_key, {})
        excess: list[GuardedH11Protocol] = []
        if len(mine) >= MAX_WAITING_PER_CLIENT:
            excess.append(next(iter(mine)))
        if len(self.all) - len(excess) >= MAX_WAITING:
            excess.append(next(c for c in self.all if c not in excess))
        mine[conn] = None
        self.all[conn] = None
        return excess

    def discard(self, conn: GuardedH11Protocol) -> None:
        self.all.pop(conn, None)
        mine = self.by_client.get(conn.client_key)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.by_client[conn.client_key]


_registries: weakref.WeakKeyDictionary[ServerState, _Waiting] = weakref.WeakKeyDictionary()
_registries_lock = threading.Lock()  # tests run several servers, each on its own thread


def _waiting_of(state: ServerState) -> _Waiting:
    with _registries_lock:
        waiting = _registries.get(state)
        if waiting is None:
            waiting = _registries[state] = _Waiting()
        return waiting


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline and bounded waiting connections."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, object],  # uvicorn's, handed on unread
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._waiting = _waiting_of(server_state)
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._head_checked = False
        self.client_key = ""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.client_key = self.client[0] if self.client else ""
        admitted, victim = self._waiting.connect(self)
        if victim is not None:
            victim._drop()
        if not admitted:
            self._refuse(503, "this address has too many open connections; reuse one")
            return
        self._track()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self._stop_body_timer()
        self._waiting.disconnect(self)
        super().connection_lost(exc)

    def _track(self) -> None:
        """Start the head deadline when the connection waits for a request head (h11's client
        state IDLE: nothing of a request parsed yet), stop it once a head has arrived; then the
        body deadline while the body is coming in (SEND_BODY)."""
        state = self.conn.their_state
        closing = self.transport.is_closing()
        if state is h11.IDLE:
            self._head_checked = False
        elif not self._head_checked and not closing:
            self._head_checked = True
            if self._head_size() > MAX_HEAD_BYTES:
                self._refuse(431, f"a request head may hold at most {MAX_HEAD_BYTES} bytes")
                return
        if state is not h11.IDLE or closing:
            self._stop_waiting()
        elif self._head_timer is None:
            self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._drop)
            for old in self._waiting.add(self):
                old._drop()
        if state is not h11.SEND_BODY or closing:
            self._stop_body_timer()
        elif self._body_timer is None:
            if self._declared_length() > MAX_BODY_BYTES:
                self._refuse(413, f"a request body may hold at most {MAX_BODY_BYTES} bytes")
                return
            self._body_timer = self.loop.call_later(BODY_TIMEOUT_S, self._body_expired)

    def _head_size(self) -> int:
        if self.scope is None or self.headers is None:  # no request parsed (h11 refused it)
            return 0
        target = self.scope.get("raw_path", b"") + self.scope.get("query_string", b"")
        return len(target) + sum(len(k) + len(v) + 4 for k, v in self.headers)

    def _declared_length(self) -> int:
        for key, value in self.headers or ():
            if key == b"content-length":
                try:
                    return int(value)
                except ValueError:
                    return 0  # h11 has refused the request already
        return 0

    def _stop_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_expired(self) -> None:
        self._body_timer = None
        self._refuse(408, f"the request body was not complete {BODY_TIMEOUT_S:g} s after its head")

    def _refuse(self, status: int, reason: str) -> None:
        """Answer `status` (unless a response has begun) and close; the app, if it already has
        the request, sees the client gone and anything it sends is dropped."""
        self._stop_waiting()
        self._stop_body_timer()
        cycle = getattr(self, "cycle", None)
        if cycle is not None:
            cycle.disconnected = True
            cycle.message_event.set()
        if self.transport.is_closing():
            return
        if cycle is None or not cycle.response_started:
            body = reason.encode() + b"\n"
            phrase = {
                408: "Request Timeout",
                413: "Content Too Large",
                431: "Request Header Fields Too Large",
                503: "Service Unavailable",
            }[status]
            self.transport.write(
                f"HTTP/1.1 {status} {phrase}\r\ncontent-type: text/plain; charset=utf-8\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                + body
            )
        self.transport.close()

    def _stop_waiting(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self._waiting.discard(self)

    def _drop(self) -> None:
        """Close a connection that is still waiting for its request head (nothing to answer)."""
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()


class _Server(uvicorn.Server):
    """uvicorn's server, with a deadline on the whole shutdown once a signal has arrived."""

    _deadline: threading.Timer | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self._deadline is None:
            self._deadline = threading.Timer(EXIT_AFTER_S, _exit_now)
            self._deadline.daemon = True
            self._deadline.start()


def _exit_now() -> None:
    """The shutdown outlived EXIT_AFTER_S: a call is still running in a worker thread (uvicorn
    waits for it, and Python would wait for the thread). End the process without it."""
    print(f"memdir: a call was still running {EXIT_AFTER_S:g} s after the signal; exiting", file=sys.stderr)
    sys.stderr.flush()
    os._exit(0)


def config(app: Any, host: str, port: int, **overrides: Any) -> Config:
    """The uvicorn configuration every memdir HTTP server runs with."""
    settings: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": "warning",
        "http": GuardedH11Protocol,
        "limit_concurrency": MAX_CONNECTIONS,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_S,
    }
    return Config(app, **{**settings, **overrides})


def serve(app: Any, host: str, port: int, **overrides: Any) -> None:
    """Serve `app` until SIGINT or SIGTERM; exit status 3 if it could not start (as uvicorn.run)."""
    server = _Server(config(app, host, port, **overrides))
    server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
