"""Concurrency at full size: 8 processes x 500 edits on three shared files, half through the
Python tools and half through MCP over HTTP (one server), while reader processes read the
files raw. Checks: every block appended exactly once (no lost update), each three-line block
contiguous (no interleaving), readers never saw a partial file, and it all ends (no deadlock).

    .venv/bin/python benchmarks/reliability/concurrency.py --procs 8 --edits 500
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
from rich.console import Console
from tests.workers import append_blocks, reader

from memdir.store import spec
from memdir.tools.wiring import open_store


def check(root: Path, procs: int, edits: int) -> dict[str, int]:
    blocks: dict[tuple[int, int], int] = {}
    interleaved = 0
    for f in range(3):
        lines = (root / f"shared-{f}.md").read_text().split("\n")
        for i, ln in enumerate(lines):
            if ln.startswith("begin "):
                w, n = map(int, ln.split()[1:])
                blocks[(w, n)] = blocks.get((w, n), 0) + 1
                if lines[i + 1 : i + 3] != [f"body {w} {n}", f"end {w} {n}"]:
                    interleaved += 1
    expected = {(w, n) for w in range(procs) for n in range(edits)}
    return {
        "blocks_expected": len(expected),
        "blocks_found": sum(blocks.values()),
        "lost": len(expected - blocks.keys()),
        "duplicated": sum(1 for c in blocks.values() if c > 1),
        "interleaved": interleaved,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--edits", type=int, default=500)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    base = Path(tempfile.mkdtemp(prefix="memdir-conc-"))
    root = base / "mem"
    store = open_store(root, create=True)
    spec.init(store)
    for f in range(3):
        (root / f"shared-{f}.md").write_text(f"---\nname: shared-{f}\ndescription: shared file {f}\n---\n")
    server, url = _common.serve_http(root)
    ctx = mp.get_context("spawn")
    stop = base / "stop"
    readers = [
        ctx.Process(target=reader, args=(str(root), str(stop), str(base / f"reader-{r}.txt")))
        for r in range(args.readers)
    ]
    writers = [
        ctx.Process(
            target=append_blocks, args=(str(root), w, args.edits, "python" if w % 2 == 0 else "mcp", url)
        )
        for w in range(args.procs)
    ]
    t = time.monotonic()
    for p in readers + writers:
        p.start()
    deadlocked = 0
    with console.status(f"{args.procs} writers x {args.edits} edits ..."):
        for p in writers:
            p.join(max(1.0, args.timeout - (time.monotonic() - t)))
            if p.is_alive():
                deadlocked += 1
                p.kill()
    seconds = round(time.monotonic() - t, 1)
    stop.touch()
    for p in readers:
        p.join(30)
    server.terminate()
    reads = partial = 0
    for r in range(args.readers):
        a, b = map(int, (base / f"reader-{r}.txt").read_text().split())
        reads, partial = reads + a, partial + b
    result = {
        "processes": args.procs,
        "edits_per_process": args.edits,
        "transports": "even workers: Python tools; odd workers: MCP over HTTP",
        **check(root, args.procs, args.edits),
        "writer_failures": sum(1 for p in writers if p.exitcode != 0),
        "deadlocked": deadlocked,
        "raw_reads": reads,
        "partial_reads": partial,
        "seconds": seconds,
    }
    console.print_json(json.dumps(result))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "concurrency.json").write_text(json.dumps(result, indent=2))
    ok = all(
        result[k] == 0
        for k in ("lost", "duplicated", "interleaved", "writer_failures", "deadlocked", "partial_reads")
    )
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
