"""A landing killed at every write point: a consolidate merge (two person files into one, three
sourced facts) and the revert of that merge, each run in a real process that sends itself
SIGKILL at its Nth write (a Python audit hook counts file creations, renames, removals and
folder changes during the landing's step; memdir's code runs unchanged), for every N the
landing has, each on a fresh copy of one store. After each kill the next writer makes one tool
call, and the run counts: sourced facts (locators) of the store before that are no longer
cited, stores left neither in the old state nor in the new (half), journal steps whose snapshot
is half a landing, steps journaled as `recovered` rather than as the landing, journals behind
the files, and throwaway copies left behind. The same
campaign is the test `tests/test_crash_landing.py`.

    .venv/bin/python benchmarks/reliability/landing_kills.py [--modes consolidate,revert]
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
from tests.landing_kills import campaign

BAD = (
    "sourced facts lost",
    "half state after",
    "half-landing journal steps",
    "recovered steps",
    "journals behind the files",
    "stray scratch copies",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="consolidate,revert")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    rows = []
    for mode in args.modes.split(","):
        t = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="memdir-landing-kills-") as tmp:
            result = campaign(mode, Path(tmp))
        states = Counter(o.state for o in result.outcomes)
        rows.append(
            {
                "landing": mode,
                "write points": result.points,
                "kills": result.kills,
                "sourced facts lost": result.facts_lost,
                "old state after": states["old"],
                "new state after": states["new"],
                "half state after": states["half"],
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
