"""What multi-tenancy costs per MCP call: one store served alone vs the same store behind the
tenant dispatcher (bearer lookup among T tokens), side by side over real HTTP in one run.

    python benchmarks/tenants_http.py --calls 300 --tenants 50

Both servers are up at once; calls run in blocks that alternate between them. Prints median
and p90 milliseconds per `view` call and the ratio; writes summary.json and plot.png to
runs/tenants-http-<time>/.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import mcp
import uvicorn
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from rich.console import Console
from rich.table import Table

from memdir.mcp import tenants
from memdir.mcp.server import http_app
from memdir.mcp.tenant_app import tenants_app
from memdir.store import spec
from memdir.tools.wiring import open_store


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(10)


def _client(url: str, token: str | None) -> mcp.Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"} if token else None)
    return mcp.Client(streamable_http_client(url, http_client=http))  # type: ignore[arg-type]


async def time_calls(
    targets: dict[str, tuple[str, str | None]], calls: int, rounds: int = 6
) -> dict[str, list[float]]:
    """Blocks of calls per server, alternating which goes first each round, so machine load and
    connection warm-up fall on both alike; each block opens a fresh client and skips 5 calls."""
    out: dict[str, list[float]] = {k: [] for k in targets}
    per_block = max(1, calls // rounds)
    for r in range(rounds):
        order = list(targets) if r % 2 == 0 else list(reversed(targets))
        for k in order:
            url, token = targets[k]
            async with _client(url, token) as c:
                for i in range(per_block + 5):
                    t0 = time.perf_counter()
                    res = await c.call_tool("view", {"path": "/memories/MEMORY.md"})
                    if res.is_error:
                        sys.exit(f"call failed: {res.content}")
                    if i >= 5:
                        out[k].append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--tenants", type=int, default=50, help="tokens in the tenants file (one store each)")
    ap.add_argument("--out", default="runs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        tf = base / "tenants.json"
        tokens = []
        for i in range(args.tenants):
            store = open_store(base / f"t{i}", create=True)
            spec.init(store)
            tokens.append(tenants.add_token(tf, str(base / f"t{i}"), "manage"))
        target = open_store(base / "t0")
        with serve(http_app(target, "manage")) as one, serve(tenants_app(tenants.load(tf))) as many:
            targets = {"single store": (one, None), f"tenants ({args.tenants} tokens)": (many, tokens[-1])}
            samples = asyncio.run(time_calls(targets, args.calls))
    labels = list(samples)
    med = {k: statistics.median(v) for k, v in samples.items()}
    p90 = {k: statistics.quantiles(v, n=10)[-1] for k, v in samples.items()}
    table = Table(title=f"MCP view call over HTTP, {args.calls} calls per server")
    for col in ("server", "median ms", "p90 ms", "median vs single"):
        table.add_column(col, justify="right")
    for k in labels:
        table.add_row(k, f"{med[k]:.2f}", f"{p90[k]:.2f}", f"{med[k] / med[labels[0]]:.2f}x")
    Console().print(table)
    run = Path(args.out) / f"tenants-http-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    run.mkdir(parents=True, exist_ok=True)
    summary = {"calls": args.calls, "tenants": args.tenants, "median_ms": med, "p90_ms": p90}
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.boxplot([samples[k] for k in labels], showfliers=False)
    ax.set_xticks(range(1, len(labels) + 1), labels)
    ax.set_ylabel("ms per view call")
    fig.tight_layout()
    fig.savefig(run / "plot.png", dpi=120)
    Console().print(f"wrote {run}/summary.json and plot.png")


if __name__ == "__main__":
    main()
