"""`memdir stats` on a 10,000-unit synthetic store: is it under 10 s, and where does the time go?

Builds (seed 42) a store of 40 topic folders, each with a MEMORY.md and 50 files of 5 sections
(2,000 files x 5 = 10,000 sections that are units, plus 41 index units), words drawn from a
topic vocabulary mixed with a shared one, so B1-B4 have real work to do. Then measures, in one
run: the whole CLI (`python -m memdir stats --json`, a fresh process: interpreter, imports,
computation; wall time and its CPU time, which does not grow when other jobs share the machine)
and, in this process, each phase of the computation. Prints a table and writes
results.json and a PNG under runs/benchmarks/stats_10k/.

    python benchmarks/stats_10k.py [--units 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, env, make_store, timed
from rich.console import Console
from rich.table import Table

from memdir.analytics import taxonomy
from memdir.analytics.tree import build, profile_and_shape, read_store
from memdir.store.store import Store

TARGET_S = 10.0
SECTIONS_PER_FILE = 5
FOLDERS = 40


def phases(root: Path) -> dict[str, float]:
    t: dict[str, float] = {}
    t["read files"], snap = timed(lambda: read_store(Store(root)))
    t["build tree"], tree = timed(lambda: build(snap))
    t["profile + shape"], _ = timed(lambda: profile_and_shape(tree))
    panel = taxonomy.Panel()
    t["B1"], _ = timed(lambda: taxonomy.b1(tree, panel))
    units = [u for u in tree.units if len(u.text) >= taxonomy.MIN_UNIT_CHARS]
    t["TF-IDF fit (units)"], x = timed(lambda: taxonomy.vectorize([u.text for u in units]))
    assert x is not None
    t["B2 + B3"], _ = timed(lambda: taxonomy.b2_b3(units, x, panel))
    t["B4"], _ = timed(lambda: taxonomy.b4(units, x, panel))
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    out = REPO / "runs" / "benchmarks" / "stats_10k"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        make_store(root, args.units // SECTIONS_PER_FILE, folders=FOLDERS, sections=SECTIONS_PER_FILE)
        cli_times, cli_cpu, record = [], [], {}
        for _ in range(args.repeat):
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            s0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "memdir", "stats", str(root), "--json"],
                capture_output=True,
                text=True,
                env=env(),
                check=True,
            )
            cli_times.append(time.perf_counter() - s0)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cli_cpu.append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
            record = json.loads(proc.stdout)
        import sklearn.feature_extraction.text  # noqa: F401  (so phases exclude the import)

        runs = [phases(root) for _ in range(args.repeat)]
    phase = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    cli = statistics.median(cli_times)
    load = os.getloadavg()[0]
    table = Table(
        title=f"memdir stats on {record['units']} units ({record['files']} files), median of {args.repeat}"
    )
    table.add_column("what")
    table.add_column("seconds", justify="right")
    table.add_row("CLI, fresh process (start, imports, compute)", f"{cli:.2f}")
    table.add_row("  its CPU time (user + system)", f"{statistics.median(cli_cpu):.2f}")
    for k, v in phase.items():
        table.add_row(f"  in-process: {k}", f"{v:.3f}")
    table.add_row("in-process total", f"{sum(phase.values()):.2f}")
    table.add_row("target", f"{TARGET_S:.1f}")
    table.add_row("CLI wall / target", f"{cli / TARGET_S:.2f}")
    table.add_row("CLI CPU / target", f"{statistics.median(cli_cpu) / TARGET_S:.2f}")
    Console().print(table)
    print(f"1-min load average during the run: {load:.2f} on {os.cpu_count()} CPUs")
    print("metrics:", {k: record[k] for k in ("units", "b1_mean", "b2", "b3", "b4", "b4_pairs")})
    result = {
        "units": record["units"],
        "cli_seconds": cli_times,
        "cli_cpu_seconds": cli_cpu,
        "phases_median": phase,
        "target": TARGET_S,
        "load_avg_1m": load,
        "stats": {k: v for k, v in record.items() if k != "details"},
    }
    (out / "results.json").write_text(json.dumps(result, indent=1) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    names = [*phase, "CLI total"]
    vals = [*phase.values(), cli]
    ax.barh(names, vals, color=["tab:blue"] * len(phase) + ["tab:orange"])
    ax.axvline(TARGET_S, color="red", linestyle="--", label=f"target {TARGET_S:.0f} s")
    ax.set_xlabel("seconds (median)")
    ax.set_title(f"memdir stats, {record['units']} units")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "stats_10k.png", dpi=110)
    print(f"wrote {out / 'results.json'} and {out / 'stats_10k.png'}")


if __name__ == "__main__":
    main()
