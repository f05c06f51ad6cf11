"""The cost curve: search effort per question against corpus size, per variant, offline.

The generated benchmark grows its stream with `sessions` while its question battery stays
about the same, so the same kind of questions is asked over a bigger and bigger haystack.
Each size is one `memdir eval` run (offline model and judge) into its own run folder; this
script then reads the three summaries and prints, per variant and size: corpus KB, bytes read
per question, tool calls per question, F1, build tool calls and build seconds; and plots bytes
read per question against corpus KB (log-log), one line per variant.

    PYTHONPATH=src python benchmarks/cost_curve.py [--sizes 10,40,160] [--out runs/cost_curve]

Runs resume: rerunning with the same folder only finishes what is missing.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from memdir.eval.report import write_report
from memdir.eval.runner import RunConfig, run_eval

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ["chunk-retrieval", "verbatim-dump", "agent-curated"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--sizes", default="10,40,160", help="sessions per size")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", default=str(ROOT / "runs" / "cost_curve"))
    args = ap.parse_args()
    out = Path(args.out)
    rows: list[dict[str, Any]] = []
    for n in (int(x) for x in args.sizes.split(",")):
        sid = f"gen-s{args.seed}-n{n}"
        start = time.perf_counter()
        cfg = RunConfig("generated", [sid], args.variants.split(","), "offline", "offline")
        summary = run_eval(cfg, out / sid)
        write_report(out / sid)
        wall = time.perf_counter() - start
        print(f"{sid}: {wall:.1f} s wall")
        for c in summary["cells"]:
            rows.append(c | {"sessions": n, "wall": wall})
    lines = [
        "| variant | sessions | corpus KB | questions | KB read / q | tool calls / q | F1 "
        "| build calls | build s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["variant"], r["sessions"])):
        s, b = r["search"], r["build"]
        f1 = r["correctness"]["all"]["mean"] if r["correctness"] else None
        lines.append(
            f"| {r['variant']} | {r['sessions']} | {r['corpus']['kb']:.1f} | {r['n_questions']} | "
            f"{s['bytes_read'] / 1024:.1f} | {s['tool_calls']:.1f} | {'—' if f1 is None else f'{f1:.3f}'} | "
            f"{b['tool_calls']} | {b['seconds']:.1f} |"
        )
    table = "\n".join(lines)
    print(table)
    (out / "cost_curve.md").write_text(table + "\n")
    plot(rows, out / "cost_curve.png")
    print(f"table: {out / 'cost_curve.md'}  plot: {out / 'cost_curve.png'}")


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for variant in dict.fromkeys(r["variant"] for r in rows):
        pts = sorted(
            (r["corpus"]["kb"], r["search"]["bytes_read"] / 1024) for r in rows if r["variant"] == variant
        )
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=variant)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("corpus size (KB of turns)")
    ax.set_ylabel("KB read per question")
    ax.set_title("Search cost against corpus size (generated benchmark, offline)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
