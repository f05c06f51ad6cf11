"""Every landing killed at every write point: a consolidate merge (two person files into one,
three sourced facts), the revert of that merge, the revert of the merge's operation (a later
operation on another file kept), an adopt --rename of a folder of notes (300 by default) and
the revert of that adoption (each renamed note moved back, then rewritten),
each run in a real process that sends itself SIGKILL at its Nth write (a Python audit hook
counts file creations, renames, removals and folder changes during the landing's step;
memdir's code runs unchanged), for every N the landing has, each on a fresh copy of one store.
After each kill it counts, first, the facts the landing keeps that the files on disk lack (what
an editor sees before any memdir process runs); then, before any write, what three readers
miss, each through a store of its own (BM25 search and view through the tools, `check` over a
bare store; whichever opens first finishes the landing); then, after the next writer's one
tool call: sourced facts of the store before no longer cited, stores left neither in the old
state nor in the new (half), journal steps whose snapshot is half a landing, steps journaled
as `recovered` rather than as the landing, journals behind the files, and throwaway copies left
behind. The same campaign, on small stores, is the test `tests/store/test_crash_landing.py`.

    .venv/bin/python benchmarks/reliability/landing_kills.py [--modes consolidate,revert] [--notes 300]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common  # noqa: F401  (puts src/ and the checkout on sys.path)
from tests.landing_kills import MODES, READERS, campaign

BAD = (
    "facts lost",
    "facts absent on disk",
    "half state after",
    "half-landing journal steps",
    "recovered steps",
    "journals behind the files",
    "stray scratch copies",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--notes", type=int, default=300, help="notes in adopt-rename's folder")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    ap.add_argument(
        "--tmp",
        type=Path,
        default=Path("/dev/shm") if Path("/dev/shm").is_dir() else None,
        help="where the stores are copied (default: memory-backed where there is one: a kill "
        "stops the process, not the disk, so fsync's cost says nothing here)",
    )
    args = ap.parse_args()
    rows = []
    for mode in args.modes.split(","):
        t = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="memdir-landing-kills-", dir=args.tmp) as tmp:
            result = campaign(mode, Path(tmp), notes=args.notes)
        states = Counter(o.state for o in result.outcomes)
        rows.append(
            {
                "landing": mode + (f" ({args.notes} notes)" if mode.endswith("adopt-rename") else ""),
                "write points": result.points,
                "kills": result.kills,
                "facts lost": result.facts_lost,
                "facts absent on disk": result.absent_on_disk,
                **{
                    f"missed by {r}": sum(len(o.readers_lost.get(r, ())) for o in result.outcomes)
                    for r in READERS
                },
                "old state after": states["old"],
                "new state after": states["new"],
                "half state after": states["half"] + sum(o.read_state == "half" for o in result.outcomes),
                "half-landing journal steps": sum(len(o.half_steps) for o in result.outcomes),
                "recovered steps": sum(o.tools.count("recovered") for o in result.outcomes),
                "journals behind the files": sum(o.journal_behind for o in result.outcomes),
                "stray scratch copies": sum(len(o.stray_copies) for o in result.outcomes),
                "seconds": round(time.monotonic() - t, 1),
            }
        )
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "landing_kills.json").write_text(json.dumps(rows, indent=2) + "\n")
    bad = [r["landing"] for r in rows if r["kills"] != r["write points"] or any(r[k] for k in BAD)]
    if bad:
        print(f"FAILED: {', '.join(bad)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
