"""Server robustness: 10,000 malformed or hostile requests against `memdir serve --http`
(bad JSON, wrong JSON-RPC shapes, wrong types, unknown tools and methods, bad headers and
sessions, huge payloads) while slow clients hold connections open. The server must stay up,
answer every request with an error (HTTP 4xx, or a JSON-RPC / tool error), and keep its
memory bounded; a well-formed client must still work at the end.

    .venv/bin/python benchmarks/reliability/server_robustness.py --requests 10000
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
from mcp import Client
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from memdir.store import spec
from memdir.store.store import Store

ACCEPT = "application/json, text/event-stream"


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().split("\n"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def initialize(client: httpx.Client, url: str) -> str:
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
    r = client.post(url, json=body, headers={"Accept": ACCEPT})
    sid = r.headers.get("mcp-session-id", "")
    client.post(
        url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={"Accept": ACCEPT, "Mcp-Session-Id": sid},
    )
    return sid


def hostile_requests(rng: random.Random, sid: str) -> list[tuple[str, str, dict[str, str], bytes]]:
    """(category, method, headers, body) for one batch of every kind."""
    h = {"Accept": ACCEPT, "Content-Type": "application/json", "Mcp-Session-Id": sid}

    def rpc(method: Any, params: Any = None, rid: Any = 7) -> bytes:
        d: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            d["params"] = params
        return json.dumps(d).encode()

    def call(name: Any, args: Any) -> bytes:
        return rpc("tools/call", {"name": name, "arguments": args})

    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    out = [
        ("bad-json", "POST", h, b"{"),
        ("bad-json", "POST", h, junk),
        ("bad-json", "POST", h, b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"'),
        ("bad-json", "POST", h, b"[" * 50_000 + b"]" * 50_000),
        ("bad-json", "POST", h, b"\xff\xfe" + "{}".encode("utf-16-le")),
        ("rpc-shape", "POST", h, json.dumps({"id": 1, "method": "tools/list"}).encode()),
        (
            "rpc-shape",
            "POST",
            h,
            json.dumps({"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}).encode(),
        ),
        ("rpc-shape", "POST", h, rpc(42)),
        ("rpc-shape", "POST", h, rpc("tools/call", "not-an-object")),
        ("rpc-shape", "POST", h, json.dumps([1, 2, 3]).encode()),
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
        ("hostile-args", "POST", h, call("view", {"path": "/memories/../../etc/passwd"})),
        (
            "hostile-args",
            "POST",
            h,
            call("create", {"path": "/memories/x.md", "file_text": "no frontmatter"}),
        ),
        ("hostile-args", "POST", h, call("grep", {"pattern": "(a|aa)+$", "path": "/etc"})),
        ("hostile-args", "POST", h, call("view", {"path": "/memories", "extra": "x" * 100_000})),
        ("huge", "POST", h, call("create", {"path": "/memories/huge.md", "file_text": "y" * 6_000_000})),
        ("bad-headers", "POST", {"Content-Type": "application/json"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Content-Type": "text/plain"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Mcp-Session-Id": "forged-" + str(rng.random())}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Host": "evil.example"}, rpc("tools/list")),
        ("bad-headers", "POST", {**h, "Origin": "http://evil.example"}, rpc("tools/list")),
        ("wrong-route", "GET", h, b""),
        ("wrong-route", "PUT", h, rpc("tools/list")),
        ("wrong-route", "POST:/", h, rpc("tools/list")),
        ("wrong-route", "POST:/mcp/../admin", h, rpc("tools/list")),
    ]
    return out


def is_error_answer(status: int, body: bytes) -> bool:
    if status >= 400:
        return True
    text = body.decode("utf-8", "replace")
    return '"error"' in text or '"isError":true' in text.replace(" ", "") or "Error:" in text


def slow_client(port: int, stop: threading.Event, held: list[int]) -> None:
    """Slowloris: open a connection and dribble a request header a byte at a time."""
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            held[0] += 1
            for ch in b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n":
                if stop.is_set():
                    break
                s.send(bytes([ch]))
                time.sleep(0.05)
            s.close()
        except OSError:
            time.sleep(0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--slow-clients", type=int, default=20)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="memdir-robust-")) / "mem"
    spec.init(Store(root, create=True))
    server, url = _common.serve_http(root)
    port = int(url.split(":")[2].split("/")[0])
    base = url.rsplit("/mcp", 1)[0]
    rng = random.Random(args.seed)
    rss_start = rss_kb(server.pid)
    rss_max = rss_start
    stop = threading.Event()
    held = [0]
    slow = [
        threading.Thread(target=slow_client, args=(port, stop, held), daemon=True)
        for _ in range(args.slow_clients)
    ]
    for t in slow:
        t.start()
    by_cat: Counter[str] = Counter()
    answered_err: Counter[str] = Counter()
    unanswered: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    t0 = time.monotonic()
    sent = 0
    with httpx.Client(timeout=30) as client, Progress(console=console) as progress:
        sid = initialize(client, url)
        task = progress.add_task("hostile requests", total=args.requests)
        while sent < args.requests:
            for cat, method, headers, body in hostile_requests(rng, sid):
                if sent >= args.requests:
                    break
                verb, _, path = method.partition(":")
                target = base + path if path else url
                by_cat[cat] += 1
                sent += 1
                try:
                    r = client.request(verb, target, headers=headers, content=body)
                    statuses[r.status_code] += 1
                    if is_error_answer(r.status_code, r.content):
                        answered_err[cat] += 1
                    else:
                        unanswered[cat] += 1
                except httpx.HTTPError:
                    unanswered[cat] += 1
                progress.advance(task)
                if sent % 500 == 0:
                    rss_max = max(rss_max, rss_kb(server.pid))
    stop.set()
    seconds = round(time.monotonic() - t0, 1)
    alive = server.poll() is None

    async def well_formed() -> bool:
        async with Client(url) as c:
            r = await c.call_tool("view", {"path": "/memories"})
            return not r.is_error

    still_works = alive and anyio.run(well_formed)
    rss_end = rss_kb(server.pid) if alive else 0
    server.terminate()
    table = Table(
        title=f"{sent} hostile requests, {args.slow_clients} slow clients ({held[0]} slow connections)"
    )
    for col in ("category", "sent", "answered with an error", "not an error / no answer"):
        table.add_column(col, justify="right")
    for cat in by_cat:
        table.add_row(cat, str(by_cat[cat]), str(answered_err[cat]), str(unanswered[cat]))
    console.print(table)
    result = {
        "requests": sent,
        "seconds": seconds,
        "by_category": dict(by_cat),
        "answered_with_error": sum(answered_err.values()),
        "not_error_or_unanswered": dict(unanswered),
        "http_statuses": {str(k): v for k, v in sorted(statuses.items())},
        "slow_connections": held[0],
        "server_alive": alive,
        "well_formed_client_works": still_works,
        "rss_kb": {"start": rss_start, "max": rss_max, "end": rss_end},
    }
    console.print_json(json.dumps(result))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "server_robustness.json").write_text(json.dumps(result, indent=2))
    ok = alive and still_works and not unanswered and rss_max < 4 * max(rss_start, 100_000)
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
