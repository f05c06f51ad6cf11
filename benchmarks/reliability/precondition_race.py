"""Writers racing on one file with `expected_sha256` (docs/tools.md, Optimistic concurrency):
N processes, each doing C read-modify-write cycles (view, take the sha256, think, write with it
as expected_sha256, retry on a refusal), through the Python tools and over MCP (HTTP, one
server). The verdict (tests/race_workers.py, check_race) reads only the file and the journal:
every successful write's marker present once, the count line equal to the increments, the
versions one chain from the seed to the file (no two writes based on one version), the
journal's versions that same chain, and every refusal naming a version that really was on disk.

    .venv/bin/python benchmarks/reliability/precondition_race.py --writers 2 4 --cycles 50
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
from rich.console import Console
from rich.table import Table
from tests.race_workers import check_race, mcp_http_writer, python_writer, seed

from memdir.store import spec
from memdir.tools.wiring import open_store

COLUMNS = ("writes", "refusals", "retried_cycles", "max_tries", "seconds", "writes_per_s")


def run(transport: str, writers: int, cycles: int, think_s: float) -> dict[str, Any]:
    """One race on a fresh store; its figures, or AssertionError naming what the verdict found."""
    base = Path(tempfile.mkdtemp(prefix="memdir-race-"))
    root = base / "mem"
    spec.init(open_store(root, create=True))
    first = seed(root)
    server = None
    if transport == "mcp-http":
        server, url = _common.serve_http(root)
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    outs = [base / f"writer-{w}.json" for w in range(writers)]
    procs = []
    for w in range(writers):
        args: tuple[Any, ...] = (
            (str(root), w, cycles, think_s) if transport == "python" else (url, w, cycles, think_s, None)
        )
        procs.append(
            ctx.Process(
                target=python_writer if transport == "python" else mcp_http_writer,
                args=(*args, go, str(outs[w])),
            )
        )
    for p in procs:
        p.start()
    go.set()
    t = time.monotonic()
    for p in procs:
        p.join(1800)
    wall = time.monotonic() - t
    if server is not None:
        server.terminate()
        server.wait(30)
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"{transport}: {len(failed)} writer(s) failed ({failed})")
    figures = check_race(root, [json.loads(o.read_text()) for o in outs], first)
    return {"transport": transport, **figures, "wall_seconds": round(wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writers", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument(
        "--think", type=float, default=0.03, help="most seconds a writer pauses between view and write"
    )
    ap.add_argument("--transports", nargs="+", default=["python", "mcp-http"], choices=["python", "mcp-http"])
    ap.add_argument("--quick", action="store_true", help="2 writers x 10 cycles")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    if args.quick:
        args.writers, args.cycles = [2], 10
    console = Console(width=120)
    rows: list[dict[str, Any]] = []
    for transport in args.transports:
        for n in args.writers:
            with console.status(f"{transport}: {n} writers x {args.cycles} cycles ..."):
                try:
                    rows.append(run(transport, n, args.cycles, args.think))
                except AssertionError as exc:
                    console.print(f"[bold red]FAIL[/] {transport}, {n} writers: {exc}")
                    raise SystemExit(1) from None
    table = Table(title=f"precondition race: {args.cycles} cycles per writer, think up to {args.think:g} s")
    for col in ("transport", "writers", *COLUMNS):
        table.add_column(col, justify="left" if col == "transport" else "right")
    for r in rows:
        table.add_row(r["transport"], str(r["writers"]), *(str(r[c]) for c in COLUMNS))
    console.print(table)
    console.print(
        "verdict: no lost update, every refusal unwritten and reported, journal agrees: [bold green]PASS[/]"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "precondition_race.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
