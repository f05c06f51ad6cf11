"""An editor's save made while `memdir adopt` lands: kept or lost
(benchmarks/results/2026-12-06-reliability.md, "Fourth round", item 2).

Each trial makes a folder of --notes plain markdown notes and runs `memdir adopt` on it as a
process. As soon as the landing has put its first note in place (`n000.md` opens with
frontmatter), an editor saves the middle note the way editors do (a new file renamed over it),
adding a marked line. The save is kept when, once adopt is done, the note holds that line.

    .venv/bin/python benchmarks/reliability/adopt_saves.py --trials 5

It fails (exit 1) when any save was lost or adopt failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAIN = "import sys; from memdir.cli.main import main; sys.argv[0] = 'memdir'; main()"


def trial(i: int, notes: int) -> dict[str, object]:
    root = Path(tempfile.mkdtemp()) / "notes"
    root.mkdir()
    for n in range(notes):
        (root / f"n{n:03d}.md").write_text(f"# Note {n}\n\nline of note {n}\n", encoding="utf-8")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "adopt", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    first, note = root / "n000.md", root / f"n{notes // 2:03d}.md"
    while not first.read_text(encoding="utf-8").startswith("---") and proc.poll() is None:
        time.sleep(0.001)
    saved_at = time.perf_counter() - start
    marker = f"SAVED IN TRIAL {i}"
    swap = note.with_name(f".{note.name}.swp")
    swap.write_text(note.read_text(encoding="utf-8") + marker + "\n", encoding="utf-8")
    os.replace(swap, note)
    out, err = proc.communicate()
    return {
        "trial": i,
        "saved_at_s": round(saved_at, 2),
        "adopt_s": round(time.perf_counter() - start, 2),
        "exit": proc.returncode,
        "kept": marker in note.read_text(encoding="utf-8"),
        "listed": f"planned again: /memories/{note.name}" in out.decode(),
        "error": err.decode()[-300:] if proc.returncode else "",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--notes", type=int, default=600)
    ap.add_argument("--out", default="runs/reliability/adopt_saves.json")
    args = ap.parse_args()
    rows = []
    for i in range(args.trials):
        rows.append(trial(i, args.notes))
        print(json.dumps(rows[-1]), flush=True)
    kept = sum(bool(r["kept"]) for r in rows)
    failed = sum(r["exit"] != 0 for r in rows)
    print(
        f"{args.notes} notes, {args.trials} saves during the landing: {kept} kept, {args.trials - kept} lost"
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"notes": args.notes, "trials": rows}, indent=1))
    return 0 if kept == args.trials and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
