"""Per-operation latency of the memory_20250818 adapter vs the Anthropic SDK's own local helper.

Both backends get the same store (N files in 20 folders) and the same calls, side by side in one
run; medians in milliseconds and our/SDK ratios are printed, and written with a PNG plot to
runs/anthropic-memory-ops-<time>/ (summary.json, plot.png).

    python benchmarks/anthropic_memory_ops.py --files 1000 --reps 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from _common import table, timed
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from rich.console import Console
from rich.progress import track

from memdir import Memory
from memdir.integrations.anthropic_memory import MemdirMemoryTool

OPS = ("create", "view_file", "view_range", "str_replace", "insert", "move", "rename", "delete", "view_root")


def body(i: int) -> str:
    return f"# Note {i}\n" + "".join(f"- fact {i}.{k} about topic {i % 20} [S{i}T{k}]\n" for k in range(12))


def seed(tool: Any, n: int, label: str) -> None:
    for i in track(range(n), description=f"seeding {label}", transient=True):
        tool.call({"command": "create", "path": f"/memories/t{i % 20}/note-{i}.md", "file_text": body(i)})


def measure(tool: Any, reps: int, n: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {op: [] for op in OPS}

    def ms(op: str, command: dict[str, Any]) -> None:
        out[op].append(timed(lambda: tool.call(command))[0] * 1000)

    for r in range(reps):
        i = r % n
        path = f"/memories/t{i % 20}/note-{i}.md"
        new = f"/memories/bench/new-{r}.md"
        ms("create", {"command": "create", "path": new, "file_text": body(r)})
        ms("view_file", {"command": "view", "path": path})
        ms("view_range", {"command": "view", "path": path, "view_range": [3, 6]})
        old, repl = f"fact {i}.3 about", f"fact {i}.3 regarding"
        ms("str_replace", {"command": "str_replace", "path": path, "old_str": old, "new_str": repl})
        tool.call({"command": "str_replace", "path": path, "old_str": repl, "new_str": old})
        ms("insert", {"command": "insert", "path": path, "insert_line": 2, "insert_text": "x [S0T0]"})
        tool.call({"command": "str_replace", "path": path, "old_str": "x [S0T0]\n", "new_str": ""})
        # move: same file name, another folder; rename: a new name (memdir also rewrites `name:`).
        kept = f"/memories/bench2/new-{r}.md"
        ms("move", {"command": "rename", "old_path": new, "new_path": kept})
        moved = f"/memories/bench/moved-{r}.md"
        ms("rename", {"command": "rename", "old_path": kept, "new_path": moved})
        ms("delete", {"command": "delete", "path": moved})
        if r % 20 == 0:
            ms("view_root", {"command": "view", "path": "/memories"})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--out", default="runs")
    args = ap.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        sdk = BetaLocalFilesystemMemoryTool(str(Path(tmp) / "sdk"))
        ours = MemdirMemoryTool(Memory(Path(tmp) / "ours"))
        seed(sdk, args.files, "SDK helper")
        seed(ours, args.files, "memdir adapter")
        results = {}
        for label, tool in (("sdk", sdk), ("memdir", ours)):
            results[label] = measure(tool, args.reps, args.files)
    medians = {lab: {op: statistics.median(v) for op, v in res.items()} for lab, res in results.items()}
    rows = []
    for op in OPS:
        s, m = medians["sdk"][op], medians["memdir"][op]
        rows.append((op, f"{s:.3f}", f"{m:.3f}", f"{m / s:.2f}x"))
    title = f"memory_20250818 per-op median latency, {args.files} files, {args.reps} reps"
    console.print(table(title, ("operation", "SDK helper ms", "memdir ms", "memdir / SDK"), rows))
    run = Path(args.out) / f"anthropic-memory-ops-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    run.mkdir(parents=True, exist_ok=True)
    summary = {
        "files": args.files,
        "reps": args.reps,
        "median_ms": medians,
        "command": "python benchmarks/anthropic_memory_ops.py",
    }
    (run / "summary.json").write_text(json.dumps(summary, indent=2))
    fig, ax = plt.subplots(figsize=(8, 4))
    xs = range(len(OPS))
    ax.bar([x - 0.2 for x in xs], [medians["sdk"][o] for o in OPS], 0.4, label="SDK helper")
    ax.bar([x + 0.2 for x in xs], [medians["memdir"][o] for o in OPS], 0.4, label="memdir adapter")
    ax.set_xticks(list(xs), OPS, rotation=30)
    ax.set_yscale("log")
    ax.set_ylabel("median ms per call (log)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(run / "plot.png", dpi=120)
    console.print(f"wrote {run}/summary.json and plot.png")


if __name__ == "__main__":
    main()
