"""A ChatGPT export's branch walk, the working tree's against a baseline commit's, on exports
holding one long chain: the walk alone (`chatgpt.current_branch`, root to `current_node`) and the whole
read (`read_chat`: parse, walk, turns).

The walk's cycle guard scanned a list of the nodes met, so a chain of n nodes cost n^2/2
comparisons; it now keeps them in a set (issue 46, item 6). `--baseline REV` (its `src/` extracted
by `git archive`) reads the same files in the same run. Each read runs in a child process of its
own code; a baseline read past `--cap` seconds is stopped and shown as "> cap".

    python benchmarks/export_branch_walk.py [--quick] [--cap 300] [--baseline bcc2d30] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO, bar_chart, baseline_tree, machine, table, write_json

CHILD = r"""
import json, sys, time
from pathlib import Path
from memdir.chatlogs import read_chat
try:
    from memdir.chatlogs.chatgpt import current_branch
except ImportError:  # a baseline from before the ChatGPT reader had a module of its own
    from memdir.chatlogs.exports import _current_branch as current_branch

path = Path(sys.argv[1])
conv = json.loads(path.read_text())[0]
start = time.perf_counter()
branch = current_branch(conv["mapping"], conv["current_node"], "bench")
walk = time.perf_counter() - start
start = time.perf_counter()
turns = len(read_chat(path).turns)
read = time.perf_counter() - start
print(json.dumps({"walk_s": walk, "read_s": read, "nodes": len(branch), "turns": turns}))
"""


def export(n: int) -> list[dict[str, object]]:
    """One conversation of `n` messages in a single chain, each node only what the reader needs
    (about 97 bytes a node: 100,000 nodes make 9.7 MB)."""
    mapping = {
        f"{i}": {
            "message": {
                "author": {"role": "user" if i % 2 == 0 else "assistant"},
                "content": {"parts": [f"m{i}"]},
            },
            "parent": f"{i - 1}" if i else None,
        }
        for i in range(n)
    }
    return [{"id": "c", "create_time": 1709287200.0, "current_node": f"{n - 1}", "mapping": mapping}]


def read(src: Path, path: Path, cap: float) -> dict[str, float] | None:
    """The child's figures, or None when it ran past `cap` seconds."""
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=cap,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return dict(json.loads(done.stdout))


def seconds(figures: dict[str, float] | None, key: str, cap: float) -> str:
    return f"> {cap:g}" if figures is None else f"{figures[key]:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="chains of 1,000 and 10,000 nodes only")
    ap.add_argument("--cap", type=float, default=300.0, help="seconds a baseline read may take")
    ap.add_argument("--baseline", default="bcc2d30", help="a commit whose walk scans a list")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "bench-export-branch-walk")
    args = ap.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 30_000, 100_000]
    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-export-walk-"))
    results = []
    try:
        (tmp / "base").mkdir()
        base = baseline_tree(args.baseline, tmp / "base")
        for n in sizes:
            path = tmp / f"conversations-{n}.json"
            path.write_text(json.dumps(export(n), separators=(",", ":")))
            now = read(REPO / "src", path, args.cap)
            then = read(base, path, args.cap)
            assert now is not None and now["nodes"] == n and now["turns"] == n, now
            results.append(
                {"nodes": n, "mb": path.stat().st_size / 1e6, "baseline": then, "working_tree": now}
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    from rich.console import Console

    rows = [
        (
            f"{r['nodes']:,}",
            f"{r['mb']:.1f}",
            seconds(r["baseline"], "walk_s", args.cap),
            seconds(r["working_tree"], "walk_s", args.cap),
            seconds(r["baseline"], "read_s", args.cap),
            seconds(r["working_tree"], "read_s", args.cap),
        )
        for r in results
    ]
    columns = (
        "nodes",
        "MB",
        f"walk, list ({args.baseline})",
        "walk, set",
        f"read_chat ({args.baseline})",
        "read_chat",
    )
    Console().print(table("a ChatGPT export's branch walk, one chain, seconds", columns, rows))
    write_json(
        args.out / "results.json",
        {"machine": machine(), "baseline": args.baseline, "cap_s": args.cap, "runs": results},
    )
    labels = [f"{r['nodes']:,}" for r in results]
    bar_chart(
        args.out / "walk.png",
        "branch walk of one chain (baseline capped)",
        labels,
        {
            f"list ({args.baseline})": [
                args.cap if r["baseline"] is None else r["baseline"]["walk_s"] for r in results
            ],
            "set": [r["working_tree"]["walk_s"] for r in results],
        },
        "seconds",
    )


if __name__ == "__main__":
    main()
