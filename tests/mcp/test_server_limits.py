"""`memdir serve --http` as a real process against hostile or careless clients: idle sockets,
non-reading clients, a slow call beside a quick one, SIGTERM during a call."""

from __future__ import annotations

import json
import signal
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from tests.conftest import fm
from tests.waits import HANG_GUARD_S, wait_until, wait_until_busy

from memdir.mcp import tenants
from memdir.mcp.http_limits import MAX_WAITING_PER_CLIENT
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store
from serve_helpers import serve_process, session, tool_call

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


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().split("\n"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


@pytest.mark.slow
def test_idle_connections_are_closed_and_clients_still_served(root: Path, tmp_path: Path) -> None:
    """300 sockets that send nothing (and one dribbling its headers) used to hold every slot of
    both servers: each `initialize` got 503. Now a real client is served, not refused, and every
    idle socket is closed by the head deadline (HEAD_TIMEOUT_S), however it dribbles."""
    other = tmp_path / "other"
    spec.init(open_store(other, create=True))
    token = tenants.add_token(tmp_path / "tenants.json", str(other), "manage")
    with (
        serve_process(["--root", str(root)]) as (_, single),
        serve_process(["--tenants", str(tmp_path / "tenants.json")]) as (_, multi),
    ):
        idle = {
            url: [socket.create_connection(("127.0.0.1", int(url.split(":")[2][:-4]))) for _ in range(300)]
            for url in (single, multi)
        }
        dribblers = [
            socket.create_connection(("127.0.0.1", int(url.split(":")[2][:-4]))) for url in (single, multi)
        ]
        stop = threading.Event()

        def dribble() -> None:  # a byte every 0.2 s until the test ends: a pace, not a wait
            first = True
            while not stop.is_set():
                for d in dribblers:
                    with suppress(OSError):
                        d.send(b"POST /mcp HTTP/1.1\r\n" if first else b"X")
                first = False
                stop.wait(0.2)

        threading.Thread(target=dribble, daemon=True).start()
        try:
            # Past MAX_WAITING_PER_CLIENT, the oldest idle sockets are closed as soon as the server
            # has taken them all in (before the real client below comes) ...
            excess = 300 - MAX_WAITING_PER_CLIENT
            wait_until(
                lambda: all(sum(map(closed_by_server, socks)) >= excess for socks in idle.values()),
                "the sockets past MAX_WAITING_PER_CLIENT to be closed",
            )

            async def served(url: str, tok: str | None) -> None:  # before the fix: 503 at once
                async with client(url, tok) as c:
                    r = await c.call_tool("view", {"path": "/memories"})
                    assert not r.is_error and "MEMORY.md" in text(r)

            anyio.run(served, single, None)
            anyio.run(served, multi, token)
            # ... and the rest by the head deadline, dribblers included: they are still sending, so
            # only the deadline (which dribbling does not extend) can have closed them.
            wait_until(
                lambda: all(closed_by_server(s) for socks in idle.values() for s in socks),
                "the head deadline to close the idle sockets",
            )
            wait_until(lambda: all(map(closed_by_server, dribblers)), "the deadline to close the dribblers")
        finally:
            stop.set()
            for s in [*idle[single], *idle[multi], *dribblers]:
                s.close()


@pytest.mark.slow
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
        for s in clients:  # every request was answered (not merely never run) ...
            s.settimeout(HANG_GUARD_S)  # a hang guard
            got = b""
            while b"matching line(s)" not in got and len(got) < 1_000_000:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            assert got.startswith(b"HTTP/1.1 200") and b"stopped at 1000 lines" in got
            s.close()
        # ... so every reply has been built, and the high-water mark holds the largest footprint
        peak = status_kb(proc.pid, "VmHWM")
        assert peak - before < 100_000, (before, peak)


@pytest.mark.slow
async def test_a_slow_read_does_not_hold_up_another_session(root: Path) -> None:
    """A view from a second session used to wait 28.6 s behind a 30 s grep. The view is sent
    once the grep is seen running in the server (it has spent CPU on it), and must be
    answered while the grep still runs (the server spends CPU on it after): seconds of CPU
    work, so a loaded machine stretches the grep and the view alike."""
    (root / "slow.md").write_text(fm("slow") + SLOW_LINE * 12)
    with serve_process(["--root", str(root)], {**SLOW_ENV, "MEMDIR_GREP_TIMEOUT": "600"}) as (proc, url):
        async with client(url) as a, client(url) as b:
            done: dict[str, Any] = {}

            async def slow() -> None:
                done["grep"] = await a.call_tool("grep", {"pattern": SLOW_PATTERN})

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await anyio.to_thread.run_sync(wait_until_busy, proc.pid, 0.3, "the grep to run")
                r = await b.call_tool("view", {"path": "/memories"})
                assert not r.is_error and "slow.md" in text(r)
                assert "grep" not in done, "the slow grep finished first: the view waited behind it"
                await anyio.to_thread.run_sync(wait_until_busy, proc.pid, 0.1, "the grep to run on")
                assert "grep" not in done
            assert not done["grep"].is_error and "No lines match" in text(done["grep"])


@pytest.mark.slow
def test_sigterm_during_a_call_ends_the_server(root: Path) -> None:
    """A call running in a worker thread used to keep the process alive after SIGTERM."""
    (root / "slow.md").write_text(fm("slow") + SLOW_LINE * 1000)  # minutes of matching
    with serve_process(["--root", str(root)], {**SLOW_ENV, "MEMDIR_GREP_TIMEOUT": "600"}) as (proc, url):
        headers = session(url)
        outcome: list[str] = []

        def call() -> None:
            try:
                r = httpx2.post(
                    url, json=tool_call("grep", {"pattern": SLOW_PATTERN}), headers=headers, timeout=600
                )
                outcome.append(f"answered {r.status_code}: {r.text[:300]!r}")
            except httpx2.HTTPError as exc:
                outcome.append(type(exc).__name__)

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        wait_until_busy(proc.pid, 0.3, "the grep to run")
        assert caller.is_alive() and not outcome, "the call ended before the signal"
        proc.send_signal(signal.SIGTERM)
        # A hang guard, far above EXIT_AFTER_S and far below the minutes the grep would take:
        # without the exit deadline the process lives until the call ends.
        proc.wait(HANG_GUARD_S)
        caller.join(HANG_GUARD_S)
        # The call is cut (a dropped connection), or answered with an error when uvicorn's
        # shutdown cancels the request before the deadline ends the process (a loaded machine
        # reaches that step): either way it must not carry the grep's result.
        assert outcome and "No lines match" not in outcome[0], outcome


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
