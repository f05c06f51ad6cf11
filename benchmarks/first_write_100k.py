"""The first journaled write in a fresh process, on 100,000 files beside 1,000 (target: at
most 1 s at 100,000), and the same write with no observers in a fresh process beside it.

Each size is one synthetic store (`make_store`, 100 folders) whose journal already exists (its
baseline is made first and reported apart). Then, alternating, fresh processes each open the
store and make one `str_replace` through a `Harness`: `open_store(index=False)` (the journal
alone) or a bare `Store`. The clock starts after the imports and stops when the call returns.
A journaled process also reports when its whole-tree check (the one that finds edits made
outside the tools; on its own thread above SYNC_CACHE_BYTES of stat cache) has landed.

    python benchmarks/first_write_100k.py [--sizes 1000,100000] [--runs 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, env, make_store, table
from rich.console import Console

from memdir.store.journal import JournalObserver
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

CHILD = """
import json, sys, time
from memdir.store.journal import JournalObserver
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store
root, side, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
store = open_store(root, index=False) if side == "journal" else Store(root)
old, new = f"# Note 5 {k}", f"# Note 5 {k + 1}"
args = {"path": "/memories/topic-00/note-005.md", "old_str": old, "new_str": new}
res = Harness(store, "manage").call("str_replace", args)
first = time.perf_counter() - t0
assert not res.is_error, res.text
check = None
for obs in store.observers:
    if isinstance(obs, JournalObserver):
        obs.settled()
        check = time.perf_counter() - t0
print(json.dumps({"first_s": first, "check_landed_s": check}))
"""


def child(root: Path, side: str, k: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), side, str(k)],
        env=env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    data: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def run_size(files: int, runs: int, tmp: Path) -> dict[str, object]:
    root = tmp / f"s{files}"
    make_store(root, files, folders=100, body="text " * 150 + "\n")
    note = root / "topic-00" / "note-005.md"
    note.write_text(note.read_text().replace("# Note 5", "# Note 5 0", 1))
    store = open_store(root, index=False)
    t0 = time.perf_counter()  # the journal's creation: its baseline commit of every file
    assert (
        not Harness(store, "manage")
        .call(
            "create", {"path": "/memories/seed.md", "file_text": "---\nname: seed\ndescription: s\n---\nx\n"}
        )
        .is_error
    )
    creation = time.perf_counter() - t0
    for obs in store.observers:
        if isinstance(obs, JournalObserver):
            obs.settled()
    times: dict[str, list[float]] = {"plain": [], "journal": []}
    checks: list[float] = []
    k = 0
    for _ in range(runs):
        for side in ("journal", "plain"):
            r = child(root, side, k)
            k += 1
            times[side].append(r["first_s"])
            if r["check_landed_s"] is not None:
                checks.append(r["check_landed_s"])
    return {
        "files": files,
        "journal_creation_s": creation,
        "first_write_journal_s": statistics.median(times["journal"]),
        "first_write_plain_s": statistics.median(times["plain"]),
        "check_landed_s": statistics.median(checks),
        "runs": times,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1,000 and 10,000 files, one run each")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.runs = "1000,10000", 1
    results = []
    with tempfile.TemporaryDirectory(prefix="memdir-first-write-") as tmp:
        for files in (int(s) for s in args.sizes.split(",")):
            results.append(run_size(files, args.runs, Path(tmp)))
    cols = ("files", "first write, journal", "first write, no observers", "check landed", "journal creation")
    cells = [
        (
            f"{r['files']:,}",
            f"{r['first_write_journal_s'] * 1e3:.0f} ms",
            f"{r['first_write_plain_s'] * 1e3:.0f} ms",
            f"{r['check_landed_s']:.2f} s",
            f"{r['journal_creation_s']:.1f} s",
        )
        for r in results
    ]
    Console().print(table(f"first write in a fresh process (median of {args.runs})", cols, cells))
    print(
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
        "(target: at most 1 s at 100,000 files)"
    )
    out = REPO / "runs" / "benchmarks" / "first_write_100k"
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {out / 'results.json'}")


if __name__ == "__main__":
    main()
