"""Server robustness: 10,000 malformed or hostile requests against `memdir serve --http` (one
store) and `memdir serve --tenants` (bearer tokens): bad JSON, wrong JSON-RPC shapes, wrong
types, unknown tools and methods, bad headers, forged sessions, bad or missing tokens, another
tenant's token on a session, huge payloads, a session flood, while slow clients hold
connections open by dribbling headers. The server must stay up, answer every request with an
error (HTTP 4xx/5xx, or a JSON-RPC / tool error) within the per-request deadline (a request
still unanswered then counts as a hang), keep its memory bounded, and still serve a
well-formed client at the end.

    .venv/bin/python benchmarks/reliability/server_robustness.py --requests 10000
    .venv/bin/python benchmarks/reliability/server_robustness.py --sections limits

The `limits` section measures the cases of the issue "Hostile input, second round", each on a
fresh server so each peak RSS (VmHWM) is its own: 300 idle connections (nothing sent) against
`initialize` (single store and tenants), a grep for 1e12 lines of a 2.6 MB file, 8 clients
sending that grep and never reading, a `view` from a second session during a slow grep, and
SIGTERM during a slow call.

Why an earlier version of this script hung: it sent a GET with a valid session id, which opens
the MCP standalone event stream. That stream is meant to stay open (the server pushes
notifications on it) and the SDK pings it every 15 s, so a client read timeout never fired.
The GETs below are hostile ones (no session, forged session, wrong Accept); the one valid GET
is read up to its headers only, and every request has a total deadline.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from memdir.mcp import tenants
from memdir.mcp.http_limits import HEAD_TIMEOUT_S
from memdir.mcp.server import MAX_SESSIONS
from memdir.store import spec
from memdir.tools.wiring import open_store

ACCEPT = "application/json, text/event-stream"
Request = tuple[str, str, dict[str, str], bytes]  # category, method[:path], headers, body


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().split("\n"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def initialize(client: httpx.Client, url: str, auth: dict[str, str]) -> tuple[int, str]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    }
    r = client.post(url, json=body, headers={"Accept": ACCEPT, **auth})
    sid = r.headers.get("mcp-session-id", "")
    if sid:
        client.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={"Accept": ACCEPT, "Mcp-Session-Id": sid, **auth},
        )
    return r.status_code, sid


def hostile_requests(rng: random.Random, sid: str, auth: dict[str, str], other: str | None) -> list[Request]:
    """One batch of every kind; `auth` is the valid bearer header (empty for one store),
    `other` another tenant's valid token (None for one store)."""
    h = {"Accept": ACCEPT, "Content-Type": "application/json", "Mcp-Session-Id": sid, **auth}

    def rpc(method: Any, params: Any = None, rid: Any = None) -> bytes:
        d: dict[str, Any] = {"jsonrpc": "2.0", "id": rng.randrange(1 << 30) if rid is None else rid}
        d["method"] = method
        if params is not None:
            d["params"] = params
        return json.dumps(d).encode()

    def call(name: Any, args: Any) -> bytes:
        return rpc("tools/call", {"name": name, "arguments": args})

    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    out: list[Request] = [
        ("bad-json", "POST", h, b"{"),
        ("bad-json", "POST", h, junk),
        ("bad-json", "POST", h, b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"'),
        ("bad-json", "POST", h, b"[" * 50_000 + b"]" * 50_000),
        ("bad-json", "POST", h, b"\xff\xfe" + "{}".encode("utf-16-le")),
        ("rpc-shape", "POST", h, json.dumps({"id": 1, "method": "tools/list"}).encode()),
        ("rpc-shape", "POST", h, rpc(42)),
        # JSON-RPC says Invalid Request; the SDK takes it for a notification: 202, nothing runs.
        ("tolerated", "POST", h, rpc("tools/list", rid={"x": 1})),
        ("rpc-shape", "POST", h, rpc("tools/call", "not-an-object")),
        ("rpc-shape", "POST", h, json.dumps([1, 2, 3]).encode()),
        ("rpc-shape", "POST", h, json.dumps({"jsonrpc": "1.0", "id": 3, "method": "tools/list"}).encode()),
        ("unknown-method", "POST", h, rpc("memories/steal", {})),
        ("unknown-method", "POST", h, rpc("tools/" + "x" * rng.randrange(1, 3000))),
        ("unknown-tool", "POST", h, call("bash_unconfined", {"command": "cat /etc/passwd"})),
        ("unknown-tool", "POST", h, call("../view", {"path": "/memories"})),
        ("wrong-types", "POST", h, call("view", {"path": 12})),
        ("wrong-types", "POST", h, call("view", {"path": ["/memories"]})),
        (
            "wrong-types",
            "POST",
            h,
            call("insert", {"path": "/memories/MEMORY.md", "insert_line": "x", "insert_text": 1}),
        ),
        ("wrong-types", "POST", h, call("view", "not-a-dict")),
        ("wrong-types", "POST", h, call("grep", {"pattern": None})),
        ("wrong-types", "POST", h, call("view", {"path": "/memories", "start_line": 1e308})),
        ("hostile-args", "POST", h, call("view", {"path": "/memories/../../etc/passwd"})),
        (
            "hostile-args",
            "POST",
            h,
            call("create", {"path": "/memories/x.md", "file_text": "no frontmatter"}),
        ),
        ("hostile-args", "POST", h, call("grep", {"pattern": "(a|aa)+$", "path": "/etc"})),
        ("hostile-args", "POST", h, call("grep", {"pattern": "(", "path": "/memories"})),
        ("hostile-args", "POST", h, call("view", {"path": "/memories", "extra": "x" * 100_000})),
        ("hostile-args", "POST", h, call("view", {"path": "/memories/" + "a" * 5000})),
        # over http_limits.MAX_BODY_BYTES: 413 before the body is read (or a reset, as above)
        ("too-large", "POST", h, call("create", {"path": "/memories/huge.md", "file_text": "y" * 6_000_000})),
        ("huge", "POST", h, call("create", {"path": "/memories/big.md", "file_text": "y" * 3_000_000})),
        ("bad-headers", "POST", {k: v for k, v in h.items() if k != "Mcp-Session-Id"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Content-Type": "text/plain"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Accept": "text/html"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Mcp-Session-Id": "forged-" + str(rng.random())}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Host": "evil.example"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Origin": "http://evil.example"}, rpc("tools/list")),
        # A 200 KB header: past http_limits.MAX_HEAD_BYTES, answered 431 and closed (the close
        # may reach the client first, as a reset, with most of the head unread).
        ("too-large", "POST", {**h, "X-Junk": "z" * 200_000}, rpc("tools/list")),
        ("wrong-route", "GET", {k: v for k, v in h.items() if k != "Mcp-Session-Id"}, b""),
        ("wrong-route", "GET", {**h, "Mcp-Session-Id": "forged"}, b""),
        ("wrong-route", "GET", {**h, "Accept": "application/json"}, b""),
        ("wrong-route", "PUT", h, rpc("tools/list")),
        ("wrong-route", "DELETE", {**h, "Mcp-Session-Id": "forged"}, b""),
        ("wrong-route", "POST:/", h, rpc("tools/list")),
        ("wrong-route", "POST:/mcp/../admin", h, rpc("tools/list")),
    ]
    if auth:  # the tenants server: tokens
        noauth = {k: v for k, v in h.items() if k != "Authorization"}
        out += [
            ("bad-token", "POST", noauth, rpc("tools/list")),
            ("bad-token", "POST", {**noauth, "Authorization": "Bearer"}, rpc("tools/list")),
            (
                "bad-token",
                "POST",
                {**noauth, "Authorization": "Bearer mdt_" + str(rng.random())},
                rpc("tools/list"),
            ),
            ("bad-token", "POST", {**noauth, "Authorization": "Basic YWRtaW46YWRtaW4="}, rpc("tools/list")),
            ("bad-token", "POST", {**noauth, "Authorization": "Bearer " + "t" * 12_000}, rpc("tools/list")),
            (
                "bad-token",
                "POST",
                {**noauth, "Authorization": auth["Authorization"][:-1]},
                call("view", {"path": "/memories"}),
            ),
            ("bad-token", "GET", noauth, b""),
        ]
        if other:  # tenant B's valid token on tenant A's session: unknown to B's session manager
            out.append(
                (
                    "other-tenant",
                    "POST",
                    {**noauth, "Authorization": f"Bearer {other}"},
                    call("view", {"path": "/memories"}),
                )
            )
    return out


def is_error_answer(status: int, body: bytes) -> bool:
    if status >= 400:
        return True
    text = body.decode("utf-8", "replace").replace(" ", "")
    return '"error":' in text or '"isError":true' in text


def send(
    client: httpx.Client, verb: str, url: str, headers: dict[str, str], body: bytes, deadline_s: float
) -> tuple[int, bytes] | None:
    """The answer, or None when it is not complete within `deadline_s` (a hang)."""
    end = time.monotonic() + deadline_s
    try:
        with client.stream(verb, url, headers=headers, content=body) as r:
            chunks = []
            for chunk in r.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > end:
                    return None
            return r.status_code, b"".join(chunks)
    except httpx.TimeoutException:
        return None
    except httpx.HTTPError as exc:  # the server closed the connection: not an answer
        return -1, str(exc).encode()


class Slow:
    """Slowloris clients: each holds a connection, dribbling a request header byte by byte."""

    def __init__(self, port: int, n: int) -> None:
        self.port, self.stop = port, threading.Event()
        self.opened = self.closed_by_server = self.open_now = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(n)]

    def _run(self) -> None:
        head = (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + b"X-Slow: "
            + b"s" * 10_000
        )
        while not self.stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            except OSError:
                time.sleep(0.2)
                continue
            with self.lock:
                self.opened += 1
                self.open_now += 1
            try:
                for ch in head:
                    if self.stop.is_set():
                        break
                    s.send(bytes([ch]))
                    time.sleep(0.2)
                s.settimeout(0.01)
                try:
                    if s.recv(1) == b"":
                        raise ConnectionResetError
                except TimeoutError:
                    pass
            except OSError:
                with self.lock:
                    self.closed_by_server += 1
            finally:
                s.close()
                with self.lock:
                    self.open_now -= 1

    def __enter__(self) -> Slow:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()


def run_target(kind: str, args: argparse.Namespace, console: Console) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix=f"memdir-robust-{kind}-"))
    root = base / "mem"
    spec.init(open_store(root, create=True))
    auth: dict[str, str] = {}
    other: str | None = None
    if kind == "tenants":
        spec.init(open_store(base / "mem-b", create=True))
        token_a, token_b = tenants.new_token(), tenants.new_token()
        tfile = base / "tenants.json"
        tenants.save(
            tfile,
            tenants.Tenants(
                [
                    tenants.TenantToken(tenants.hash_token(token_a), "a", str(root), "manage"),
                    tenants.TenantToken(tenants.hash_token(token_b), "b", str(base / "mem-b"), "manage"),
                ]
            ),
        )
        server, url = _common.serve_tenants(tfile)
        auth, other = {"Authorization": f"Bearer {token_a}"}, token_b
    else:
        server, url = _common.serve_http(root)
    port = int(url.split(":")[2].split("/")[0])
    base_url = url.rsplit("/mcp", 1)[0]
    rng = random.Random(args.seed)
    rss_start = rss_max = rss_kb(server.pid)
    by_cat: Counter[str] = Counter()
    answered: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    hangs: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    failures: list[dict[str, Any]] = []
    latency_max = 0.0
    t0 = time.monotonic()
    sent = 0
    with Slow(port, args.slow_clients) as slow, httpx.Client(timeout=httpx.Timeout(args.deadline)) as client:
        _, sid = initialize(client, url, auth)
        with Progress(console=console) as progress:
            task = progress.add_task(f"{kind}: hostile requests", total=args.requests)
            while sent < args.requests:
                for cat, method, headers, body in hostile_requests(rng, sid, auth, other):
                    if sent >= args.requests:
                        break
                    verb, _, path = method.partition(":")
                    by_cat[cat] += 1
                    sent += 1
                    t = time.monotonic()
                    ans = send(client, verb, base_url + path if path else url, headers, body, args.deadline)
                    latency_max = max(latency_max, time.monotonic() - t)
                    if ans is None:
                        hangs[cat] += 1
                    else:
                        statuses[ans[0]] += 1
                        if (
                            is_error_answer(*ans)
                            or (cat == "tolerated" and ans[0] > 0)
                            or (cat == "too-large" and ans[0] == -1)
                        ):
                            answered[cat] += 1
                        else:
                            failed[cat] += 1
                            if len(failures) < 10:
                                failures.append(
                                    {
                                        "category": cat,
                                        "method": method,
                                        "body": body[:200].decode("utf-8", "replace"),
                                        "status": ans[0],
                                        "answer": ans[1][:200].decode("utf-8", "replace"),
                                    }
                                )
                    progress.advance(task)
                    if sent % 200 == 0:
                        rss_max = max(rss_max, rss_kb(server.pid))
            slow_opened, slow_closed, slow_open_at_end = slow.opened, slow.closed_by_server, slow.open_now
        # The session flood: twice the session cap, never closed. Past the cap: 503.
        flood: Counter[int] = Counter()
        for _ in range(2 * MAX_SESSIONS):
            status, _ = initialize(client, url, auth)
            flood[status] += 1
        rss_max = max(rss_max, rss_kb(server.pid))
    seconds = round(time.monotonic() - t0, 1)
    alive = server.poll() is None

    async def well_formed() -> bool:
        http = httpx2.AsyncClient(headers=auth, timeout=30)
        async with Client(streamable_http_client(url, http_client=http)) as c:
            r = await c.call_tool("view", {"path": "/memories"})
            return not r.is_error

    # A new session is refused while the flood holds every slot; an existing one still works.
    still_works = False
    if alive:
        try:
            still_works = anyio.run(well_formed)
        except Exception:
            still_works = False
        if not still_works:
            with httpx.Client(timeout=30) as c:
                r = c.post(
                    url,
                    json={
                        "jsonrpc": "2.0",
                        "id": 9,
                        "method": "tools/call",
                        "params": {"name": "view", "arguments": {"path": "/memories"}},
                    },
                    headers={"Accept": ACCEPT, "Mcp-Session-Id": sid, **auth},
                )
                still_works = r.status_code == 200 and '"isError":false' in r.text.replace(" ", "")
    rss_end = rss_kb(server.pid) if alive else 0
    server.terminate()
    server.wait(10)
    table = Table(title=f"{kind}: {sent} hostile requests, {args.slow_clients} slow clients")
    for col in ("category", "sent", "answered as expected", "not an error", "no answer (hang)"):
        table.add_column(col, justify="right")
    for cat in by_cat:
        table.add_row(cat, str(by_cat[cat]), str(answered[cat]), str(failed[cat]), str(hangs[cat]))
    console.print(table)
    return {
        "server": "memdir serve --tenants (2 tenants)" if kind == "tenants" else "memdir serve ROOT",
        "requests": sent,
        "seconds": seconds,
        "by_category": dict(by_cat),
        "answered_with_error": sum(answered.values()),
        "not_an_error": dict(failed),
        "hangs": dict(hangs),
        "failure_examples": failures,
        "slowest_answer_s": round(latency_max, 2),
        "http_statuses": {str(k): v for k, v in sorted(statuses.items())},
        "slow_connections": {
            "opened": slow_opened,
            "closed_by_server": slow_closed,
            "open_at_end": slow_open_at_end,
        },
        "session_flood": {
            "initializes": 2 * MAX_SESSIONS,
            "statuses": {str(k): v for k, v in sorted(flood.items())},
        },
        "server_alive": alive,
        "well_formed_client_works": still_works,
        "rss_kb": {"start": rss_start, "max": rss_max, "end": rss_end},
    }


# -- limits: the cases of "Hostile input, second round" ---------------------------------------

SLOW_LINE = "a" * 26 + "b\n"  # with the pattern below, about 0.3 s of backtracking per line
SLOW_PATTERN = "(a|aa)+$"


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().split("\n"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_idle(pid: int, limit_s: float = 120.0) -> float:
    """Seconds until the process has used no CPU for half a second (its calls are done)."""
    t0 = time.monotonic()
    last, still = cpu_ticks(pid), 0
    while still < 2 and time.monotonic() - t0 < limit_s:
        time.sleep(0.25)
        now = cpu_ticks(pid)
        still, last = (still + 1 if now == last else 0), now
    return time.monotonic() - t0 - 0.5


@contextlib.contextmanager
def served(
    kind: str, base: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[Any, str, dict[str, str]]]:
    """A fresh server over a fresh store at `base`: (process, url, auth headers)."""
    # The server process inherits `env`; this process's environment is restored after the start.
    with mock.patch.dict(os.environ, env or {}):
        root = base / "mem"
        if not root.exists():
            spec.init(open_store(root, create=True))
        auth: dict[str, str] = {}
        if kind == "tenants":
            token = tenants.new_token()
            tfile = base / "tenants.json"
            tenants.save(
                tfile,
                tenants.Tenants([tenants.TenantToken(tenants.hash_token(token), "a", str(root), "manage")]),
            )
            server, url = _common.serve_tenants(tfile)
            auth = {"Authorization": f"Bearer {token}"}
        else:
            server, url = _common.serve_http(root)
    try:
        yield server, url, auth
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def port_of(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def closed_by_server(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def case_idle(kind: str, base: Path, n: int) -> dict[str, Any]:
    """`n` connections that send nothing, then 5 well-formed initializes."""
    with served(kind, base) as (_server, url, auth):
        port = port_of(url)
        opened = time.monotonic()
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
        time.sleep(0.5)
        statuses: Counter[int] = Counter()
        latencies = []
        with httpx.Client(timeout=30) as client:
            for _ in range(5):
                t = time.monotonic()
                status, _ = initialize(client, url, auth)
                latencies.append(time.monotonic() - t)
                statuses[status] += 1
        closed_at_once = sum(closed_by_server(s) for s in idle)
        time.sleep(max(0.0, opened + HEAD_TIMEOUT_S + 1.0 - time.monotonic()))
        closed_later = sum(closed_by_server(s) for s in idle)
        for s in idle:
            s.close()
        return {
            "server": kind,
            "idle_connections": n,
            "initialize_statuses": {str(k): v for k, v in statuses.items()},
            "initialize_s_max": round(max(latencies), 3),
            "idle_closed_within_1s": closed_at_once,
            f"idle_closed_within_{HEAD_TIMEOUT_S + 1:g}s": closed_later,
        }


def big_file(root: Path) -> int:
    path = root / "big.md"
    path.write_text("---\nname: big\ndescription: 2.6 MB of short lines\n---\n" + "x\n" * 1_300_000)
    return path.stat().st_size


def grep_call(rid: int, **args: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "grep", "arguments": args},
    }


def session_headers(client: httpx.Client, url: str, auth: dict[str, str]) -> dict[str, str]:
    _, sid = initialize(client, url, auth)
    return {"Accept": ACCEPT, "Mcp-Session-Id": sid, **auth}


def case_big_grep(base: Path) -> dict[str, Any]:
    """One client, grep with max_results 1e12 over a 2.6 MB file of short lines."""
    with served("single", base) as (server, url, auth):
        size = big_file(base / "mem")
        with httpx.Client(timeout=120) as client:
            headers = session_headers(client, url, auth)
            rss0 = status_kb(server.pid, "VmRSS")
            t = time.monotonic()
            r = client.post(
                url,
                json=grep_call(3, pattern="x", path="/memories/big.md", max_results=1e12),
                headers=headers,
            )
            seconds = time.monotonic() - t
        return {
            "file_bytes": size,
            "seconds": round(seconds, 3),
            "reply_bytes": len(r.content),
            "rss_mb_before": round(rss0 / 1024, 1),
            "peak_rss_mb": round(status_kb(server.pid, "VmHWM") / 1024, 1),
        }


def case_non_reading(base: Path, n: int) -> dict[str, Any]:
    """`n` clients send the same grep and never read their replies."""
    with served("single", base) as (server, url, auth):
        big_file(base / "mem")
        port = port_of(url)
        with httpx.Client(timeout=30) as client:
            headers = session_headers(client, url, auth)
        rss0 = status_kb(server.pid, "VmRSS")
        head = "".join(f"{k}: {v}\r\n" for k, v in {**headers, "Content-Type": "application/json"}.items())
        socks = []
        for i in range(n):
            body = json.dumps(
                grep_call(10 + i, pattern="x", path="/memories/big.md", max_results=1e12)
            ).encode()
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            start = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
            )
            s.sendall(start.encode() + body)
            socks.append(s)
        busy = wait_idle(server.pid)
        out = {
            "clients": n,
            "seconds_until_server_idle": round(busy, 2),
            "rss_mb_before": round(rss0 / 1024, 1),
            "peak_rss_mb": round(status_kb(server.pid, "VmHWM") / 1024, 1),
            "rss_mb_while_unread": round(status_kb(server.pid, "VmRSS") / 1024, 1),
        }
        for s in socks:
            s.close()
        return out


def case_slow_read(base: Path, grep_timeout: float) -> dict[str, Any]:
    """A slow grep (Python engine, a backtracking pattern) in one session, a view in another."""
    env = {"MEMDIR_GREP": "python", "MEMDIR_GREP_TIMEOUT": str(grep_timeout)}
    with served("single", base, env) as (_server, url, auth):
        (base / "mem" / "slow.md").write_text("---\nname: slow\ndescription: slow\n---\n" + SLOW_LINE * 400)
        out: dict[str, float] = {}
        with httpx.Client(timeout=120) as a, httpx.Client(timeout=120) as b:
            ha, hb = session_headers(a, url, auth), session_headers(b, url, auth)

            def slow() -> None:
                t = time.monotonic()
                a.post(url, json=grep_call(3, pattern=SLOW_PATTERN), headers=ha)
                out["grep_s"] = time.monotonic() - t

            th = threading.Thread(target=slow)
            th.start()
            time.sleep(1.0)
            t = time.monotonic()
            view = {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "view", "arguments": {"path": "/memories"}},
            }
            r = b.post(url, json=view, headers=hb)
            out["view_s"] = time.monotonic() - t
            view_ok = r.status_code == 200 and "slow.md" in r.text
            th.join()
        return {
            "grep_timeout_s": grep_timeout,
            "grep_s": round(out["grep_s"], 2),
            "view_during_grep_s": round(out["view_s"], 3),
            "view_ok": view_ok,
        }


def case_sigterm(base: Path) -> dict[str, Any]:
    """SIGTERM while a slow grep runs in a worker thread: seconds until the process is gone."""
    env = {"MEMDIR_GREP": "python", "MEMDIR_GREP_TIMEOUT": "120"}
    with served("single", base, env) as (server, url, auth):
        (base / "mem" / "slow.md").write_text("---\nname: slow\ndescription: slow\n---\n" + SLOW_LINE * 400)
        with httpx.Client(timeout=120) as client:
            headers = session_headers(client, url, auth)

            def slow() -> None:
                with contextlib.suppress(httpx.HTTPError):
                    client.post(url, json=grep_call(3, pattern=SLOW_PATTERN), headers=headers)

            threading.Thread(target=slow, daemon=True).start()
            time.sleep(1.0)
            t = time.monotonic()
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(60)
                exited: float | None = round(time.monotonic() - t, 2)
            except subprocess.TimeoutExpired:
                exited = None  # still running a minute after the signal
        return {"seconds_to_exit_after_sigterm": exited, "exit_code": server.returncode}


def run_limits(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="memdir-limits-"))
    out: dict[str, Any] = {}
    for kind in ("single", "tenants"):
        console.print(f"limits: {args.idle} idle connections, {kind}")
        out[f"idle_{kind}"] = case_idle(kind, base / f"idle-{kind}", args.idle)
    console.print("limits: grep max_results 1e12 of a 2.6 MB file")
    out["big_grep"] = case_big_grep(base / "big")
    console.print("limits: 8 non-reading clients")
    out["non_reading"] = case_non_reading(base / "nonreading", 8)
    console.print("limits: a view during a slow grep")
    out["slow_read"] = case_slow_read(base / "slow", args.grep_timeout)
    console.print("limits: SIGTERM during a slow call")
    out["sigterm"] = case_sigterm(base / "sigterm")
    table = Table(title="limits (issue: Hostile input, second round)")
    table.add_column("case")
    table.add_column("figures")
    for name, figures in out.items():
        table.add_row(name, ", ".join(f"{k}={v}" for k, v in figures.items()))
    console.print(table)
    return out


def limits_ok(r: dict[str, Any]) -> bool:
    idle_ok = all(
        r[k]["initialize_statuses"] == {"200": 5} and r[k]["initialize_s_max"] < 3.0
        for k in ("idle_single", "idle_tenants")
    )
    return (
        idle_ok
        and r["big_grep"]["reply_bytes"] < 1_000_000
        and r["non_reading"]["peak_rss_mb"] - r["non_reading"]["rss_mb_before"] < 100
        and r["slow_read"]["view_ok"]
        and r["slow_read"]["view_during_grep_s"] < 2.0
        and r["sigterm"]["seconds_to_exit_after_sigterm"] is not None
        and r["sigterm"]["seconds_to_exit_after_sigterm"] < 10
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000, help="per server")
    ap.add_argument("--servers", choices=("single", "tenants", "both"), default="both")
    ap.add_argument("--slow-clients", type=int, default=20)
    ap.add_argument(
        "--deadline", type=float, default=20.0, help="seconds a request may take before it is a hang"
    )
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--sections", choices=("hostile", "limits", "both"), default="both")
    ap.add_argument("--idle", type=int, default=300, help="idle connections in the limits section")
    ap.add_argument("--grep-timeout", type=float, default=30.0, help="the slow grep's timeout (limits)")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    kinds = ["single", "tenants"] if args.servers == "both" else [args.servers]
    results: dict[str, Any] = {}
    if args.sections in ("hostile", "both"):
        results.update({k: run_target(k, args, console) for k in kinds})
    if args.sections in ("limits", "both"):
        results["limits"] = run_limits(args, console)
    console.print_json(json.dumps(results))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "server_robustness.json").write_text(json.dumps(results, indent=2))
    ok = all(
        r["server_alive"]
        and r["well_formed_client_works"]
        and not r["not_an_error"]
        and not r["hangs"]
        and r["rss_kb"]["max"] < 4 * max(r["rss_kb"]["start"], 100_000)
        for k, r in results.items()
        if k != "limits"
    ) and ("limits" not in results or limits_ok(results["limits"]))
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
