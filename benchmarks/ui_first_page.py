"""`memdir ui` on a 10,000-file store: how long the first page (the tree at the root, with the
core-memory gauge) takes, against the same page of a 200-file store measured in the same run.

Each store is served by the real `memdir ui` process. Per store: the first page request after
the server starts (cold: the store not opened yet), then the median of repeated requests, over
one HTTP connection;
and, where Debian's chromium exists, the browser's own time from navigation to the load event
(the page rendered, its script run). Target (issue 17): under 1 s for 10,000 files.

    python benchmarks/ui_first_page.py [--files 10000] [--reps 20] [--out runs/bench-ui] [--quick]

`--bounds` measures instead the three pages issue 33 (defect 9) found unbounded, each on a fresh
server: the start page of a store whose root holds one 12 MB markdown file (core memory), the
page of a 60 MB file, and a 20,000-entry folder's page; and the three its follow-up paged: an
operation of 1,100 steps, a 60 MB file at a past step, a 50 MB answers.jsonl; per page, the
time of one request, the page's size, and the server's peak resident memory (VmHWM) and its
growth over the request.
`--baseline REV` serves the same stores with that commit's code too (its `src/`, extracted by
`git archive`), so the before and after figures come from one run on one machine.

    python benchmarks/ui_first_page.py --bounds [--baseline REV]

`--journal-scale` times the history's journal read (one `git log`, parsed and grouped into
operations) at 550, 1,100 and 2,200 steps of one operation: linear if its time per step holds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import REPO, baseline_tree, build_store, env, stats_ms, table, timed, write_json

TARGET_S = 1.0
OP_STEPS = 1_100  # one chat's ingest (store/operations.py)
ANSWERS_MB = 50


def start(root: Path, src: Path | None = None, runs: bool = False) -> tuple[subprocess.Popen[bytes], str]:
    """`memdir ui ROOT` (`--runs ROOT` with `runs`) by the code in `src` (the working tree's by
    default)."""
    code = {} if src is None else {"PYTHONPATH": str(src)}
    where = ["--runs", str(root)] if runs else [str(root)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", *where, "--port", "0"],
        env={**env(), "PYTHONUNBUFFERED": "1", **code},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"memdir ui did not print its URL (got {line!r})")
    return proc, line.rstrip("/")


def browser_ms(url: str, reps: int) -> list[float] | None:
    """Navigation to load event, in the browser's own clock; None without chromium."""
    sys.path.insert(0, str(REPO / "tests"))
    from ui_helpers import Browser, chrome_missing

    if chrome_missing() is not None:
        return None
    b = Browser()
    try:
        out: list[float] = []
        for _ in range(reps):
            b.driver.get(url)
            t = b.driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0];"
                " return n.loadEventEnd - n.startTime;"
            )
            out.append(float(t) / 1000)
        return out
    finally:
        b.close()


def measure(root: Path, reps: int) -> dict[str, Any]:
    import httpx

    proc, base = start(root)
    try:
        # One client, its connection opened on a static file first: the figures are the
        # server's, not the client's setup (a fresh httpx client costs ~100 ms here).
        client = httpx.Client(timeout=120)
        client.get(base + "/static/ui.css").raise_for_status()
        page = base + "/s/store/tree"
        cold, first = timed(lambda: client.get(page))
        assert first.status_code == 200 and "always loaded" in first.text
        warm = [timed(lambda: client.get(page))[0] for _ in range(reps)]
        folder = base + "/s/store/children?path=/memories/people"
        expand = [timed(lambda: client.get(folder))[0] for _ in range(reps)]
        client.close()
        shown = browser_ms(page, max(3, reps // 4))
        return {
            "cold_s": cold,
            "warm": stats_ms(warm),
            "expand_folder": stats_ms(expand),
            "browser": stats_ms(shown) if shown else None,
            "bytes": len(first.content),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def status_kb(pid: int, field: str) -> int:
    """A memory figure of /proc/PID/status (VmRSS, VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def bounds_stores(tmp: Path) -> dict[str, tuple[Path, str]]:
    """The three stores of `--bounds` and the page of each that is measured."""
    out: dict[str, tuple[Path, str]] = {}
    fact = "- Alice | lives in: Lisbon (since 2024-02-01) [S12T3]\n"
    core = tmp / "core12"
    core.mkdir()
    (core / "MEMORY.md").write_text(
        "---\ndescription: Root index; core memory.\n---\n# Memory\n\n" + fact * (12_000_000 // len(fact))
    )
    out["12 MB root file: start page"] = (core, "/s/store/tree")
    big = tmp / "file60"
    (big / "notes").mkdir(parents=True)
    (big / "MEMORY.md").write_text("---\ndescription: Root index.\n---\n# Memory\n")
    (big / "notes" / "big.md").write_text(
        "---\nname: big\ndescription: A 60 MB note.\n---\n# Big\n\n" + fact * (60_000_000 // len(fact))
    )
    out["60 MB file: its page"] = (big, "/s/store/file?path=/memories/notes/big.md")
    wide = tmp / "wide20k"
    (wide / "wide").mkdir(parents=True)
    (wide / "MEMORY.md").write_text("---\ndescription: Root index.\n---\n# Memory\n")
    for i in range(20_000):
        (wide / "wide" / f"n{i:05d}.md").write_text(
            f"---\nname: n{i:05d}\ndescription: Note {i} of a folder far over the fanout cap\n---\n# {i}\n"
        )
    out["20,000-entry folder: its page"] = (wide, "/s/store/tree?path=/memories/wide")
    out.update(paging_stores(tmp, fact))
    return out


def paging_stores(tmp: Path, fact: str) -> dict[str, tuple[Path, str]]:
    """The pages the follow-ups of issues 33 and 34 paged: one operation of OP_STEPS steps (one
    chat's ingest), a 60 MB file at a past step (the baseline), a run's ANSWERS_MB answers.jsonl.
    A run's page is served with --runs."""
    sys.path.insert(0, str(REPO / "src"))
    from memdir.api.memory import Memory
    from memdir.store import operations
    from memdir.store.journal import Journal, group

    hist = tmp / "history"
    (hist / "notes").mkdir(parents=True)
    (hist / "notes" / "big.md").write_text(
        "---\nname: big\ndescription: A 60 MB note.\n---\n# Big\n\n" + fact * (60_000_000 // len(fact))
    )
    with Memory(hist) as mem, operations.operation(hist, "ingest", "ingest chat.jsonl"):
        for i in range(OP_STEPS):
            text = f"---\nname: n{i:04d}\ndescription: note {i}\n---\n# Note {i}\n\n{fact}"
            done = mem.call("create", {"path": f"/memories/chat/n{i:04d}.md", "file_text": text})
            if done.is_error:
                raise RuntimeError(f"building the history store: {done.text}")
    (op,) = [g.id for g in group(Journal(hist).steps()) if g.operation.kind == "ingest"]
    runs = tmp / "runs"
    (runs / "study").mkdir(parents=True)
    (runs / "study" / "manifest.json").write_text('{"benchmark": "locomo", "variants": ["dump"]}')
    row = json.dumps(
        {
            "benchmark": "locomo",
            "conversation": "conv-26",
            "variant": "dump",
            "question": "q " * 150,
            "f1": 0.5,
        }
    )
    with (runs / "study" / "answers.jsonl").open("w") as f:
        for _ in range(ANSWERS_MB * 1_000_000 // (len(row) + 1)):
            f.write(row + "\n")
    return {
        f"{OP_STEPS:,}-step operation: its history page": (hist, f"/s/store/history?operation={op}"),
        "60 MB file at a past step: its page": (hist, "/s/store/step/0/file?path=/memories/notes/big.md"),
        f"{ANSWERS_MB} MB answers.jsonl: its page (runs)": (runs, "/run/answers?name=study"),
    }


def measure_bound(root: Path, page: str, src: Path | None) -> dict[str, Any]:
    import httpx

    proc, base = start(root, src, runs=page.startswith("/run"))
    try:
        client = httpx.Client(timeout=900)
        client.get(base + "/static/ui.css").raise_for_status()
        before = status_kb(proc.pid, "VmRSS")
        seconds, r = timed(lambda: client.get(base + page))
        r.raise_for_status()
        peak = status_kb(proc.pid, "VmHWM")
        client.close()
        return {
            "s": seconds,
            "bytes": len(r.content),
            "peak_mb": peak / 1024,
            "growth_mb": (peak - before) / 1024,
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def bounds(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-ui-bounds-"))
    try:
        codes: dict[str, Path | None] = {"now": None}
        if args.baseline:
            (tmp / "base").mkdir()
            codes = {"baseline": baseline_tree(args.baseline, tmp / "base"), **codes}
        stores = bounds_stores(tmp)
        results: dict[str, dict[str, Any]] = {}
        rows = []
        for label, (root, page) in stores.items():
            for code, src in codes.items():
                got = measure_bound(root, page, src)
                results.setdefault(label, {})[code] = got
                rows.append(
                    (
                        label,
                        code if code == "now" else f"{code} {args.baseline}",
                        f"{got['s']:.2f}",
                        f"{got['bytes'] / 1024:,.0f}",
                        f"{got['peak_mb']:,.0f}",
                        f"{got['growth_mb']:+,.0f}",
                    )
                )
        from rich.console import Console

        cols = ("page", "code", "s", "page KiB", "peak RSS MB", "RSS growth MB")
        Console().print(table("memdir ui: pages found unbounded (issue 33 and its follow-ups)", cols, rows))
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "ui_bounds.json", {"baseline": args.baseline, **results})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def journal_scale(args: argparse.Namespace) -> None:
    """The history page's journal read (one `git log`, parsed and grouped into operations) at
    550, 1,100 and 2,200 steps of one operation: its time per step holds if it is linear."""
    sys.path.insert(0, str(REPO / "src"))
    from memdir.api.memory import Memory
    from memdir.store import operations
    from memdir.store.journal import Journal, group

    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-ui-journal-"))
    root, n, rows, out = tmp / "mem", 0, [], {}
    try:
        with Memory(root) as mem, operations.operation(root, "ingest", "ingest chat.jsonl"):
            for size in (OP_STEPS // 2, OP_STEPS, OP_STEPS * 2):
                while n < size:
                    text = f"---\nname: n{n:04d}\ndescription: note {n}\n---\n# Note {n}\n\n- fact {n}\n"
                    done = mem.call("create", {"path": f"/memories/chat/n{n:04d}.md", "file_text": text})
                    if done.is_error:
                        raise RuntimeError(f"building the history store: {done.text}")
                    n += 1
                journal = Journal(root)
                journal.steps()  # the steps still in the step log land first: reading is timed
                took = [timed(lambda j=journal: group(j.steps()))[0] for _ in range(args.reps)]
                got = stats_ms(took)
                out[size] = got
                rows.append((f"{size:,}", f"{got['median_ms']:.0f}", f"{got['median_ms'] / size:.3f}"))
        from rich.console import Console

        cols = ("steps", "read + group median ms", "ms per step")
        Console().print(table("memdir ui: the history's journal read", cols, rows))
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "ui_journal_scale.json", out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--bounds",
        action="store_true",
        help="the 12 MB core file, 60 MB file, 20,000-entry folder, an operation, a past file, answers",
    )
    ap.add_argument("--baseline", help="with --bounds: also serve the stores with this commit's code")
    ap.add_argument("--journal-scale", action="store_true", help="the history's journal read at 3 sizes")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--baseline-files", type=int, default=200)  # the generator needs 172+
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "bench-ui")
    ap.add_argument("--quick", action="store_true", help="1,000 files, 5 repetitions")
    args = ap.parse_args()
    if args.bounds:
        bounds(args)
        return
    if args.journal_scale:
        journal_scale(args)
        return
    if args.quick:
        args.files, args.reps = 1_000, 5
    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-ui-"))
    try:
        results: dict[str, Any] = {}
        for label, n in (("baseline", args.baseline_files), ("large", args.files)):
            root = tmp / label
            build_store(root, n)
            files = sum(1 for p in root.rglob("*.md"))
            results[label] = {"files": files, **measure(root, args.reps)}
        rows = []
        for label in ("baseline", "large"):
            r = results[label]
            b = r["browser"]
            rows.append(
                (
                    f"{r['files']:,}",
                    f"{r['cold_s'] * 1000:.0f}",
                    f"{r['warm']['median_ms']:.0f}",
                    f"{r['warm']['p90_ms']:.0f}",
                    f"{b['median_ms']:.0f}" if b else "n/a",
                    f"{r['expand_folder']['median_ms']:.0f}",
                    f"{r['bytes'] / 1024:.1f}",
                )
            )
        cols = (
            "files",
            "first ms (cold)",
            "median ms",
            "p90 ms",
            "browser load ms",
            "open folder ms",
            "page KiB",
        )
        from rich.console import Console

        Console().print(table("memdir ui: the first page (tree at the root)", cols, rows))
        large, base = results["large"], results["baseline"]
        worst = max(large["cold_s"], large["warm"]["p90_ms"] / 1000)
        ratio = large["warm"]["median_ms"] / max(base["warm"]["median_ms"], 1e-9)
        print(
            f"{large['files']:,} files: first page {large['cold_s'] * 1000:.0f} ms cold, "
            f"{large['warm']['median_ms']:.0f} ms median; {ratio:.1f}x the {base['files']:,}-file page; "
            f"target < {TARGET_S * 1000:.0f} ms: {'met' if worst < TARGET_S else 'MISSED'}"
        )
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "ui_first_page.json", {"target_s": TARGET_S, **results})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
