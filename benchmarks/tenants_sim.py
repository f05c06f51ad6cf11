"""Many tenants behind one `memdir serve --tenants` process, on loopback: 1,000 and then 10,000
tenants (each its own store folder and token), a mixed read/write load, and what the server
process holds while the tenant count grows tenfold.

    python benchmarks/tenants_sim.py [--tenants 1000 10000] [--active 100] [--seconds 30]
        [--workers 8] [--open-tenants 128] [--dir DIR] [--out runs] [--quick]

Each phase starts a fresh server over a tenants file of that size, then

1. reaches every tenant: one MCP `initialize` per token (the server opens the tenant, builds
   its harness and session manager; the LRU closes the least recently used idle ones), so
   every tenant exists and answers;
2. runs the mixed load for `--seconds` over `--active` tenants drawn from those the other
   phases do not use (so every phase's active tenants start cold: no journal, no index yet):
   70% reads (view of a note, of the root, a BM25 search) and 30% writes (create, str_replace,
   insert), `--workers` clients at once, each tenant's session reopened when the LRU closed it.

It prints p50/p99 milliseconds per tool call, calls per second, the server's CPU per call, its
resident memory and open files once every tenant has been reached and at most over the phase
(sampled every 0.2 s; sockets, one per client connection, counted apart), each phase beside the
first (the baseline of the same run), and the machine's load average: on a shared machine the
wall-clock figures move with it, the CPU per call and the bounds do not. Writes summary.json and
plot.png to runs/tenants-sim-<time>/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from _common import REPO, bar_chart, free_port, table, write_json
from rich.console import Console

from memdir.mcp import tenants

ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "sim", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOPICS = ("coffee", "hiking", "piano", "berlin", "garden")
NOTE = (
    "---\nname: {stem}\ndescription: notes on {topic}\n---\n# {topic}\n\n- {who} | likes: {topic} [S1T{n}]\n"
)


def build_stores(base: Path, n: int) -> list[Path]:
    """`n` small stores: MEMORY.md and three notes each, written plainly (no journal yet)."""
    roots = []
    for i in range(n):
        root = base / "stores" / f"t{i:05d}"
        roots.append(root)
        if (root / "MEMORY.md").exists():
            continue
        (root / "notes").mkdir(parents=True)
        (root / "MEMORY.md").write_text(
            "---\nname: MEMORY\ndescription: index\n---\n# Memory\n\nsee /memories/notes\n"
        )
        for k in range(3):
            t = TOPICS[(i + k) % len(TOPICS)]
            (root / "notes" / f"n{k}.md").write_text(
                NOTE.format(stem=f"n{k}", topic=t, who=f"user{i}", n=k + 1)
            )
    return roots


def tenants_file(base: Path, roots: list[Path], tokens: list[str]) -> Path:
    path = base / f"tenants-{len(roots)}.json"
    entries = [
        tenants.TenantToken(tenants.hash_token(tok), root.name, str(root), "manage-bm25")
        for root, tok in zip(roots, tokens, strict=True)
    ]
    tenants.save(path, tenants.Tenants(entries))
    return path


def start_server(tf: Path, open_tenants: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = ["--tenants", str(tf), "--open-tenants", str(open_tenants), "--http", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    url = f"http://127.0.0.1:{port}/mcp"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            httpx2.get(url, timeout=1)
            return proc, url
        except httpx2.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


class Sampler:
    """RSS and open descriptors of one process, every 0.2 s, on a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.rss_kb: list[int] = []
        self.files: list[int] = []
        self.sockets: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def cpu_s(self) -> float:
        """User + system CPU seconds the process has spent so far."""
        with open(f"/proc/{self.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def sample(self) -> None:
        with open(f"/proc/{self.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    self.rss_kb.append(int(line.split()[1]))
        files = sockets = 0
        for fd in os.listdir(f"/proc/{self.pid}/fd"):
            try:
                target = os.readlink(f"/proc/{self.pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:"):
                sockets += 1
            else:
                files += 1
        self.files.append(files)
        self.sockets.append(sockets)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                self.sample()
            except OSError:
                return

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _reply(text: str) -> dict[str, Any]:
    for line in text.splitlines():
        if line.startswith("data: "):
            text = line[6:]
            break
    out: dict[str, Any] = json.loads(text)
    return out


@dataclass
class Client:
    """Sessions by token, shared by the workers; a session the server forgot (404) is reopened."""

    http: httpx2.AsyncClient
    url: str
    sessions: dict[str, str] = field(default_factory=dict)
    reopened: int = 0
    failures: list[str] = field(default_factory=list)

    async def initialize(self, token: str, notify: bool = True) -> None:
        auth = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
        r = await self.http.post(self.url, json=INITIALIZE, headers=auth)
        if r.status_code != 200:
            raise RuntimeError(f"initialize: {r.status_code} {r.text[:200]}")
        sid = r.headers["mcp-session-id"]
        if notify:
            await self.http.post(self.url, json=INITIALIZED, headers={**auth, "Mcp-Session-Id": sid})
        self.sessions[token] = sid

    async def call(self, token: str, rid: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if token not in self.sessions:
            await self.initialize(token)
        body = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": args},
        }
        for _ in range(3):
            headers = {
                "Authorization": f"Bearer {token}",
                "Accept": ACCEPT,
                "Mcp-Session-Id": self.sessions[token],
            }
            r = await self.http.post(self.url, json=body, headers=headers)
            if r.status_code == 404:
                self.reopened += 1
                await self.initialize(token)
                continue
            if r.status_code == 429:
                await asyncio.sleep(0.05)
                continue
            if r.status_code != 200:
                raise RuntimeError(f"{name}: {r.status_code} {r.text[:200]}")
            result: dict[str, Any] = _reply(r.text)["result"]
            return result
        raise RuntimeError(f"{name}: no answer after reopening the session")


def _text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result.get("content", []))


def operation(rng: random.Random, serial: int, tenant: int) -> tuple[str, str, dict[str, Any]]:
    """(kind, tool, arguments): 70% reads, 30% writes."""
    x = rng.random()
    if x < 0.35:
        return "read", "view", {"path": f"/memories/notes/n{rng.randrange(3)}.md"}
    if x < 0.55:
        return "read", "view", {"path": "/memories"}
    if x < 0.70:
        return "read", "bm25_full_search", {"query": rng.choice(("coffee", "hiking piano", "berlin garden"))}
    if x < 0.82:
        text = NOTE.format(stem=f"w{serial}", topic="travel", who=f"writer{serial}", n=serial)
        return "write", "create", {"path": f"/memories/notes/w{serial}.md", "file_text": text}
    if x < 0.91:
        return (
            "write",
            "insert",
            {"path": "/memories/notes/n0.md", "insert_line": 4, "insert_text": f"- seen {serial}\n"},
        )
    k = rng.randrange(1, 3)  # a heading each note holds once: the edit adds a line below it
    heading = f"# {TOPICS[(tenant + k) % len(TOPICS)]}\n"
    return (
        "write",
        "str_replace",
        {
            "path": f"/memories/notes/n{k}.md",
            "old_str": heading,
            "new_str": f"{heading}\n- edit {serial}\n",
        },
    )


async def reach_all(client: Client, tokens: list[str], workers: int) -> float:
    queue = list(tokens)
    start = time.perf_counter()

    async def worker() -> None:
        while queue:
            token = queue.pop()
            await client.initialize(token, notify=False)  # answered by the tenant's own server: reached

    await asyncio.gather(*(worker() for _ in range(workers)))
    client.sessions.clear()  # the LRU closed nearly all of them
    return time.perf_counter() - start


async def load(
    client: Client, active: list[tuple[int, str]], seconds: float, workers: int, seed: int
) -> dict[str, list[float]]:
    lat: dict[str, list[float]] = {"read": [], "write": []}
    deadline = time.perf_counter() + seconds
    serial = [0]

    async def worker(w: int) -> None:
        rng = random.Random(seed * 1000 + w)
        while time.perf_counter() < deadline:
            tenant, token = rng.choice(active)
            serial[0] += 1
            kind, name, args = operation(rng, serial[0], tenant)
            t0 = time.perf_counter()
            result = await client.call(token, serial[0], name, args)
            lat[kind].append(time.perf_counter() - t0)
            if result.get("isError"):
                client.failures.append(f"{name}: {_text(result)[:120]}")

    await asyncio.gather(*(worker(w) for w in range(workers)))
    return lat


def pct(samples: list[float], q: float) -> float:
    ms = sorted(s * 1000 for s in samples)
    return ms[min(len(ms) - 1, round(q * (len(ms) - 1)))]


def run_phase(
    base: Path, roots: list[Path], tokens: list[str], active: list[tuple[int, str]], args: argparse.Namespace
) -> dict[str, Any]:
    tf = tenants_file(base, roots, tokens)
    proc, url = start_server(tf, args.open_tenants)
    try:
        with Sampler(proc.pid) as sampler:
            sampler.sample()
            started_rss = sampler.rss_kb[-1]

            cpu: dict[str, float] = {}
            reached: dict[str, float] = {}

            async def go() -> tuple[float, dict[str, list[float]], Client]:
                limits = httpx2.Limits(max_connections=args.workers, max_keepalive_connections=args.workers)
                async with httpx2.AsyncClient(timeout=120, limits=limits) as http:
                    client = Client(http, url)
                    reach_s = await reach_all(client, tokens, args.workers)
                    sampler.sample()
                    reached.update(rss_mb=sampler.rss_kb[-1] / 1024, files=sampler.files[-1])
                    cpu["load_start"] = sampler.cpu_s()
                    lat = await load(client, active, args.seconds, args.workers, len(roots))
                    cpu["load_end"] = sampler.cpu_s()
                    return reach_s, lat, client

            load_before = os.getloadavg()[0]
            reach_s, lat, client = asyncio.run(go())
            sampler.sample()
        calls = lat["read"] + lat["write"]
        return {
            "tenants": len(roots),
            "reach_all_s": reach_s,
            "reach_per_s": len(tokens) / reach_s,
            "active": len(active),
            "calls": len(calls),
            "reads": len(lat["read"]),
            "writes": len(lat["write"]),
            "calls_per_s": len(calls) / args.seconds,
            "server_cpu_ms_per_call": (cpu["load_end"] - cpu["load_start"]) * 1000 / len(calls),
            "machine_load_1min": [load_before, os.getloadavg()[0]],
            "p50_ms": statistics.median(calls) * 1000,
            "p99_ms": pct(calls, 0.99),
            "read_p50_ms": statistics.median(lat["read"]) * 1000,
            "write_p50_ms": statistics.median(lat["write"]) * 1000,
            "write_p99_ms": pct(lat["write"], 0.99),
            "rss_start_mb": started_rss / 1024,
            "rss_after_reach_mb": reached["rss_mb"],
            "files_after_reach": reached["files"],
            "rss_max_mb": max(sampler.rss_kb) / 1024,
            "rss_end_mb": sampler.rss_kb[-1] / 1024,
            "files_max": max(sampler.files),
            "sockets_max": max(sampler.sockets),
            "sessions_reopened": client.reopened,
            "failures": client.failures[:5],
            "failure_count": len(client.failures),
        }
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tenants", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument(
        "--active",
        type=int,
        default=100,
        help="tenants under load per phase (default: fewer than --open-tenants)",
    )
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each phase's load")
    ap.add_argument("--workers", type=int, default=8, help="requests in flight")
    ap.add_argument("--open-tenants", type=int, default=128)
    ap.add_argument("--dir", default=None, help="keep the stores here (reused by the next run)")
    ap.add_argument("--out", default="runs")
    ap.add_argument("--quick", action="store_true", help="100 and 1,000 tenants, 8 s each")
    args = ap.parse_args()
    if args.quick:
        args.tenants, args.active, args.seconds = [100, 1000], 60, 8.0
    sizes = sorted(args.tenants)
    console = Console(width=200)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.dir or tmp)
        t0 = time.perf_counter()
        roots = build_stores(base, sizes[-1])
        tokens = [tenants.new_token() for _ in roots]
        console.print(f"built {len(roots)} stores in {time.perf_counter() - t0:.1f} s")
        # Each phase's active tenants are its own (beyond the smaller phases' tenants), so all start cold.
        rng = random.Random(7)
        results = []
        lower = 0
        for n in sizes:
            pool = list(range(lower, n))
            active = [(i, tokens[i]) for i in rng.sample(pool, min(args.active, len(pool)))]
            console.print(f"phase: {n} tenants, {len(active)} active, {args.seconds:g} s of load")
            results.append(run_phase(base, roots[:n], tokens[:n], active, args))
            lower = n
    first = results[0]
    rows = []
    for r in results:
        rows.append(
            (
                f"{r['tenants']:,}",
                f"{r['reach_per_s']:.0f}",
                f"{r['calls']:,}",
                f"{r['calls_per_s']:.0f}",
                f"{r['server_cpu_ms_per_call']:.1f}",
                f"{r['p50_ms']:.1f}",
                f"{r['p99_ms']:.1f}",
                f"{r['rss_after_reach_mb']:.0f} "
                f"({r['rss_after_reach_mb'] / first['rss_after_reach_mb']:.2f}x)",
                f"{r['files_after_reach']:.0f}",
                f"{r['rss_max_mb']:.0f} ({r['rss_max_mb'] / first['rss_max_mb']:.2f}x)",
                f"{r['files_max']} ({r['files_max'] / first['files_max']:.2f}x)",
                f"{r['sockets_max']}",
                f"{r['failure_count']}",
            )
        )
    console.print(
        table(
            f"memdir serve --tenants, --open-tenants {args.open_tenants}, {args.workers} clients, "
            f"{args.active} active tenants, 70% reads / 30% writes",
            [
                "tenants",
                "reached/s",
                "calls",
                "calls/s",
                "server CPU ms/call",
                "p50 ms",
                "p99 ms",
                "RSS MB, all reached (vs first)",
                "files open then",
                "RSS MB max (vs first)",
                "files open max (vs first)",
                "sockets",
                "errors",
            ],
            rows,
        )
    )
    run = Path(args.out) / f"tenants-sim-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    write_json(run / "summary.json", {"args": vars(args), "phases": results})
    labels = [f"{r['tenants']:,} tenants" for r in results]
    bar_chart(
        run / "plot.png",
        "tenant simulation: latency, memory, descriptors",
        labels,
        {
            "p50 ms": [r["p50_ms"] for r in results],
            "p99 ms": [r["p99_ms"] for r in results],
            "RSS MB": [r["rss_max_mb"] for r in results],
            "files open": [float(r["files_max"]) for r in results],
        },
        "value (log)",
    )
    loads = [f"{x:.1f}" for r in results for x in r["machine_load_1min"]]
    console.print(
        f"machine load average (1 min) before/after each phase: {', '.join(loads)} on {os.cpu_count()} cores"
    )
    console.print(f"wrote {run}/summary.json and plot.png")


if __name__ == "__main__":
    main()
