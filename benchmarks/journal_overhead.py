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
index (store/index.py `defer`); the search after the run pays one tantivy commit for all of
them, so that search is timed too, beside a search with nothing to catch up. Writes
results.json under runs/benchmarks/journal_overhead/.

    python benchmarks/journal_overhead.py [--sizes 1000,50000] [--calls 200] [--quick]

Why a group commit: a step's commit writes four or more git objects, each a new file, and a
new file cost ~0.2 ms here (measured beside a Python loose-object writer: the same), so the
commit in the call cost ~1-2.5 ms of the 3 ms budget at 1,000 files. A step now appends one
record to the step log before its call returns (`store/journal_log.py`: acknowledged means
logged) and the committer's thread commits it just after (`store/journal_queue.py`); pygit2
lets go of the GIL while it writes, so on 2 cores the commits run beside the next call. A
writer killed with records logged leaves them to the next writer, which commits each as its
own step (tests/test_crash.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, make_store, table
from rich.console import Console

from memdir.store.index import SearchIndex
from memdir.store.journal import Journal, JournalObserver
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


def run_size(files: int, n_calls: int, tmp: Path) -> dict[str, Any]:
    roots = {side: tmp / f"{files}-{side}" for side in SIDES}
    t0 = time.perf_counter()
    make_store(roots["plain"], files, body="text " * 150 + "\n")
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
    settle(stores["index+journal"])
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
        "search_catching_up_ms": catch_up * 1e3,
        "search_after_ms": idle_search * 1e3,
        "steps": len(steps),
        "recovered_steps": sum(s.tool == "recovered" for s in steps),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,50000", help="store sizes in files, comma-separated")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="1,000 files, 40 calls")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.calls = "1000", 40
    out = REPO / "runs" / "benchmarks" / "journal_overhead"
    out.mkdir(parents=True, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="memdir-journal-") as tmp:
        for files in (int(s) for s in args.sizes.split(",")):
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
            f"{r['files']:,} files: {r['steps']} journal steps ({r['recovered_steps']} recovered); "
            f"setup {r['setup_s']:.0f} s, warm-up {r['warmup_s'] * 1e3:.0f} ms; the search after the "
            f"{r['calls']} writes (one index commit for all) {r['search_catching_up_ms']:.1f} ms, "
            f"the next {r['search_after_ms']:.1f} ms"
        )
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs (p50 targets: 3 ms at 1,000, 5 ms at 50,000)")
    (out / "results.json").write_text(json.dumps({"results": results, "load_avg_1m": load}, indent=1) + "\n")
    print(f"wrote {out / 'results.json'}")


if __name__ == "__main__":
    main()
