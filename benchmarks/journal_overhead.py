"""What the journal costs per tool call, at 1,000 and 50,000 files, beside a store without it.

For each size, three copies of one synthetic store (`make_store`: N notes in 20 folders):
  * plain: a bare `Store`, no observers (the floor: the file write and its fsyncs);
  * journal: `open_store(index=False)`, the journal alone;
  * index+journal: `open_store()`, the BM25 index built first so every step notes its paths
    for it, and the journal: the target's configuration.
The same writing calls (create, str_replace, insert, rename, in rotation) go through a
`Harness` on each, interleaved call by call so all three see the same machine load. The first
journaled call (which starts the process's whole-tree check, on its own thread at 50,000
files) is left out, and measuring starts once that check has landed; the periodic checks every
FULL_EVERY steps fall inside the run, as they would in service. Prints p50 / p90 / p99 per side
and the time spent inside the journal's observer hooks per call (timed around them, so it does
not include the machine's noise in the rest of the call). A step only notes its paths for the
index (search/index.py `defer`); the search after the run pays one tantivy commit for all of
them, so that search is timed too, beside a search with nothing to catch up. Writes
results.json under runs/benchmarks/journal_overhead/.

    python benchmarks/journal_overhead.py [--sizes 1000,50000] [--calls 200] [--quick]
    python benchmarks/journal_overhead.py --sizes 1000 --baseline COMMIT [--repeat 3]

With `--baseline`, each size runs in child processes by that commit's code and by the working
tree's, alternating, on copies of one fixture, and the table shows both (the median over the
rounds); results go to baseline.json.

Why a group commit: a step's commit writes four or more git objects, each a new file, and a
new file cost ~0.2 ms here (measured beside a Python loose-object writer: the same), so the
commit in the call cost ~1-2.5 ms of the 3 ms budget at 1,000 files. A step now appends one
record to the step log before its call returns (`store/journal/log.py`: acknowledged means
logged) and a committer process commits it just after (`store/journal/commitd.py`). A thread
did not work: it took the GIL back at each of the writer's small system calls and made a plain
write in the same process 3x slower; the process runs on the other core. A
writer killed with records logged leaves them to the next writer, which commits each as its
own step (tests/store/test_crash.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, baseline_tree, make_store, table
from rich.console import Console

if "--child" in sys.argv:  # a child of --baseline: the memdir of $PYTHONPATH, not the checkout's
    sys.path[:] = [os.environ["PYTHONPATH"]] + [p for p in sys.path if p != str(REPO / "src")]

from memdir.search.index import SearchIndex
from memdir.store.journal import Journal

try:
    from memdir.store.journal import JournalObserver
except ImportError:  # a --baseline child running a commit from before the journal's subpackage
    from memdir.store.journal_observer import JournalObserver  # type: ignore[no-redef]
from memdir.store.store import Step, Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

SIDES = ("plain", "journal", "index+journal")


def calls(n: int) -> list[tuple[str, dict[str, Any]]]:
    seq: list[tuple[str, dict[str, Any]]] = []
    for i in range(n):
        stem = f"item-{i // 4:04d}"
        path = f"/memories/new/{stem}.md"
        kind = i % 4
        if kind == 0:
            text = f"---\nname: {stem}\ndescription: item\n---\n# Item\nfact [S{i}T1]\n"
            seq.append(("create", {"path": path, "file_text": text}))
        elif kind == 1:
            seq.append(("str_replace", {"path": path, "old_str": "fact", "new_str": "a fact"}))
        elif kind == 2:
            seq.append(("insert", {"path": path, "insert_line": 6, "insert_text": f"- more [S{i}T2]"}))
        else:
            seq.append(("rename", {"old_path": path, "new_path": f"/memories/moved/{stem}.md"}))
    return seq


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1e3


class Timed:
    """The journal observer of a store, with the time spent in its hooks added up."""

    def __init__(self, inner: JournalObserver) -> None:
        self.inner = inner
        self.spent = 0.0

    @classmethod
    def around(cls, store: Store) -> Timed:
        k = next(i for i, o in enumerate(store.observers) if isinstance(o, JournalObserver))
        obs = store.observers[k]
        assert isinstance(obs, JournalObserver)
        timed = cls(obs)
        store.observers[k] = timed
        return timed

    def _time(self, hook: str, store: Store, step: Step) -> None:
        s0 = time.perf_counter()
        getattr(self.inner, hook)(store, step)
        self.spent += time.perf_counter() - s0

    def before_step(self, store: Store, step: Step) -> None:
        self._time("before_step", store, step)

    def on_step(self, store: Store, step: Step) -> None:
        self._time("on_step", store, step)

    def after_step(self, store: Store, step: Step) -> None:
        self._time("after_step", store, step)


def settle(store: Store) -> None:
    for obs in store.observers:
        inner = obs.inner if isinstance(obs, Timed) else obs
        if isinstance(inner, JournalObserver):
            inner.settled()


def fixture(root: Path, files: int) -> None:
    make_store(root, files, body="text " * 150 + "\n")


def run_size(files: int, n_calls: int, tmp: Path, source: Path | None = None) -> dict[str, Any]:
    """One size, the three sides interleaved; the stores are copies of `source` when given."""
    roots = {side: tmp / f"{files}-{side}" for side in SIDES}
    t0 = time.perf_counter()
    if source is None:
        fixture(roots["plain"], files)
    else:
        shutil.copytree(source, roots["plain"])
    for side in SIDES[1:]:
        shutil.copytree(roots["plain"], roots[side])
    SearchIndex.for_store(open_store(roots["index+journal"], journal=False)).sync()
    setup = time.perf_counter() - t0
    stores = {
        "plain": Store(roots["plain"]),
        "journal": open_store(roots["journal"], index=False),
        "index+journal": open_store(roots["index+journal"]),
    }
    hooks = Timed.around(stores["index+journal"])
    harness = {side: Harness(st, "manage", role="bench") for side, st in stores.items()}
    seq = calls(n_calls + 4)
    t0 = time.perf_counter()
    for tool, a in seq[:4]:  # warm-up: the journal's baseline, the first check of the process
        for side in SIDES:
            assert not harness[side].call(tool, a).is_error
    first = time.perf_counter() - t0
    settle(stores["index+journal"])
    wall: dict[str, list[float]] = {side: [] for side in SIDES}
    inside: list[float] = []
    for n, (tool, a) in enumerate(seq[4:]):
        for side in SIDES:
            hooks.spent = 0.0
            s0 = time.perf_counter()
            res = harness[side].call(tool, a, chunk=n)
            wall[side].append(time.perf_counter() - s0)
            if side == "index+journal":
                inside.append(hooks.spent)
            assert not res.is_error, res.text
    s0 = time.perf_counter()
    settle(stores["index+journal"])  # the commits still queued when the last call returned
    drain = time.perf_counter() - s0
    index = SearchIndex.for_store(stores["index+journal"])
    s0 = time.perf_counter()
    caught_up = index.search("fact item")
    catch_up = time.perf_counter() - s0
    s0 = time.perf_counter()
    assert index.search("fact item") == caught_up
    idle_search = time.perf_counter() - s0
    assert any(h.path.startswith("/memories/moved/") for h in caught_up), "the writes are not indexed"
    journal = Journal(roots["index+journal"])
    steps = journal.steps()
    assert [s.tool for s in steps[-n_calls:]] == [t for t, _ in seq[4:]], "a step is missing"
    return {
        "files": files,
        "calls": n_calls,
        "setup_s": setup,
        "warmup_s": first,
        "sides": {
            side: {"p50_ms": pct(v, 0.5), "p90_ms": pct(v, 0.9), "p99_ms": pct(v, 0.99)}
            for side, v in wall.items()
        },
        "journal_hooks": {"p50_ms": pct(inside, 0.5), "p99_ms": pct(inside, 0.99)},
        "drain_after_last_call_ms": drain * 1e3,
        "search_catching_up_ms": catch_up * 1e3,
        "search_after_ms": idle_search * 1e3,
        "steps": len(steps),
        "recovered_steps": sum(s.tool == "recovered" for s in steps),
    }


def child(job: dict[str, Any]) -> None:
    """A run of one size by the memdir on PYTHONPATH (the baseline's or the working tree's)."""
    import memdir

    with tempfile.TemporaryDirectory(prefix="memdir-journal-") as tmp:
        row = run_size(job["files"], job["calls"], Path(tmp), Path(job["source"]))
    row["memdir"] = str(Path(memdir.__file__).resolve().parents[1])
    print(json.dumps(row))


def side_by_side(sizes: list[int], n_calls: int, rev: str, repeat: int) -> list[dict[str, Any]]:
    """Each size run by `rev`'s code and the working tree's in child processes, alternating
    `repeat` times on copies of one fixture; the median of each figure over the rounds."""
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memdir-journal-base-") as tmp:
        codes = {"baseline": baseline_tree(rev, Path(tmp)), "now": REPO / "src"}
        for files in sizes:
            source = Path(tmp) / f"fixture-{files}"
            fixture(source, files)
            job = json.dumps({"files": files, "calls": n_calls, "source": str(source)})
            got: dict[str, list[dict[str, Any]]] = {"baseline": [], "now": []}
            for i in range(repeat):
                order = list(codes.items()) if i % 2 == 0 else list(codes.items())[::-1]
                for label, src in order:
                    env = {**os.environ, "PYTHONPATH": str(src)}
                    proc = subprocess.run(
                        [sys.executable, __file__, "--child", job], env=env, capture_output=True, check=True
                    )
                    row = json.loads(proc.stdout.decode().strip().split("\n")[-1])
                    assert row["memdir"] == str(src.resolve()), f"ran {row['memdir']}, not {src}"
                    got[label].append(row)
            out.append({"files": files, "rounds": got})
    return out


def median_of(rows: list[dict[str, Any]], *keys: str) -> float:
    def pick(r: dict[str, Any]) -> float:
        v: Any = r
        for k in keys:
            v = v[k]
        return float(v)

    return statistics.median(pick(r) for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,50000", help="store sizes in files, comma-separated")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="1,000 files, 40 calls")
    ap.add_argument("--baseline", help="also run this commit's code, alternating, in child processes")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each code with --baseline")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    if args.quick:
        args.sizes, args.calls = "1000", 40
    sizes = [int(s) for s in args.sizes.split(",")]
    out = REPO / "runs" / "benchmarks" / "journal_overhead"
    out.mkdir(parents=True, exist_ok=True)
    if args.baseline:
        compare(sizes, args, out)
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="memdir-journal-") as tmp:
        for files in sizes:
            results.append(run_size(files, args.calls, Path(tmp)))
            shutil.rmtree(tmp, ignore_errors=True)
            Path(tmp).mkdir(exist_ok=True)
    load = os.getloadavg()[0]
    cols = ("files", "side", "p50 ms", "p90 ms", "p99 ms")
    cells = []
    for r in results:
        for side in SIDES:
            s = r["sides"][side]
            cells.append(
                (f"{r['files']:,}", side, f"{s['p50_ms']:.2f}", f"{s['p90_ms']:.2f}", f"{s['p99_ms']:.2f}")
            )
        jh = r["journal_hooks"]
        cells.append(("", "in the journal's hooks", f"{jh['p50_ms']:.2f}", "", f"{jh['p99_ms']:.2f}"))
    title = f"ms per writing tool call ({args.calls} calls per side, interleaved)"
    Console().print(table(title, cols, cells))
    for r in results:
        print(
            f"{r['files']:,} files: {r['steps']} journal steps ({r['recovered_steps']} recovered), the last "
            f"committed {r['drain_after_last_call_ms']:.1f} ms after its call returned; "
            f"setup {r['setup_s']:.0f} s, warm-up {r['warmup_s'] * 1e3:.0f} ms; the search after the "
            f"{r['calls']} writes (one index commit for all) {r['search_catching_up_ms']:.1f} ms, "
            f"the next {r['search_after_ms']:.1f} ms"
        )
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs (p50 targets: 3 ms at 1,000, 5 ms at 50,000)")
    (out / "results.json").write_text(json.dumps({"results": results, "load_avg_1m": load}, indent=1) + "\n")
    print(f"wrote {out / 'results.json'}")


def compare(sizes: list[int], args: argparse.Namespace, out: Path) -> None:
    runs = side_by_side(sizes, args.calls, args.baseline, args.repeat)
    load = os.getloadavg()[0]
    cols = ("files", "side", "p50 ms", "p90 ms", "p99 ms")
    cells = []
    for r in runs:
        base, now = r["rounds"]["baseline"], r["rounds"]["now"]
        for side in SIDES:
            cells.append(
                (
                    f"{r['files']:,}",
                    side,
                    *(
                        f"{median_of(base, 'sides', side, q):.2f} -> {median_of(now, 'sides', side, q):.2f}"
                        for q in ("p50_ms", "p90_ms", "p99_ms")
                    ),
                )
            )
        hooks = [f"{median_of(x, 'journal_hooks', 'p50_ms'):.2f}" for x in (base, now)]
        cells.append(("", "in the journal's hooks", " -> ".join(hooks), "", ""))
    title = (
        f"ms per writing tool call, baseline {args.baseline} -> working tree "
        f"(median of {args.repeat} alternating rounds, {args.calls} calls per side)"
    )
    Console().print(table(title, cols, cells))
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs (p50 targets: 3 ms at 1,000, 5 ms at 50,000)")
    path = out / "baseline.json"
    path.write_text(
        json.dumps({"baseline": args.baseline, "runs": runs, "load_avg_1m": load}, indent=1) + "\n"
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
