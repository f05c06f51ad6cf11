"""What the Shell harness costs per call, next to a bare sandbox launch, as the store grows.

Each `bash` call brings a persistent working copy of the store up to date (stat walks, with
content digests cached), runs the command in bubblewrap, walks the copy again and carries
changes back. This prints, for stores of N files of about 2 KB, the first call (which builds the
copy) and the median wall time of:
  bwrap bare     the same bubblewrap + prlimit + bash command line running `true` on an empty dir
  bash: true     Harness.call("bash", {"command": "true"}): a call that changes nothing
  bash: sed -i   a call that edits one file (carried back, recorded, frontmatter checked)
and the ratios to the bare launch. Results go to a run folder with a PNG plot.

    python benchmarks/shell_overhead.py [--sizes 10,100,1000,5000] [--reps 15] [--out runs]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import make_store, stats_ms, table, timed
from rich.console import Console
from rich.progress import Progress

from memdir.store.store import Store
from memdir.tools import sandbox
from memdir.tools.profiles import Harness


def median_ms(fn: Callable[[], object], reps: int) -> float:
    return stats_ms([timed(fn)[0] for _ in range(reps)])["median_ms"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10,100,1000,5000")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default="runs")
    args = ap.parse_args()
    sandbox.require_sandbox()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Progress() as progress:
        task = progress.add_task("stores", total=len(sizes))
        empty = Path(tmp, "empty")
        empty.mkdir(mode=0o755)
        limits = sandbox.ShellLimits()
        for n in sizes:
            root = Path(tmp, f"store-{n}")
            make_store(root, n)
            harness = Harness(Store(root), "shell")
            first = timed(lambda h=harness: h.call("bash", {"command": "true"}))[0] * 1000  # builds the copy
            edit = {"command": "sed -i 's/vegan/VEGAN/;s/VEGAN/vegan/' topic-00/note-000.md"}
            row = {
                "files": n,
                "first_call_ms": first,
                "bwrap_bare_ms": median_ms(lambda: sandbox.run(empty, "true", limits), args.reps),
                "bash_true_ms": median_ms(lambda h=harness: h.call("bash", {"command": "true"}), args.reps),
                "bash_sed_ms": median_ms(lambda h=harness, e=edit: h.call("bash", e), args.reps),
            }
            rows.append(row)
            progress.advance(task)
    cols = ("files", "first call ms", "bwrap bare ms", "bash: true ms", "x bare", "bash: sed -i ms", "x bare")
    cells = [
        (
            str(r["files"]),
            f"{r['first_call_ms']:.1f}",
            f"{r['bwrap_bare_ms']:.1f}",
            f"{r['bash_true_ms']:.1f}",
            f"{r['bash_true_ms'] / r['bwrap_bare_ms']:.1f}",
            f"{r['bash_sed_ms']:.1f}",
            f"{r['bash_sed_ms'] / r['bwrap_bare_ms']:.1f}",
        )
        for r in rows
    ]
    Console().print(table(f"bash call overhead (median of {args.reps})", cols, cells))
    run = Path(args.out, time.strftime("shell-overhead-%Y%m%d-%H%M%S"))
    run.mkdir(parents=True)
    manifest = {
        "script": "benchmarks/shell_overhead.py",
        "reps": args.reps,
        "python": platform.python_version(),
    }
    (run / "results.json").write_text(json.dumps({"manifest": manifest, "rows": rows}, indent=2))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    series = (
        ("first_call_ms", "first call (builds the copy)"),
        ("bwrap_bare_ms", "bwrap bare"),
        ("bash_true_ms", "bash: true"),
        ("bash_sed_ms", "bash: sed -i"),
    )
    for key, label in series:
        ax.plot([r["files"] for r in rows], [r[key] for r in rows], marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="files in store (~2 KB each)", ylabel="median ms per call")
    ax.legend()
    fig.tight_layout()
    fig.savefig(run / "overhead.png", dpi=120)
    print(f"wrote {run}/results.json and {run}/overhead.png")


if __name__ == "__main__":
    main()
