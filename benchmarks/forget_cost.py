"""What `forget` costs on a long journal: one line present in many versions, 10,000 steps.

The journal is built through the real write path: a `Harness` over `open_store` (index and
journal observers, the committer process), `--steps` insert calls in rotation over `--files`
notes in 5 folders; one note (`people/alice.md`) holds the line from the first step on and gets
every `--files`-th insert, so the line is in every version of that note and every commit's tree
reaches it: the rewrite makes every commit again (the worst case for a line that stays). The
search index is built once before the forget, so its rebuild is in the figure.

Timed: the dry run (`tools.forget.run(dry_run=True)`: the live files, a scan of every version,
the state folder), then the forget itself (live edit, history rewrite, git gc --prune=now, index
rebuild, ledger, state sweep), each wall seconds in one process. Then checked: no object of the
journal and no file under the root holds the line, and the steps read.

    python benchmarks/forget_cost.py [--steps 10000] [--files 40] [--dir PATH]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from memdir.search.index import SearchIndex
from memdir.store.journal import Journal, stop_committer
from memdir.store.redaction import Forget
from memdir.tools.forget import run
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

LINE = "- gate code ZQXJ-4417-BLUE-HERON, told on a Tuesday"
FOLDERS = ("people", "places", "work", "health", "trips")


def note(name: str, first: str) -> str:
    return f"---\nname: {name}\ndescription: notes on {name}\n---\n# {name}\n{first}\n"


def build(root: Path, steps: int, files: int) -> float:
    """The store and its journal, `steps` writing steps; the seconds it took."""
    start = time.perf_counter()
    h = Harness(open_store(root, create=True, init=True), "manage", keep_indexes=True)
    paths = [f"/memories/{FOLDERS[i % len(FOLDERS)]}/n{i}.md" for i in range(files)]
    paths[0] = "/memories/people/alice.md"
    for i, path in enumerate(paths):
        name = path.rsplit("/", 1)[1][:-3]
        first = LINE if i == 0 else f"- fact 0 of {name}"
        h.call_or_raise("create", {"path": path, "file_text": note(name, first)})
    for i in range(steps - files):
        h.call_or_raise(
            "insert", {"path": paths[i % files], "insert_line": 5, "insert_text": f"- fact {i + 1}, step {i}"}
        )
    stop_committer()
    return time.perf_counter() - start


def count_objects(git_dir: Path) -> str:
    cmd = ["git", "--git-dir", str(git_dir), "count-objects", "-v"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    got = dict(line.split(": ", 1) for line in out.stdout.splitlines() if ": " in line)
    loose, packed, size = (got.get(k, "?") for k in ("count", "in-pack", "size-pack"))
    return f"{loose} loose, {packed} packed, {size} KiB packed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--dir", type=Path, default=None, help="Build here (default: a temp folder, removed).")
    args = ap.parse_args()
    base = args.dir or Path(tempfile.mkdtemp(prefix="memdir-forget-"))
    root = base / "mem"
    try:
        built = build(root, args.steps, args.files)
        journal = Journal(root)
        steps = len(journal.steps())
        store = open_store(root)
        SearchIndex.for_store(store).sync()  # an index to rebuild, as a searched store has
        print(f"built {steps} steps ({args.files} notes) through the write path in {built:.1f} s")
        print(f"journal before: {count_objects(journal.git_dir)}")
        t0 = time.perf_counter()
        dry = run(store, Forget(text=LINE), dry_run=True)
        t1 = time.perf_counter()
        out = run(store, Forget(text=LINE, reason="benchmark"))
        t2 = time.perf_counter()
        stop_committer()
        print(f"dry run: {t1 - t0:.2f} s ({len(dry.steps)} steps would be rewritten)")
        lines = sum(out.files.values())
        print(f"forget:  {t2 - t1:.2f} s ({len(out.steps)} steps rewritten, {lines} live line(s))")
        print(f"journal after: {count_objects(journal.git_dir)}")
        objects = subprocess.run(
            ["git", "--git-dir", str(journal.git_dir), "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
            check=True,
        ).stdout
        left = [p for p in root.rglob("*") if p.is_file() and LINE.encode() in p.read_bytes()]
        assert LINE.encode() not in objects and not left, "the line is still there"
        assert len(journal.steps()) == steps + 1
        print("checked: no journal object and no file under the root holds the line; history reads")
    finally:
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
