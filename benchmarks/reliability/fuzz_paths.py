"""Path fuzzing at full size: >=100,000 generated hostile calls against every tool through
three transports (Python API, MCP in process, MCP over streamable HTTP), while another
process keeps planting and flipping symlinks and hard links that lead out of the root.

Counts, per transport: calls, error results, audit-hook violations (file-system events of
this process outside the root), canary leaks (outside content in any result), and changes
to the outside folder. Writes fuzz_paths.json to --out.

    .venv/bin/python benchmarks/reliability/fuzz_paths.py --calls 100000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
import anyio
from hypothesis import HealthCheck, given, settings
from mcp import Client
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from tests.hostile import CANARY, AccessAuditor, plant, tool_calls

from memdir.mcp.server import build_server
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness


def collect(n: int) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(tool_calls())
    def gather(call: tuple[str, dict[str, Any]]) -> None:
        calls.append(call)

    gather()
    return calls


def flipper(root: str, outside: str, stop: Any) -> None:
    """Another process: flips a folder to a link leading out and back, re-plants links."""
    r, o = Path(root), Path(outside)
    while not stop.is_set():
        try:
            d = r / "people"
            if d.is_dir() and not d.is_symlink():
                os.rename(d, r / "people-parked")
                os.symlink(o, d)
                os.unlink(d)
                os.rename(r / "people-parked", d)
            plant(r, o)
        except OSError:
            pass


def outside_state(outside: Path) -> dict[str, bytes]:
    return {str(p.relative_to(outside)): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    base = Path(tempfile.mkdtemp(prefix="memdir-fuzz-"))
    root, outside = base / "mem", base / "outside"
    spec.init(Store(root, create=True))
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text("---\nname: alice\ndescription: a\n---\n# A\n## B\nx\n")
    plant(root, outside)
    before = outside_state(outside)
    t0 = time.monotonic()
    calls = collect(args.calls)
    console.print(f"generated {len(calls)} calls in {time.monotonic() - t0:.1f} s")
    shares = {"python": 0.7, "mcp-inprocess": 0.2, "mcp-http": 0.1}
    stop = mp.Event()
    fl = mp.Process(target=flipper, args=(str(root), str(outside), stop), daemon=True)
    fl.start()
    auditor = AccessAuditor.install()
    results: dict[str, dict[str, Any]] = {}
    start = 0
    with Progress(console=console) as progress:
        for transport, share in shares.items():
            n = int(len(calls) * share) if transport != "mcp-http" else len(calls) - start
            batch = calls[start : start + n]
            start += n
            task = progress.add_task(transport, total=len(batch))
            res = {"calls": 0, "errors": 0, "violations": 0, "canary_leaks": 0, "seconds": 0.0}
            t = time.monotonic()
            if transport == "python":
                h = Harness(Store(root), "manage")
                s = Harness(Store(root), "search")
                for name, a in batch:
                    auditor.arm([root])
                    out = (s if name in ("toc", "section_read") else h).call(name, a)
                    auditor.disarm()
                    res["calls"] += 1
                    res["errors"] += out.is_error
                    res["violations"] += len(auditor.violations)
                    res["canary_leaks"] += CANARY in out.text
                    progress.advance(task)
            else:

                async def run_mcp(
                    batch: list[tuple[str, dict[str, Any]]],
                    res: dict[str, Any],
                    transport: str = transport,
                    task: Any = task,
                ) -> None:
                    server: Any
                    if transport == "mcp-inprocess":
                        server = build_server(Harness(Store(root), "manage"))
                    else:
                        proc, url = _common.serve_http(root)
                        server = url
                    try:
                        async with Client(server) as client:
                            for name, a in batch:
                                if transport == "mcp-inprocess":
                                    auditor.arm([root])
                                r = await client.call_tool(name, a)
                                auditor.disarm()
                                text = "".join(getattr(c, "text", "") for c in r.content)
                                res["calls"] += 1
                                res["errors"] += bool(r.is_error)
                                res["violations"] += len(auditor.violations)
                                res["canary_leaks"] += CANARY in text
                                progress.advance(task)
                    finally:
                        if transport == "mcp-http":
                            proc.terminate()

                anyio.run(run_mcp, batch, res)
            res["seconds"] = round(time.monotonic() - t, 1)
            results[transport] = res
    stop.set()
    fl.join(10)
    after = outside_state(outside)
    changed = sorted(
        set(before) ^ set(after) | {k for k in before.keys() & after.keys() if before[k] != after[k]}
    )
    table = Table(title=f"path fuzzing: {len(calls)} calls, links flipped by another process")
    for col in ("transport", "calls", "error results", "audit violations", "canary leaks", "seconds"):
        table.add_column(col, justify="right")
    for tname, r in results.items():
        table.add_row(
            tname,
            str(r["calls"]),
            str(r["errors"]),
            str(r["violations"]),
            str(r["canary_leaks"]),
            str(r["seconds"]),
        )
    console.print(table)
    console.print(f"outside folder changed: {changed or 'nothing'}")
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"calls": len(calls), "transports": results, "outside_changed": changed}
    (args.out / "fuzz_paths.json").write_text(json.dumps(summary, indent=2))
    ok = not changed and all(r["violations"] == 0 and r["canary_leaks"] == 0 for r in results.values())
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
