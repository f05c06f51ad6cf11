"""What one sync costs: a 1,000-file store, 10 changed files on each side (docs/sync.md).

Store A is a synthetic store (`make_store`: 1,000 notes in 20 folders, each note a few fact
lines), pushed to a bare git remote in a temp folder and cloned as store B. Then, per round,
10 notes are changed on each side through the file tools (a fact line added to each) and the
three syncs that bring both to the same files are timed: A (sends its 10), B (merges A's 10
with its own 10 and sends the result), A (takes B's). In `disjoint` rounds the two sides
change different notes (each merge is per file); in `same` rounds they change the same 10
notes (each of them merged line by line). Rounds alternate; the table shows the median and the
worst over the rounds, in seconds, for `sync(root)` called in process (what `memdir sync`
costs past Python's start), and once the CLI in its own process for B's merge. The first push
and the clone are timed once. Writes results.json under runs/benchmarks/sync_cost/.

    python benchmarks/sync_cost.py [--files 1000] [--changed 10] [--rounds 6] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, make_store, table, write_json
from rich.console import Console

from memdir.sync import clone, sync
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store, release_store

BODY = "- a note's first fact [S1T1]\n- a note's second fact [S1T2]\n"


def _change(root: Path, notes: list[str], who: str, n: int) -> None:
    store = open_store(root)
    try:
        h = Harness(store, "manage")
        for k, note in enumerate(notes):
            line = f"- {who} learned fact {n}.{k} [S{100 + n}T{k + 1}]"
            result = h.call("str_replace", {"path": note, "old_str": "# Note", "new_str": f"# Note\n{line}"})
            assert not result.is_error, result.text
    finally:
        release_store(store)


def _timed(root: Path) -> float:
    t = time.perf_counter()
    sync(root)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--changed", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--quick", action="store_true", help="100 files, 2 rounds")
    args = ap.parse_args()
    if args.quick:
        args.files, args.rounds = 100, 2
    out = REPO / "runs" / "benchmarks" / "sync_cost"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memdir-sync-") as tmp:
        a, b, remote = Path(tmp) / "a", Path(tmp) / "b", str(Path(tmp) / "remote.git")
        make_store(a, args.files, body=BODY)
        subprocess.run(["git", "init", "--quiet", "--bare", remote], check=True)
        t = time.perf_counter()
        sync(a, remote)
        first_push = time.perf_counter() - t
        t = time.perf_counter()
        clone(remote, b)
        cloned = time.perf_counter() - t
        notes = sorted(str(p.relative_to(a)) for p in a.rglob("note-*.md"))
        rows: dict[str, dict[str, list[float]]] = {}
        for r in range(args.rounds):
            shape = "disjoint" if r % 2 == 0 else "same"
            pick = notes[r * 2 * args.changed :][: 2 * args.changed]
            mine = pick[: args.changed]
            theirs = mine if shape == "same" else pick[args.changed :]
            _change(a, [f"/memories/{p}" for p in mine], "a", r)
            _change(b, [f"/memories/{p}" for p in theirs], "b", r)
            got = rows.setdefault(shape, {"A sends": [], "B merges": [], "A takes": []})
            got["A sends"].append(_timed(a))
            got["B merges"].append(_timed(b))
            got["A takes"].append(_timed(a))
            assert sorted(p.read_bytes() for p in a.rglob("*.md")) == sorted(
                p.read_bytes() for p in b.rglob("*.md")
            )
        _change(a, [f"/memories/{p}" for p in notes[-args.changed :]], "a", 99)
        _change(b, [f"/memories/{p}" for p in notes[-2 * args.changed : -args.changed]], "b", 99)
        sync(a)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memdir", "sync", str(b)], check=True, capture_output=True)
        cli = time.perf_counter() - t
    record = {
        "files": args.files,
        "changed_each_side": args.changed,
        "rounds": args.rounds,
        "first_push_s": round(first_push, 3),
        "clone_s": round(cloned, 3),
        "cli_merge_s": round(cli, 3),
        "syncs": {
            shape: {
                step: {"median_s": round(statistics.median(v), 3), "max_s": round(max(v), 3)}
                for step, v in got.items()
            }
            for shape, got in rows.items()
        },
    }
    write_json(out / "results.json", record)
    Console().print(
        table(
            f"sync cost: {args.files} files, {args.changed} changed each side (seconds)",
            ["rounds", "sync", "median", "max"],
            [
                [shape, step, f"{s['median_s']:.3f}", f"{s['max_s']:.3f}"]
                for shape, steps in record["syncs"].items()
                for step, s in steps.items()
            ]
            + [
                ["once", "first push", f"{first_push:.3f}", ""],
                ["once", "clone", f"{cloned:.3f}", ""],
                ["once", "CLI merge (own process)", f"{cli:.3f}", ""],
            ],
        )
    )
    print(f"1-min load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
