"""The skill setting's three retrievals side by side: time per retrieval and top-k agreement.

A synthetic ALFWorld-like store (N episode files under /memories/episodes, one skill file per
family, notes per object, a MEMORY.md in every folder) is searched with the task texts of
`--tasks` random tasks through each tool set's retrieval (`memdir_study.skills.retrieve.RETRIEVALS`):
  center        grep through the `search` profile, then `view` per file
  center-bm25   bm25_full_search through `search-bm25`, then `view` per file
  shell         grep -rwoiE and cat through the sandboxed `bash` tool
Columns: median and p90 ms per retrieval (the warm-up call that builds the BM25 index or the
shell's working copy is left out and shown apart), tool calls and bytes returned per
retrieval, and how often the top k equals center's (same files in the same order) or holds the
same files. Results go to a run folder with a PNG chart.

    python benchmarks/skills_retrieval.py [--episodes 200] [--tasks 40] [--k 3] [--out runs] [--quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from _common import bar_chart, machine, stats_ms, write_json
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from memdir.store import spec
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store
from memdir_study.skills.retrieve import RETRIEVALS

FAMILIES = ("pick", "clean", "heat", "cool", "examine", "pick-two")
VERB = {"pick": "put a", "clean": "put a clean", "heat": "put a hot", "cool": "put a cool"}
OBJECTS = ("apple", "mug", "egg", "potato", "lettuce", "bowl", "plate", "cup", "knife", "book", "cd", "pen")
PLACES = (
    *("fridge", "cabinet", "countertop", "shelf", "drawer"),
    *("desk", "sinkbasin", "garbagecan", "diningtable"),
)
TOOL = {"clean": "sinkbasin 1", "heat": "microwave 1", "cool": "fridge 1"}


def task_text(rng: random.Random) -> tuple[str, str, str, str]:
    fam, obj, place = rng.choice(FAMILIES), rng.choice(OBJECTS), rng.choice(PLACES)
    if fam == "examine":
        return fam, obj, place, f"examine the {obj} with the desklamp"
    if fam == "pick-two":
        return fam, obj, place, f"find two {obj} and put them in {place}"
    return fam, obj, place, f"{VERB[fam]} {obj} in {place}"


def episode(i: int, rng: random.Random) -> tuple[str, str]:
    fam, obj, place, task = task_text(rng)
    seen = rng.sample(PLACES, 4)
    steps = [f"> go to {seen[0]} 1", f"On the {seen[0]} 1, you see a {obj} 1 and a {rng.choice(OBJECTS)} 2."]
    steps += [f"> take {obj} 1 from {seen[0]} 1", f"You pick up the {obj} 1 from the {seen[0]} 1."]
    if fam in TOOL:
        steps += [f"> {fam} {obj} 1 with {TOOL[fam]}", f"You {fam} the {obj} 1 using the {TOOL[fam]}."]
    steps += [f"> go to {place} 1", f"You arrive at {place} 1. You see {rng.choice(OBJECTS)} 3."]
    steps += [f"> put {obj} 1 in/on {place} 1", "You put it there."]
    ok = rng.random() < 0.6
    stem = f"e{i:03d}-{fam}-{obj}"
    body = "\n".join(f"{n + 1}. {s}" for n, s in enumerate(steps))
    text = (
        f"---\nname: {stem}\ndescription: Episode {i}: {task} ({'success' if ok else 'failure'})\n"
        f"metadata:\n  type: episode\n  family: {fam}\n---\n# Task [E{i}]: {task}\n"
        f"Room: kitchen {rng.randrange(16):x}\nOutcome: {'success' if ok else 'failure'}\n\n{body}\n"
    )
    return stem, text


def build(root: Path, n: int, rng: random.Random) -> None:
    store = open_store(root, create=True)
    spec.init(store)
    folders: dict[str, dict[str, str]] = {"episodes": {}, "skills": {}, "notes": {}}
    for i in range(1, n + 1):
        stem, text = episode(i, rng)
        folders["episodes"][stem] = text
    for fam in FAMILIES:
        folders["skills"][fam] = (
            f"---\nname: {fam}\ndescription: How to {fam} an object and put it somewhere\n"
            f"metadata:\n  type: skill\n  family: {fam}\n---\n# {fam}\n1. take {{obj}} from {{place}}\n"
            f"2. go to {{target}} and put {{obj}} in/on {{target}}\n"
        )
    for obj in OBJECTS:
        where = ", ".join(rng.sample(PLACES, 3))
        folders["notes"][obj] = (
            f"---\nname: {obj}\ndescription: Where {obj} was seen\nmetadata:\n  type: note\n---\n"
            f"- {obj}: found in {where}\n"
        )
    for folder, files in folders.items():
        (root / folder).mkdir()
        for stem, text in files.items():
            (root / folder / f"{stem}.md").write_text(text)
        index = "\n".join(f"- {stem}: see /memories/{folder}/{stem}.md" for stem in files)
        (root / folder / "MEMORY.md").write_text(f"---\ndescription: Index of {folder}\n---\n{index}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="runs")
    ap.add_argument("--quick", action="store_true", help="50 episodes, 10 tasks")
    args = ap.parse_args()
    if args.quick:
        args.episodes, args.tasks = 50, 10
    rng = random.Random(args.seed)
    names = list(RETRIEVALS)
    times: dict[str, list[float]] = {n: [] for n in names}
    calls: dict[str, list[int]] = {n: [] for n in names}
    returned: dict[str, list[int]] = {n: [] for n in names}
    first: dict[str, float] = {}
    tops: dict[str, list[list[str]]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "mem")
        build(root, args.episodes, rng)
        tasks = [task_text(rng)[3] for _ in range(args.tasks)]
        store = open_store(root)
        harnesses = {n: Harness(store, RETRIEVALS[n].profile, role="bench") for n in names}
        for n in names:  # warm-up: the BM25 index and the shell's working copy are built here
            t = time.perf_counter()
            RETRIEVALS[n].fn(harnesses[n], tasks[0], args.k)
            first[n] = time.perf_counter() - t
        with Progress() as progress:
            bar = progress.add_task("retrievals", total=len(tasks) * len(names))
            for task in tasks:
                for n in rng.sample(names, len(names)):  # order rotates so no retrieval always goes first
                    h = harnesses[n]
                    c0, b0 = h.meter.calls, h.meter.bytes_returned
                    t = time.perf_counter()
                    docs = RETRIEVALS[n].fn(h, task, args.k)
                    times[n].append(time.perf_counter() - t)
                    calls[n].append(h.meter.calls - c0)
                    returned[n].append(h.meter.bytes_returned - b0)
                    tops[n].append([d.path for d in docs])
                    progress.advance(bar)
    rows = []
    for n in names:
        same_order = sum(a == b for a, b in zip(tops[n], tops["center"], strict=True))
        same_set = sum(set(a) == set(b) for a, b in zip(tops[n], tops["center"], strict=True))
        overlap = statistics.mean(
            len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(tops[n], tops["center"], strict=True)
        )
        rows.append(
            {
                "retrieval": n,
                "profile": RETRIEVALS[n].profile,
                **stats_ms(times[n]),
                "warmup_ms": first[n] * 1000,
                "calls": statistics.mean(calls[n]),
                "bytes_returned": statistics.mean(returned[n]),
                "same_order_as_center": same_order / len(tasks),
                "same_files_as_center": same_set / len(tasks),
                "overlap_with_center": overlap,
            }
        )
    table = Table(title=f"top-{args.k} retrieval over {args.episodes} episodes, {len(tasks)} tasks")
    for col in ("retrieval", "median ms", "p90 ms", "warm-up ms", "calls", "bytes ret.", "=center order",
                "=center files", "overlap"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            r["retrieval"],
            f"{r['median_ms']:.1f}",
            f"{r['p90_ms']:.1f}",
            f"{r['warmup_ms']:.1f}",
            f"{r['calls']:.1f}",
            f"{r['bytes_returned']:.0f}",
            f"{r['same_order_as_center']:.0%}",
            f"{r['same_files_as_center']:.0%}",
            f"{r['overlap_with_center']:.0%}",
        )
    Console().print(table)
    run = Path(args.out, time.strftime("skills-retrieval-%Y%m%d-%H%M%S"))
    manifest = {"script": "benchmarks/skills_retrieval.py", **vars(args), "machine": machine()}
    write_json(run / "results.json", {"manifest": manifest, "rows": rows, "tasks": tasks, "tops": tops})
    bar_chart(
        run / "retrieval.png",
        f"top-{args.k} retrieval, {args.episodes} episodes",
        names,
        {"median ms": [r["median_ms"] for r in rows], "p90 ms": [r["p90_ms"] for r in rows]},
        "ms per retrieval",
    )
    print(f"wrote {run}/results.json and {run}/retrieval.png")


if __name__ == "__main__":
    main()
