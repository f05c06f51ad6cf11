"""Event streams (`GET /mcp`) under `memdir serve --tenants`, a real process on 127.0.0.1: two
tenants holding 32 streams each used to take every connection one address may open, and on
loopback every client shares that address, so a third tenant's `initialize` got 503 for as long
as they held them. Streams are now bounded per tenant and in all, with room kept for tenants
that hold none."""

from __future__ import annotations

import socket
from contextlib import suppress
from pathlib import Path

import httpx2
from test_tenants_serving import _status, make_tenants, port_of
from tests.waits import HANG_GUARD_S

from memdir.mcp.http_limits import MAX_CONNECTIONS_PER_CLIENT
from memdir.mcp.tenants import MAX_STREAMS, STREAMS_PER_TENANT, STREAMS_RESERVED
from serve_helpers import ACCEPT, INITIALIZE, serve_process

HELD = 32  # streams each of two tenants tries to hold, as in the report


def new_session(url: str, token: str) -> str:
    r = httpx2.post(url, json=INITIALIZE, headers={"Accept": ACCEPT, "Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    return r.headers["mcp-session-id"]


def open_stream(port: int, token: str, session: str) -> tuple[socket.socket, int]:
    """A `GET /mcp` event stream for `session`, held open; its socket and the status line's code."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(
        (
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            f"Accept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
        ).encode()
    )
    s.settimeout(HANG_GUARD_S)
    got = b""
    while b"\r\n" not in got:
        chunk = s.recv(1024)
        if not chunk:
            break
        got += chunk
    assert got.startswith(b"HTTP/1.1 "), got[:200]
    return s, int(got[9:12])


def test_streams_of_two_tenants_do_not_lock_out_a_third(tmp_path: Path) -> None:
    tf, _, tokens = make_tenants(tmp_path, 4)
    held: list[socket.socket] = []
    with serve_process(["--tenants", str(tf)]) as (_, url):
        port = port_of(url)
        try:
            codes: dict[int, list[int]] = {}
            for t in (0, 1):
                sessions = [new_session(url, tokens[t]) for _ in range(HELD)]
                codes[t] = []
                for sid in sessions:
                    s, code = open_stream(port, tokens[t], sid)
                    codes[t].append(code)
                    if code == 200:
                        held.append(s)
                    else:
                        s.close()
            for t in (0, 1):  # each tenant holds its share, the rest are told to retry
                assert codes[t].count(200) == STREAMS_PER_TENANT, codes[t]
                assert set(codes[t][STREAMS_PER_TENANT:]) == {429}, codes[t]
            # A third tenant is served at once (before the fix: 503, the address's cap reached) ...
            assert _status(port, tokens[2]) == 200
            # ... and may hold a stream of its own, and so may a fourth.
            for t in (2, 3):
                s, code = open_stream(port, tokens[t], new_session(url, tokens[t]))
                held.append(s)
                assert code == 200
        finally:
            for s in held:
                with suppress(OSError):
                    s.close()


def test_stream_bounds_leave_room_on_one_address() -> None:
    """All streams together take at most half of what one address may hold open, so requests
    always find a connection; part of them is kept for tenants that hold none."""
    assert STREAMS_PER_TENANT < MAX_STREAMS - STREAMS_RESERVED
    assert MAX_STREAMS <= MAX_CONNECTIONS_PER_CLIENT // 2
