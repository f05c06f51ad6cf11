"""What the journal costs per tool call: the same calls on two stores, with and without it.

Two copies of one synthetic store (N files in 20 folders); one a bare `Store`, the other
`open_store(index=False)`, the journal alone following its steps. The same sequence of writing
calls (create, str_replace, insert, rename, in rotation) goes through a `Harness` on each,
interleaved call by call so both see the same machine load. The first journaled call also
commits the baseline; it is reported apart. Prints medians and p90 per tool, the overhead
(journal - plain), the ratio, and the CPU time of the git processes per call (which, unlike wall
time, does not grow with machine load); writes results.json and a PNG under
runs/benchmarks/journal_overhead/.

    python benchmarks/journal_overhead.py [--files 1000] [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, make_store, table
from rich.console import Console

from memdir.store import journal
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def calls(n: int) -> list[tuple[str, dict[str, Any]]]:
    seq: list[tuple[str, dict[str, Any]]] = []
    for i in range(n):
        path = f"/memories/new/item-{i // 4:04d}.md"
        kind = i % 4
        if kind == 0:
            seq.append(
                (
                    "create",
                    {
                        "path": path,
                        "file_text": f"---\nname: item-{i // 4:04d}\ndescription: item\n---\n"
                        f"# Item\nfact [S{i}T1]\n",
                    },
                )
            )
        elif kind == 1:
            seq.append(("str_replace", {"path": path, "old_str": "fact", "new_str": "a fact"}))
        elif kind == 2:
            seq.append(("insert", {"path": path, "insert_line": 6, "insert_text": f"- more [S{i}T2]"}))
        else:
            seq.append(("rename", {"old_path": path, "new_path": f"/memories/moved/item-{i // 4:04d}.md"}))
    return seq


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    out = REPO / "runs" / "benchmarks" / "journal_overhead"
    out.mkdir(parents=True, exist_ok=True)
    times: dict[str, dict[str, list[float]]] = {"plain": {}, "journal": {}}
    baseline_call = 0.0
    git_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        plain_root, journal_root = Path(tmp) / "plain", Path(tmp) / "journal"
        make_store(plain_root, args.files, body="text " * 150 + "\n")
        shutil.copytree(plain_root, journal_root)
        plain = Store(plain_root)
        journaled = open_store(journal_root, index=False)  # the journal alone follows its steps
        hp, hj = Harness(plain, "manage", role="bench"), Harness(journaled, "manage", role="bench")
        for n, (tool, a) in enumerate(calls(args.calls)):
            for name, h in (("plain", hp), ("journal", hj)):
                c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                s0 = time.perf_counter()
                res = h.call(tool, a, chunk=n)
                dt = time.perf_counter() - s0
                c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                if name == "journal" and n > 0:  # CPU of the git processes this call started
                    git_cpu.append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
                assert not res.is_error, res.text
                if name == "journal" and n == 0:
                    baseline_call = dt  # includes git init and the baseline commit of N files
                    continue
                if not (name == "plain" and n == 0):
                    times[name].setdefault(tool, []).append(dt)
        steps = len(journal.Journal(journal_root).steps())
        git_bytes = sum(
            p.stat().st_size for p in (journal_root / ".memdir" / "journal.git").rglob("*") if p.is_file()
        )
    load = os.getloadavg()[0]
    cols = ("tool", "plain median ms", "journal median ms", "overhead ms", "ratio", "journal p90 ms")
    rows, cells = [], []
    for tool in [*times["plain"], "all"]:
        p = [t for v in times["plain"].values() for t in v] if tool == "all" else times["plain"][tool]
        j = [t for v in times["journal"].values() for t in v] if tool == "all" else times["journal"][tool]
        pm, jm = statistics.median(p) * 1e3, statistics.median(j) * 1e3
        p90 = statistics.quantiles(j, n=10)[-1] * 1e3
        rows.append(
            {
                "tool": tool,
                "plain_ms": pm,
                "journal_ms": jm,
                "overhead_ms": jm - pm,
                "ratio": jm / pm,
                "journal_p90_ms": p90,
            }
        )
        cells.append((tool, f"{pm:.2f}", f"{jm:.2f}", f"{jm - pm:.2f}", f"{jm / pm:.1f}x", f"{p90:.2f}"))
    title = f"journal overhead per tool call ({args.files} files, {args.calls} calls each side)"
    Console().print(table(title, cols, cells))
    print(
        f"first journaled call (git init + baseline commit of {args.files} files + the call): "
        f"{baseline_call * 1e3:.0f} ms"
    )
    print(f"CPU time of git per journaled call: median {statistics.median(git_cpu) * 1e3:.1f} ms")
    print(
        f"journal: {steps} steps, {git_bytes / 1024:.0f} KiB on disk; "
        f"load average {load:.2f} on {os.cpu_count()} CPUs"
    )
    (out / "results.json").write_text(
        json.dumps(
            {
                "files": args.files,
                "calls": args.calls,
                "rows": rows,
                "first_call_ms": baseline_call * 1e3,
                "git_cpu_ms_median": statistics.median(git_cpu) * 1e3,
                "steps": steps,
                "journal_bytes": git_bytes,
                "load_avg_1m": load,
            },
            indent=1,
        )
        + "\n"
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    tools = list(times["plain"])
    data = [times[side][t] for t in tools for side in ("plain", "journal")]
    ax.boxplot([[x * 1e3 for x in d] for d in data], showfliers=False)
    ax.set_xticks(
        range(1, len(data) + 1), [f"{t}\n{side}" for t in tools for side in ("plain", "journal")], fontsize=7
    )
    ax.set_ylabel("ms per call")
    ax.set_title(f"tool call time with and without the journal ({args.files} files)")
    fig.tight_layout()
    fig.savefig(out / "journal_overhead.png", dpi=110)
    print(f"wrote {out / 'results.json'} and {out / 'journal_overhead.png'}")


if __name__ == "__main__":
    main()
