"""What index keeping costs per tool call (docs/tools.md, "Folder index keeping"), beside the study's
harness that keeps none.

Two copies of one synthetic store (`make_store`: N notes in 20 folders, a MEMORY.md in each),
each opened as the product opens it (`open_store`: index and journal). The same calls go
through a `manage` harness on each, interleaved call by call so both see the same machine load:
a create into an existing folder (one entry appended to its index), a create into a new folder
(its MEMORY.md made, the folder above listing it: the intent record, two index files and the
file), a rename to another folder (an entry out of one index and into another) and a delete
(the entry removed). Prints p50 / p90 per call kind and side, and the ratio of medians.

    python benchmarks/folder_index_keeping.py [--files 1000] [--rounds 40]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from _common import make_store, table
from rich.console import Console

from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

KINDS = ("create (folder has an index)", "create (new folder)", "rename (other folder)", "delete")


def note(name: str) -> str:
    return f"---\nname: {name}\ndescription: a benchmark note {name}\n---\n# {name}\n- a fact [S1T1]\n"


def calls(i: int) -> list[tuple[str, str, dict[str, object]]]:
    """Round `i`'s calls, one of each kind, on paths no other round uses."""
    return [
        (KINDS[0], "create", {"path": f"/memories/topic-01/bench-{i}.md", "file_text": note(f"bench-{i}")}),
        (KINDS[1], "create", {"path": f"/memories/new-{i}/deep/n.md", "file_text": note("n")}),
        (
            KINDS[2],
            "rename",
            {"old_path": f"/memories/topic-01/bench-{i}.md", "new_path": f"/memories/topic-02/bench-{i}.md"},
        ),
        (KINDS[3], "delete", {"path": f"/memories/topic-02/bench-{i}.md"}),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-index-keeping-"))
    make_store(tmp / "template", args.files)
    sides: dict[str, Harness] = {}
    for side, keep in (("study (off)", False), ("product (keep_indexes)", True)):
        root = tmp / side.split()[0]
        shutil.copytree(tmp / "template", root)
        sides[side] = Harness(open_store(root), "manage", keep_indexes=keep)
    for h in sides.values():  # the first journaled call starts the process's checks: not timed
        h.call("create", {"path": "/memories/warm.md", "file_text": note("warm")})
    samples: dict[tuple[str, str], list[float]] = {}
    for i in range(args.rounds):
        for kind, name, call_args in calls(i):
            for side, h in sides.items():
                start = time.perf_counter()
                result = h.call(name, call_args)
                samples.setdefault((side, kind), []).append((time.perf_counter() - start) * 1000)
                assert not result.is_error, result.text
    out = table(
        f"index keeping, {args.files:,} files, {args.rounds} calls of each kind (ms)",
        ["call", *(f"{s} p50 / p90" for s in sides), "ratio of p50"],
    )
    for kind in KINDS:
        cells = []
        for side in sides:
            xs = sorted(samples[(side, kind)])
            cells.append(f"{statistics.median(xs):.2f} / {xs[int(len(xs) * 0.9) - 1]:.2f}")
        off, on = (statistics.median(samples[(s, kind)]) for s in sides)
        out.add_row(kind, *cells, f"{on / off:.2f}x")
    Console().print(out)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
