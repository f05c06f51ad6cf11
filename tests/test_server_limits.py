"""`memdir serve --http` as a real process against hostile or careless clients: idle sockets,
non-reading clients, a slow call beside a quick one, SIGTERM during a call."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from tests.conftest import fm

from memdir.mcp import tenants
from memdir.mcp.http_limits import EXIT_AFTER_S, HEAD_TIMEOUT_S, MAX_WAITING_PER_CLIENT
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from serve_helpers import serve_process

ACCEPT = "application/json, text/event-stream"
# A pattern the Python engine backtracks on for about 0.3 s per line of SLOW_LINE.
SLOW_PATTERN = "(a|aa)+$"
SLOW_LINE = "a" * 26 + "b\n"
SLOW_ENV = {"MEMDIR_GREP": "python", "MEMDIR_GREP_TIMEOUT": "4"}


@asynccontextmanager
async def client(url: str, token: str | None = None) -> AsyncIterator[mcp.Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"} if token else None)
    async with mcp.Client(streamable_http_client(url, http_client=http)) as c:
        yield c


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def closed_by_server(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def session(url: str, auth: dict[str, str] | None = None) -> dict[str, str]:
    """Initialize a session over plain HTTP; the headers that address it."""
    auth = auth or {}
    r = httpx2.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        headers={"Accept": ACCEPT, **auth},
    )
    assert r.status_code == 200, r.text
    headers = {"Accept": ACCEPT, "Mcp-Session-Id": r.headers["mcp-session-id"], **auth}
    httpx2.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def tool_call(name: str, args: dict[str, Any], rid: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": args}}


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().split("\n"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def wait_until_idle(pid: int, limit_s: float = 60.0) -> None:
    """Until the process has used no CPU for half a second: its calls are done."""

    def cpu() -> int:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    end = time.monotonic() + limit_s
    last, still = cpu(), 0
    while still < 2 and time.monotonic() < end:
        time.sleep(0.25)
        now = cpu()
        still, last = (still + 1 if now == last else 0), now


def test_idle_connections_are_closed_and_clients_still_served(root: Path, tmp_path: Path) -> None:
    """300 sockets that send nothing (and one dribbling its headers) used to hold every slot of
    both servers: each `initialize` got 503. Now a real client is served at once and every idle
    socket is closed within HEAD_TIMEOUT_S."""
    other = tmp_path / "other"
    spec.init(Store(other, create=True))
    token = tenants.add_token(tmp_path / "tenants.json", str(other), "manage")
    with (
        serve_process(["--root", str(root)]) as (_, single),
        serve_process(["--tenants", str(tmp_path / "tenants.json")]) as (_, multi),
    ):
        opened = time.monotonic()
        idle = {
            url: [socket.create_connection(("127.0.0.1", int(url.split(":")[2][:-4]))) for _ in range(300)]
            for url in (single, multi)
        }
        dribblers = [
            socket.create_connection(("127.0.0.1", int(url.split(":")[2][:-4]))) for url in (single, multi)
        ]
        stop = threading.Event()

        def dribble() -> None:
            for i in range(100):
                for d in dribblers:
                    with suppress(OSError):
                        d.send(b"POST /mcp HTTP/1.1\r\n" if i == 0 else b"X")
                if stop.wait(0.2):
                    return

        threading.Thread(target=dribble, daemon=True).start()
        time.sleep(0.5)

        async def served(url: str, tok: str | None) -> float:
            start = time.monotonic()
            async with client(url, tok) as c:
                r = await c.call_tool("view", {"path": "/memories"})
                assert not r.is_error and "MEMORY.md" in text(r)
            return time.monotonic() - start

        assert anyio.run(served, single, None) < 3.0
        assert anyio.run(served, multi, token) < 3.0
        # Past MAX_WAITING_PER_CLIENT, the oldest idle sockets are closed right away ...
        for socks in idle.values():
            assert sum(closed_by_server(s) for s in socks) >= 300 - MAX_WAITING_PER_CLIENT
        # ... and the rest, dribblers included, by the head deadline.
        time.sleep(max(0.0, opened + HEAD_TIMEOUT_S + 1.5 - time.monotonic()))
        stop.set()
        for socks in idle.values():
            assert all(closed_by_server(s) for s in socks)
        assert all(closed_by_server(d) for d in dribblers)
        for s in [*idle[single], *idle[multi], *dribblers]:
            s.close()


def test_non_reading_clients_do_not_grow_the_server(root: Path) -> None:
    """8 clients asking grep for 1e12 lines of a 2.6 MB file and never reading took the server
    from 146 MB to 1.2 GB; the reply is now bounded, so its memory barely moves."""
    (root / "big.md").write_text(fm("big") + "x\n" * 1_300_000)
    with serve_process(["--root", str(root), "--profile", "search"]) as (proc, url):
        headers = session(url)
        port = int(url.split(":")[2][:-4])
        before = status_kb(proc.pid, "VmRSS")
        head = "".join(f"{k}: {v}\r\n" for k, v in {**headers, "Content-Type": "application/json"}.items())
        clients = []
        for rid in range(10, 18):  # each its own request id: the session routes replies by id
            body = json.dumps(tool_call("grep", {"pattern": "x", "max_results": 1e12}, rid)).encode()
            request = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
            )
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(request.encode() + body)
            clients.append(s)
        wait_until_idle(proc.pid)
        peak = status_kb(proc.pid, "VmHWM")
        assert peak - before < 100_000, (before, peak)
        for s in clients:  # every request was answered (not merely never run)
            s.settimeout(5)
            got = b""
            while b"matching line(s)" not in got and len(got) < 1_000_000:
                got += s.recv(65536)
            assert got.startswith(b"HTTP/1.1 200") and b"stopped at 1000 lines" in got
            s.close()


async def test_a_slow_read_does_not_hold_up_another_session(root: Path) -> None:
    """A view from a second session used to wait 28.6 s behind a 30 s grep."""
    (root / "slow.md").write_text(fm("slow") + SLOW_LINE * 60)
    with serve_process(["--root", str(root)], SLOW_ENV) as (_, url):
        async with client(url) as a, client(url) as b:
            done: dict[str, Any] = {}

            async def slow() -> None:
                r = await a.call_tool("grep", {"pattern": SLOW_PATTERN})
                done["grep"] = (r, time.monotonic())

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await anyio.sleep(0.5)
                start = time.monotonic()
                r = await b.call_tool("view", {"path": "/memories"})
                answered = time.monotonic()
                assert not r.is_error and "slow.md" in text(r)
                assert "grep" not in done, "the slow grep finished first: the test proves nothing"
            grep_result, grep_end = done["grep"]
            assert answered - start < 2.0
            assert grep_end > answered + 1.0
            assert grep_result.is_error and "grep took over 4 s" in text(grep_result)


def test_sigterm_during_a_call_ends_the_server(root: Path) -> None:
    """A call running in a worker thread used to keep the process alive after SIGTERM."""
    (root / "slow.md").write_text(fm("slow") + SLOW_LINE * 200)
    with serve_process(["--root", str(root)], {**SLOW_ENV, "MEMDIR_GREP_TIMEOUT": "60"}) as (proc, url):
        headers = session(url)
        outcome: list[str] = []

        def call() -> None:
            try:
                httpx2.post(
                    url, json=tool_call("grep", {"pattern": SLOW_PATTERN}), headers=headers, timeout=60
                )
                outcome.append("answered")
            except httpx2.HTTPError as exc:
                outcome.append(type(exc).__name__)

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        time.sleep(1.0)
        assert caller.is_alive() and not outcome, "the call ended before the signal"
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(EXIT_AFTER_S + 5)
        assert time.monotonic() - start < EXIT_AFTER_S + 3
        caller.join(10)
        assert outcome and outcome != ["answered"]


def test_parallel_calls_meter_every_call(store: Store) -> None:
    """The MCP server runs calls in parallel threads; the harness totals stay exact."""
    h = Harness(store, "search")
    threads = [
        threading.Thread(target=lambda: [h.call("view", {"path": "/memories"}) for _ in range(50)])
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert h.meter.calls == 400
    one = h.call("view", {"path": "/memories"}).meter.bytes_returned
    assert h.meter.bytes_returned == 401 * one
