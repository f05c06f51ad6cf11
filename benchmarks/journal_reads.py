"""The journal's readers, the working tree's against a baseline commit's, on one store: the
steps (as the history page reads them), the steps with their changed blobs (as `memdir growth`
replays them), the files at the newest step, those files' contents, a small file at a step
(the first chunk the past-file page reads) and a step's patch.

The readers moved from the git CLI to libgit2 (issue 35, item 3); `--baseline REV` (its `src/`
extracted by `git archive`) times the CLI readers in the same run on the same store. Each
reader runs in a child process of its own code, `--reps` times, median and p90 printed.

    python benchmarks/journal_reads.py [--steps 1100] [--reps 15] [--baseline 5359bb5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO, baseline_tree, table

CHILD = r"""
import json, statistics, sys, time
from pathlib import Path
from memdir.store.journal import Journal

journal, reps = Journal(Path(sys.argv[1])), int(sys.argv[2])
head = journal.head()
last = journal.steps()[-1].commit
files = journal.files_at(head)
small = files[sorted(files)[0]]
shas = sorted(set(files.values()))
patch = getattr(journal, "patch", None) or (
    lambda c: journal.git("show", "--format=", "--no-color", "--no-ext-diff", "--find-renames", c)
)
readers = {
    "steps": lambda: journal.steps(),
    "steps with changed blobs": lambda: journal.steps(raw=True),
    "files at the head": lambda: journal.files_at(head),
    "the head's file contents": lambda: sum(len(d) for _, d in journal.blobs(shas)),
    "a small file at a step": lambda: next(iter(journal.blob_chunks(small))),
    "a step's patch": lambda: patch(last),
}
out = {}
for name, read in readers.items():
    took = []
    for _ in range(reps):
        start = time.perf_counter()
        read()
        took.append((time.perf_counter() - start) * 1000)
    took.sort()
    out[name] = (statistics.median(took), took[min(len(took) - 1, round(0.9 * (len(took) - 1)))])
print(json.dumps(out))
"""


def build(root: Path, steps: int) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from memdir.api.memory import Memory

    with Memory(root) as mem:
        for n in range(steps):
            text = f"---\nname: n{n:04d}\ndescription: note {n}\n---\n# Note {n}\n\n- fact {n}\n"
            done = mem.call("create", {"path": f"/memories/f{n % 20:02d}/n{n:04d}.md", "file_text": text})
            if done.is_error:
                raise RuntimeError(f"building the store: {done.text}")


def run(src: Path, root: Path, reps: int) -> dict[str, list[float]]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src), "HOME": str(root.parent)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(reps)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, list[float]] = json.loads(done.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=1_100, help="create steps (one chat's ingest makes ~1,100)")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--baseline", default="5359bb5", help="the commit whose readers drive the git CLI")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-journal-reads-"))
    try:
        root = tmp / "mem"
        build(root, args.steps)
        (tmp / "base").mkdir()
        base = baseline_tree(args.baseline, tmp / "base")
        now = run(REPO / "src", root, args.reps)
        then = run(base, root, args.reps)
        rows = [
            (name, f"{then[name][0]:.1f} / {then[name][1]:.1f}", f"{now[name][0]:.1f} / {now[name][1]:.1f}")
            for name in now
        ]
        from rich.console import Console

        title = f"journal reads, {args.steps:,} steps (+ baseline), ms median / p90"
        Console().print(table(title, ("read", f"git CLI ({args.baseline})", "libgit2 (working tree)"), rows))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
