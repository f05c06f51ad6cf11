"""`memdir stats` and `memdir check` at 100,000 files, and `check` on a 50 MB core file, beside
the same commands of an earlier commit, in one run (issue 16, item 3).

The fixtures are `reliability/resource_bounds.py`'s (a folder of 100,000 short notes; a root
with a 50 MB markdown file). The baseline is the tree of `--baseline` (a commit; the default is
the last one before the single-pass check), taken out with `git archive` into a temporary
folder, so the working tree is not touched. Each command runs in its own process, the current
code and the baseline alternating `--repeat` times, so that what else the machine runs falls on
both alike; the table gives the median wall and CPU seconds of the command alone (imports
excluded, as in resource_bounds.py) and the child's peak RSS, against the targets (5 s; 200 MB
peak for check on the 50 MB file), and says whether the two outputs are byte for byte equal.

    python benchmarks/analytics_100k.py [--files 100000] [--big-mb 50] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, baseline_tree, machine, table, write_json
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent / "reliability"))
import resource_bounds

BASELINE = "acfa45efec2cb6cb8c03feb80b276c130d17e619"  # the last commit before the single-pass check
TARGET_S = 5.0
TARGET_MB = 200


def child(argv: list[str]) -> None:
    """Run one CLI command with the `memdir` of $PYTHONPATH; print the figures as JSON."""
    sys.path[:] = [os.environ["PYTHONPATH"]] + [p for p in sys.path if p != str(REPO / "src")]
    from click.testing import CliRunner

    import memdir
    from memdir.cli.main import cli

    wall, cpu = time.perf_counter(), time.process_time()
    res = CliRunner().invoke(cli, argv)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"wall_s": wall, "cpu_s": cpu, "peak_mb": peak, "exit": res.exit_code, "output": res.output}
    out["memdir"] = str(Path(memdir.__file__).resolve().parents[1])
    if res.exception and not isinstance(res.exception, SystemExit):
        out["output"] = f"{type(res.exception).__name__}: {res.exception}"
    print(json.dumps(out))


def run(src: Path, argv: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(argv)], env=env, capture_output=True, check=True
    )
    row: dict[str, Any] = json.loads(proc.stdout.decode().strip().split("\n")[-1])
    assert row["memdir"] == str(src.resolve()), f"ran {row['memdir']}, not {src}"
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--big-mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default=BASELINE, help="commit to compare with")
    ap.add_argument("--quick", action="store_true", help="10,000 files, 5 MB, one round")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    files, big_mb, repeat = (10_000, 5, 1) if args.quick else (args.files, args.big_mb, args.repeat)
    console = Console()
    base = Path(tempfile.mkdtemp(prefix="memdir-analytics-"))
    try:
        t = time.monotonic()
        roots = resource_bounds.build(base / "stores", files, big_mb, 1)
        console.print(f"fixtures written in {time.monotonic() - t:.0f} s")
        old_src = baseline_tree(args.baseline, base)
        new_src = REPO / "src"
        many, big = str(roots["many"]), str(roots["big"])
        ops = [
            (f"{files:,} files: memdir stats", ["stats", "--json", many], TARGET_S, None),
            (f"{files:,} files: memdir check", ["check", "--json", many], TARGET_S, None),
            (f"{big_mb} MB core file: memdir check", ["check", "--json", big], None, TARGET_MB),
            (f"{big_mb} MB core file: memdir stats", ["stats", "--json", big], None, None),
        ]
        rows: list[dict[str, Any]] = []
        for label, argv, target_s, target_mb in ops:
            got: dict[str, list[dict[str, Any]]] = {"baseline": [], "now": []}
            for i in range(repeat):
                order = [("baseline", old_src), ("now", new_src)]
                for name, src in order if i % 2 == 0 else order[::-1]:
                    got[name].append(run(src, argv))
            same = all(r["output"] == got["baseline"][0]["output"] for r in got["baseline"] + got["now"])
            row: dict[str, Any] = {
                "op": label,
                "same_output": same,
                "target_s": target_s,
                "target_mb": target_mb,
            }
            for name, samples in got.items():
                for key in ("wall_s", "cpu_s", "peak_mb"):
                    row[f"{name}_{key}"] = statistics.median(s[key] for s in samples)
            rows.append(row)
            console.print(
                f"{label}: wall {row['baseline_wall_s']:.2f} -> {row['now_wall_s']:.2f} s, "
                f"CPU {row['baseline_cpu_s']:.2f} -> {row['now_cpu_s']:.2f} s, "
                f"peak {row['baseline_peak_mb']:.0f} -> {row['now_peak_mb']:.0f} MB, same output: {same}"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    t = table(
        f"analytics at scale: baseline {args.baseline} against the working tree (median of {repeat})",
        ["operation", "wall s", "CPU s", "peak MB", "target", "same output"],
    )
    for r in rows:
        target = (f"{r['target_s']:.0f} s wall" if r["target_s"] else "") + (
            f"{r['target_mb']} MB peak" if r["target_mb"] else ""
        )
        t.add_row(
            r["op"],
            f"{r['baseline_wall_s']:.2f} -> {r['now_wall_s']:.2f}",
            f"{r['baseline_cpu_s']:.2f} -> {r['now_cpu_s']:.2f}",
            f"{r['baseline_peak_mb']:.0f} -> {r['now_peak_mb']:.0f}",
            target,
            "yes" if r["same_output"] else "NO",
        )
    console.print(t)
    load = os.getloadavg()[0]
    console.print(f"1-min load average at the end: {load:.2f} on {os.cpu_count()} CPUs")
    out = REPO / "runs" / "benchmarks" / "analytics_100k" / "results.json"
    write_json(out, {"rows": rows, "baseline": args.baseline, "load_avg_1m": load, "machine": machine()})
    console.print(f"wrote {out}")
    if not all(r["same_output"] for r in rows):
        raise SystemExit("the outputs differ from the baseline's")


if __name__ == "__main__":
    main()
