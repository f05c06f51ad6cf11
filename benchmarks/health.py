"""`health` on a 1,000-unit store: is a call under 200 ms, cold, warm and after one file edited?

Builds (seed 42) the synthetic store of stats_10k.py at 200 notes of 5 sections in 10 topic
folders (1,000 section units, plus each folder's MEMORY.md), then plants one problem of each
kind health reports: a keyed value struck through in one note and still live in another (and one
whose dates disagree), a dangling reference, a folder over the fanout cap (50 empty notes), core
memory over a budget of 50 tokens, a section copied into another note (which also leaks: it sits
nearer to its twin's file than to its own), two sibling headings alike, and an over-long
section. Then times the three kinds of call in turn, round after round:

- first call in this process: imports scipy and scikit-learn, loads the tokenizer (once per process);
- cold: a new store object, so every file is parsed (what `incremental=False` always costs);
- warm: the same store object, nothing changed (the last result is returned);
- after one edit: the same store object, a line added to one note before each call (one file
  parsed again, every check run, B1 reused: no label changed);
- after a retitle: the same, but the edit renames a heading, so B1 is computed again.

Prints a table against the target and what was found; writes results.json under
runs/benchmarks/health/. With `--baseline REV` (the default: the last commit before the
single-pass check and the outline's line scan), the same script of that commit runs first on
the same store (its `src/` and `benchmarks/` taken out with `git archive` into a temporary
folder), its figures are printed beside these, and its findings must equal these.

    python benchmarks/health.py [--notes 200] [--repeat 9] [--quick] [--baseline REV | --no-baseline]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, machine, make_store, stats_ms, table, write_json
from rich.console import Console

from memdir.analytics.health import KINDS, HealthReport, health
from memdir.store.store import Store

TARGET_MS = 200.0
BASELINE = "acfa45efec2cb6cb8c03feb80b276c130d17e619"  # the last commit before the single-pass check
SECTIONS = 5
FOLDERS = 10
KINDS_OF_CALL = ("cold", "warm", "after one edit", "after a retitle")
CORE_BUDGET = 50  # tokens: the synthetic root index is about 30, so the planted root note passes it


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


BOB_NOW = "- bob | job: doctor (since 2024-03-01) [S5T2]\n"
BOB_PAST = "- ~~bob | job: nurse~~ (2022-01-01 until 2024-03-01) [S1T2]\n"
BOB_STALE = "- bob | job: nurse (since 2022-01-01) [S1T2]\n"
EVE_NOW = "- eve | pet: cat (since 2020-01-01) [S1T3]\n"
EVE_PAST = "- ~~eve | pet: dog~~ (2019-01-01 until 2022-06-01) [S1T4]\n"  # ended after cat began


def note(root: Path, folder: int, k: int) -> Path:
    return root / f"topic-{folder:02d}" / f"note-{k:03d}.md"


def plant(root: Path) -> None:
    """One problem of each kind (docs/health.md), written as files on disk (notes 0-3 of a
    folder: `--quick` has five per folder)."""
    _append(note(root, 0, 0), BOB_NOW + BOB_PAST)
    _append(note(root, 3, 1), BOB_STALE)
    _append(note(root, 3, 3), EVE_NOW + EVE_PAST)
    _append(note(root, 1, 2), "see /memories/topic-01/note-999.md\n")
    for k in range(50):  # topic-09 past the cap of 50
        stub = root / "topic-09" / f"stub-{k:02d}.md"
        stub.write_text(f"---\nname: stub-{k:02d}\ndescription: stub {k}\n---\n", encoding="utf-8")
    core = "---\nname: notes\ndescription: loose notes in core memory\n---\n" + "Remember the milk. " * 20
    (root / "notes.md").write_text(core + "\n", encoding="utf-8")
    body = note(root, 4, 1).read_text(encoding="utf-8").split("\n## ")[2].split("\n", 1)[1]
    copy = note(root, 6, 3)
    parts = copy.read_text(encoding="utf-8").split("\n## ")
    parts[2] = parts[2].split("\n", 1)[0] + "\n" + body  # a section of topic-04 copied into topic-06
    copy.write_text("\n## ".join(parts), encoding="utf-8")
    twin = note(root, 8, 1)
    heading = next(ln for ln in twin.read_text(encoding="utf-8").split("\n") if ln.startswith("## "))
    _append(twin, f"{heading}\n- the same heading again, for more of it [S9T2]\n")
    _append(note(root, 8, 2), "## long log\n" + "- a line of the log [S9T3]\n" * 130)


def edit(root: Path, i: int) -> None:
    """An edit the next call must see: a line added to the last section of a note."""
    _append(note(root, i % FOLDERS, 4), f"- more detail {i} [S9T{i}]\n")


def retitle(root: Path, i: int) -> None:
    """An edit that changes a label (a note's first heading), so B1 is computed again."""
    path = note(root, i % FOLDERS, 3)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\n# Note 3", f"\n# Note 3 v{i}", 1), encoding="utf-8")


def call(store: Store) -> tuple[float, float, HealthReport]:
    """(wall seconds, CPU seconds, report) of one health call."""
    wall, cpu = time.perf_counter(), time.process_time()
    report = health(store, core_budget=CORE_BUDGET)
    return time.perf_counter() - wall, time.process_time() - cpu, report


def timed_calls(root: Path, repeat: int) -> dict[str, Any]:
    """The three kinds of call in turn, `repeat` rounds, so that what else the machine runs
    falls on all three alike."""
    first_wall, first_cpu, last = call(Store(root))
    store = Store(root)
    call(store)
    wall: dict[str, list[float]] = {k: [] for k in KINDS_OF_CALL}
    cpu: dict[str, list[float]] = {k: [] for k in KINDS_OF_CALL}
    phases: list[dict[str, float]] = []
    for i in range(repeat):
        w, c, _ = call(Store(root))  # a new store object: nothing cached
        wall["cold"].append(w)
        cpu["cold"].append(c)
        w, c, r = call(store)
        assert r.reused
        wall["warm"].append(w)
        cpu["warm"].append(c)
        edit(root, i)
        w, c, last = call(store)
        assert last.reparsed == 1 and not last.reused
        wall["after one edit"].append(w)
        cpu["after one edit"].append(c)
        phases.append(last.timings)
        retitle(root, i)
        w, c, last = call(store)
        assert last.reparsed == 1 and not last.reused
        wall["after a retitle"].append(w)
        cpu["after a retitle"].append(c)
    return {
        "first_in_process_ms": {"wall": first_wall * 1000, "cpu": first_cpu * 1000},
        "wall": {k: stats_ms(v) for k, v in wall.items()},
        "cpu": {k: stats_ms(v) for k, v in cpu.items()},
        "phases_after_one_edit_ms": {k: statistics.median(p[k] for p in phases) * 1000 for k in phases[0]},
        "report": last,
    }


def baseline_run(rev: str, notes: int, repeat: int) -> dict[str, Any]:
    """This script as it was at `rev`, run on the same synthetic store: its results.json."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev, "src", "benchmarks"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        script = Path(tmp) / "benchmarks" / "health.py"
        argv = [sys.executable, str(script), "--notes", str(notes), "--repeat", str(repeat)]
        subprocess.run(argv, check=True, capture_output=True)
        data: dict[str, Any] = json.loads((Path(tmp) / "runs/benchmarks/health/results.json").read_text())
        return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="50 notes, 3 repetitions")
    ap.add_argument("--baseline", default=BASELINE, help="commit whose health.py runs first, for comparison")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    notes, repeat = (50, 3) if args.quick else (args.notes, args.repeat)
    out = REPO / "runs" / "benchmarks" / "health"
    base = None if args.no_baseline else baseline_run(args.baseline, notes, repeat)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        make_store(root, notes, folders=FOLDERS, sections=SECTIONS)
        plant(root)
        res = timed_calls(root, repeat)
    report: HealthReport = res.pop("report")
    load = os.getloadavg()[0]
    t = table(
        f"health on {report.counts['units']} units ({report.counts['files']} files), {repeat} rounds"
        + ("" if base is None else f"; baseline {args.baseline} run just before"),
        ["call", "wall ms", "p90 ms", "CPU ms", "target ms", "wall / target"]
        + ([] if base is None else ["baseline wall ms", "baseline CPU ms"]),
    )
    first = res["first_in_process_ms"]
    t.add_row(
        "first in process (imports)",
        f"{first['wall']:.0f}",
        "",
        f"{first['cpu']:.0f}",
        f"{TARGET_MS:.0f}",
        "",
        *(
            []
            if base is None
            else [f"{base['first_in_process_ms']['wall']:.0f}", f"{base['first_in_process_ms']['cpu']:.0f}"]
        ),
    )
    for name in KINDS_OF_CALL:
        w, c = res["wall"][name], res["cpu"][name]
        t.add_row(
            name,
            f"{w['median_ms']:.1f}",
            f"{w['p90_ms']:.1f}",
            f"{c['median_ms']:.1f}",
            f"{TARGET_MS:.0f}",
            f"{w['median_ms'] / TARGET_MS:.2f}",
            *(
                []
                if base is None
                else [f"{base['wall'][name]['median_ms']:.1f}", f"{base['cpu'][name]['median_ms']:.1f}"]
            ),
        )
    Console().print(t)
    p = table("after one edit: median ms per phase", ["phase", "ms"])
    for k, v in res["phases_after_one_edit_ms"].items():
        p.add_row(k, f"{v:.1f}")
    Console().print(p)
    print(f"1-min load average during the run: {load:.2f} on {os.cpu_count()} CPUs")
    found = {k: report.counts[k] for k in KINDS}
    print("findings:", found)
    for kind in KINDS:
        first = next((f for f in report.findings if f.kind == kind), None)
        if first is not None:
            print(f"  [{kind}] {first.message}\n      do: {first.action}")
    findings = [f.as_dict() for f in report.findings]
    if base is not None:
        same = base["findings"] == findings and base["counts"] == report.counts
        print(f"findings and counts equal to the baseline's ({args.baseline}): {same}")
        if not same:
            raise SystemExit("health's findings differ from the baseline's")
    write_json(
        out / "results.json",
        {
            **res,
            "target_ms": TARGET_MS,
            "counts": report.counts,
            "findings": findings,
            "baseline": None
            if base is None
            else {"rev": args.baseline, "wall": base["wall"], "cpu": base["cpu"]},
            "load_avg_1m": load,
            "machine": machine(),
        },
    )
    print(f"wrote {out / 'results.json'}")


if __name__ == "__main__":
    main()
