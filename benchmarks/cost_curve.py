"""The cost curve: search effort per question against corpus size, per variant, offline.

The generated benchmark grows its stream with `sessions` while its question battery stays
about the same, so the same kind of questions is asked over a bigger and bigger haystack.
Each size is one `memdir study eval` run (offline model and judge) into its own run folder; this
script then reads the three summaries and prints, per variant and size: corpus KB, bytes read
per question, the same over the verbatim dump's at that size, tool calls per question, F1, build
tool calls and build seconds; then how much each variant's bytes read per question grew from the
smallest size to the largest against how much the corpus grew (design rule 1: a store
partitioned along what questions name reads sublinearly); and plots bytes read per question
against corpus KB (log-log), one line per variant.

    PYTHONPATH=src python benchmarks/cost_curve.py [--sizes 10,40,160] [--out runs/cost_curve]

Runs resume: rerunning with the same folder only finishes what is missing.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

from memdir_study.eval.folder import TIMINGS
from memdir_study.eval.records import CellSummary, RunTimings
from memdir_study.eval.report import write_report
from memdir_study.eval.runner import RunConfig, run_eval

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Row:
    """One variant at one size: its cell of summary.json and its build's wall time (timings.json)."""

    sessions: int
    cell: CellSummary
    build_seconds: float | None

    @property
    def corpus_kb(self) -> float:
        return float(self.cell.corpus.get("kb", 0.0))


VARIANTS = ["chunk-retrieval", "verbatim-dump", "agent-curated"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--sizes", default="10,40,160", help="sessions per size")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", default=str(ROOT / "runs" / "cost_curve"))
    args = ap.parse_args()
    out = Path(args.out)
    rows: list[Row] = []
    for n in (int(x) for x in args.sizes.split(",")):
        sid = f"gen-s{args.seed}-n{n}"
        start = time.perf_counter()
        cfg = RunConfig(
            benchmark="generated",
            conversations=[sid],
            variants=args.variants.split(","),
            builder_model="offline",
            search_model="offline",
        )
        summary = run_eval(cfg, out / sid)
        write_report(out / sid)
        wall = time.perf_counter() - start
        print(f"{sid}: {wall:.1f} s wall")
        times = {t.variant: t.build_seconds for t in RunTimings.read(out / sid / TIMINGS).cells}
        rows += [Row(n, c, times.get(c.variant)) for c in summary.cells]
    dump = {r.sessions: r.cell.search.bytes_read for r in rows if r.cell.variant == "verbatim-dump"}
    lines = [
        "| variant | sessions | corpus KB | questions | KB read / q | read vs dump | tool calls / q | F1 "
        "| build calls | build s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r.cell.variant, r.sessions)):
        c, s = r.cell, r.cell.search
        f1 = c.correctness.all.mean if c.correctness else None
        base = dump.get(r.sessions)
        read = s.bytes_read or 0.0
        ratio = f"{read / base:.2f}x" if base else "—"
        lines.append(
            f"| {c.variant} | {r.sessions} | {r.corpus_kb:.1f} | {c.n_questions} | "
            f"{read / 1024:.1f} | {ratio} | {s.tool_calls or 0:.1f} | "
            f"{'—' if f1 is None else f'{f1:.3f}'} | {c.build.get('tool_calls', 0)} | "
            f"{'—' if r.build_seconds is None else f'{r.build_seconds:.1f}'} |"
        )
    lines.append("")
    for variant in dict.fromkeys(r.cell.variant for r in rows):
        pts = sorted(((r.sessions, r) for r in rows if r.cell.variant == variant), key=lambda p: p[0])
        (n0, a), (n1, z) = pts[0], pts[-1]
        if n1 > n0 and a.cell.search.bytes_read and a.corpus_kb:
            grew = (z.cell.search.bytes_read or 0) / a.cell.search.bytes_read
            lines.append(
                f"- {variant}: KB read / q grew {grew:.2f}x "
                f"while the corpus grew {z.corpus_kb / a.corpus_kb:.1f}x ({n0} to {n1} sessions)"
            )
    table = "\n".join(lines)
    print(table)
    (out / "cost_curve.md").write_text(table + "\n")
    plot(rows, out / "cost_curve.png")
    print(f"table: {out / 'cost_curve.md'}  plot: {out / 'cost_curve.png'}")


def plot(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for variant in dict.fromkeys(r.cell.variant for r in rows):
        pts = sorted(
            (r.corpus_kb, (r.cell.search.bytes_read or 0) / 1024) for r in rows if r.cell.variant == variant
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
