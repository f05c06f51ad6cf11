"""Server robustness: 10,000 malformed or hostile requests against `memdir serve --http` (one
store) and `memdir serve --tenants` (bearer tokens): bad JSON, wrong JSON-RPC shapes, wrong
types, unknown tools and methods, bad headers, forged sessions, bad or missing tokens, another
tenant's token on a session, huge payloads, a session flood, while slow clients hold
connections open by dribbling headers. The server must stay up, answer every request with an
error (HTTP 4xx/5xx, or a JSON-RPC / tool error) within the per-request deadline (a request
still unanswered then counts as a hang), keep its memory bounded, and still serve a
well-formed client at the end.

    .venv/bin/python benchmarks/reliability/server_robustness.py --requests 10000

Why an earlier version of this script hung: it sent a GET with a valid session id, which opens
the MCP standalone event stream. That stream is meant to stay open (the server pushes
notifications on it) and the SDK pings it every 15 s, so a client read timeout never fired.
The GETs below are hostile ones (no session, forged session, wrong Accept); the one valid GET
is read up to its headers only, and every request has a total deadline.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

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
from memdir.mcp.server import MAX_SESSIONS
from memdir.store import spec
from memdir.store.store import Store

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
        ("huge", "POST", h, call("create", {"path": "/memories/huge.md", "file_text": "y" * 6_000_000})),
        ("huge", "POST", h, call("create", {"path": "/memories/big.md", "file_text": "y" * 3_000_000})),
        ("bad-headers", "POST", {k: v for k, v in h.items() if k != "Mcp-Session-Id"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Content-Type": "text/plain"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Accept": "text/html"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Mcp-Session-Id": "forged-" + str(rng.random())}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Host": "evil.example"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Origin": "http://evil.example"}, rpc("tools/list")),
        # A 200 KB header is legal HTTP; uvicorn (h11) usually takes it and answers normally.
        ("tolerated", "POST", {**h, "X-Junk": "z" * 200_000}, rpc("tools/list")),
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
    spec.init(Store(root, create=True))
    auth: dict[str, str] = {}
    other: str | None = None
    if kind == "tenants":
        spec.init(Store(base / "mem-b", create=True))
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
                        if is_error_answer(*ans) or (cat == "tolerated" and ans[0] > 0):
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
        "server": "memdir serve --tenants (2 tenants)" if kind == "tenants" else "memdir serve --root",
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000, help="per server")
    ap.add_argument("--servers", choices=("single", "tenants", "both"), default="both")
    ap.add_argument("--slow-clients", type=int, default=20)
    ap.add_argument(
        "--deadline", type=float, default=20.0, help="seconds a request may take before it is a hang"
    )
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    kinds = ["single", "tenants"] if args.servers == "both" else [args.servers]
    results = {k: run_target(k, args, console) for k in kinds}
    console.print_json(json.dumps(results))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "server_robustness.json").write_text(json.dumps(results, indent=2))
    ok = all(
        r["server_alive"]
        and r["well_formed_client_works"]
        and not r["not_an_error"]
        and not r["hangs"]
        and r["rss_kb"]["max"] < 4 * max(r["rss_kb"]["start"], 100_000)
        for r in results.values()
    )
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
