"""The ingest strategy's switch point (`memdir ingest --strategy auto`), derived from the cost curve.

`memdir.agents.strategy.SWITCH_KB` is the size of the verbatim dump (KB of its session files)
past which a question on the dump costs more than twice what it costs on the curated store. This
script recomputes it from the cost curve's run folders (`benchmarks/cost_curve.py`: the
generated benchmark at 10 / 40 / 160 sessions, offline), so the constant can be checked against
a fresh run. Per size it sets side by side, for the verbatim dump, the agent-curated store and
chunk retrieval:

- `read / q`: the bytes the search role's tools read per question (the run's meter, as the cost
  curve reports it);
- `prompt / q`: the bytes a model's search is sent before its first tool call: the search
  role's system prompt, the tool schemas it is shown, and the user message, which carries the
  store's core memory (every markdown file at the root, docs/study.md "The store") and the
  question, rendered from the stored store for each question the run asked;
- `input / q`: the two added, what one question puts in front of a model at the least (a model
  re-sends its prompt every round, so this is a lower bound).

Two rules are then applied to the dump's figures, fitted linearly against its KB:
- by reads alone: where the dump's `read / q` reaches twice the curated store's mean;
- by input (the rule `SWITCH_KB` follows): where the dump's `input / q` reaches twice the
  curated store's mean. The dump keeps its session files at the root, so its whole text is core
  memory, sent with every question; the offline searcher reads only its top three files, so by
  reads alone the dump's cost stays flat and never reaches the mark.

    PYTHONPATH=src python benchmarks/switch_threshold.py [--runs runs/cost_curve] [--sizes 10,40,160]
        [--seed 42] [--quick]

A size whose run folder is missing is run first (offline, the cost curve's variants), so the
script also works from nothing (about a minute on two cores for the three sizes); `--quick` uses
sizes 10 and 40. It prints the table and the two switch points, writes `shape_threshold.json`
and `shape_threshold.png` into the runs folder, and, at the cost curve's sizes, exits 1 when the
derived switch point differs from `SWITCH_KB` by more than 0.05 KB.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import REPO, machine, table, write_json
from rich.console import Console

from memdir.agents.dump_format import is_session_file
from memdir.agents.loop import tool_infos
from memdir.agents.roles import render
from memdir.agents.strategy import SWITCH_KB
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir_study.eval.runner import RunConfig, run_eval
from memdir_study.variants import variant_role

SIZES = (10, 40, 160)
QUICK_SIZES = (10, 40)
VARIANTS = ("verbatim-dump", "agent-curated", "chunk-retrieval")
DUMP, CURATED = "verbatim-dump", "agent-curated"
FACTOR = 2.0  # "a line item": every question costs more than twice the curated store's
TOLERANCE_KB = 0.05


@dataclass(frozen=True)
class Point:
    """One variant at one size: what a question cost, in bytes, averaged over the questions."""

    variant: str
    sessions: int
    corpus_kb: float  # KB of the turns' text (the cost curve's x axis)
    dump_kb: float  # KB of the dump's session files at this size (the switch's unit)
    questions: int
    read: float
    prompt: float

    @property
    def input(self) -> float:
        return self.read + self.prompt


def ensure_run(runs: Path, sid: str) -> Path:
    """The run folder of `sid`, run first (offline) when it has no summary yet."""
    folder = runs / sid
    if not (folder / "summary.json").exists():
        config = RunConfig(
            benchmark="generated",
            conversations=[sid],
            variants=list(VARIANTS),
            builder_model="offline",
            search_model="offline",
        )
        run_eval(config, folder)
    return folder


def prompt_bytes(store: Store, variant: str, profile: str | None, question: str) -> int:
    """What the search role sends a model first: system prompt, tool schemas, user message."""
    role = variant_role("answer", variant, profile)
    harness = Harness(store, role.profile or "search")
    tools = [
        {"name": t.name, "description": t.description, "parameters": t.parameters}
        for t in tool_infos(harness)
    ]
    system, user = render(role, core_memory=spec.context(store).text, question=question)
    return len(system.encode()) + len(user.encode()) + len(json.dumps(tools, ensure_ascii=False).encode())


def measure(folder: Path, sessions: int) -> list[Point]:
    """Each variant's point at this size, from the run folder alone (summary, answers, stores)."""
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    answers = [
        json.loads(line) for line in (folder / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    cells = {c["variant"]: c for c in summary["cells"] if c["variant"] in VARIANTS}
    conv = next(iter(cells.values()))["conversation"]
    dump_store = Store(folder / "stores" / "generated" / conv / DUMP)
    dump_kb = sum(e.size for e in dump_store.files() if is_session_file(e.path)) / 1024
    points = []
    for variant, cell in cells.items():
        store = Store(folder / "stores" / "generated" / conv / variant)
        mine = [a for a in answers if a["variant"] == variant]
        profile = cell.get("search_profile") or ("chunk-retrieval" if variant == "chunk-retrieval" else None)
        prompts = [prompt_bytes(store, variant, profile, a["question"]) for a in mine]
        points.append(
            Point(
                variant,
                sessions,
                round(cell["corpus"]["kb"], 3),
                round(dump_kb, 3),
                len(mine),
                statistics.fmean(a["search"]["bytes_read"] for a in mine),
                statistics.fmean(prompts),
            )
        )
    return points


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through the points."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    return my - slope * mx, slope


def crossing(points: list[Point], measure_of: str) -> dict[str, Any]:
    """Where the dump's line reaches FACTOR times the curated store's mean, in dump KB."""
    dump = sorted((p for p in points if p.variant == DUMP), key=lambda p: p.dump_kb)
    curated = [getattr(p, measure_of) for p in points if p.variant == CURATED]
    a, b = fit([p.dump_kb for p in dump], [getattr(p, measure_of) for p in dump])
    mark = FACTOR * statistics.fmean(curated)
    at = (mark - a) / b if b > 0 else None
    return {
        "measure": measure_of,
        "intercept_bytes": round(a, 1),
        "slope_bytes_per_kb": round(b, 2),
        "curated_mean_bytes": round(statistics.fmean(curated), 1),
        "mark_bytes": round(mark, 1),
        "switch_kb": None if at is None else round(max(at, 0.0), 2),
        "ratio_at_sizes": [round(getattr(d, measure_of) / statistics.fmean(curated), 2) for d in dump],
    }


def plot(points: list[Point], rule: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for variant in VARIANTS:
        pts = sorted((p.dump_kb, p.input / 1024) for p in points if p.variant == variant)
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=f"{variant}: input / q")
    ax.axhline(rule["mark_bytes"] / 1024, color="grey", linestyle="--", label=f"{FACTOR:g}x curated")
    if rule["switch_kb"] is not None:
        ax.axvline(rule["switch_kb"], color="red", linestyle=":", label=f"switch {rule['switch_kb']:.1f} KB")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("verbatim dump size (KB of session files)")
    ax.set_ylabel("KB per question (prompt + reads)")
    ax.set_title("Where the dump's questions cost twice the curated store's")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def render_table(points: list[Point], console: Console) -> None:
    rows = [
        (
            p.variant,
            str(p.sessions),
            f"{p.corpus_kb:.1f}",
            f"{p.dump_kb:.1f}",
            str(p.questions),
            f"{p.read / 1024:.2f}",
            f"{p.prompt / 1024:.2f}",
            f"{p.input / 1024:.2f}",
        )
        for p in sorted(points, key=lambda p: (VARIANTS.index(p.variant), p.sessions))
    ]
    cols = (
        "variant",
        "sessions",
        "corpus KB",
        "dump KB",
        "questions",
        "read / q KB",
        "prompt / q KB",
        "input / q KB",
    )
    console.print(table("Per question, by size (generated benchmark, offline)", cols, rows))


def say(rule: dict[str, Any]) -> str:
    at = rule["switch_kb"]
    where = "never (the dump's line does not rise)" if at is None else f"at {at:.2f} KB of session files"
    b = rule["slope_bytes_per_kb"]
    line = f"{rule['intercept_bytes']:.0f} B {'+' if b >= 0 else '-'} {abs(b):.2f} B per KB"
    return (
        f"by {rule['measure']}: dump = {line}; "
        f"{FACTOR:g}x curated = {rule['mark_bytes']:.0f} B, reached {where}; "
        f"dump / curated at the sizes: {', '.join(f'{r:.2f}x' for r in rule['ratio_at_sizes'])}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, default=REPO / "runs" / "cost_curve", help="the cost curve's --out")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="sessions per size")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--quick", action="store_true", help=f"sizes {','.join(map(str, QUICK_SIZES))}")
    args = ap.parse_args()
    sizes = list(QUICK_SIZES) if args.quick else [int(x) for x in args.sizes.split(",")]
    console = Console()
    points: list[Point] = []
    for n in sizes:
        points.extend(measure(ensure_run(args.runs, f"gen-s{args.seed}-n{n}"), n))
    render_table(points, console)
    by_reads, by_input = crossing(points, "read"), crossing(points, "input")
    console.print(say(by_reads))
    console.print(say(by_input))
    derived = by_input["switch_kb"]
    verdict = derived is not None and abs(derived - SWITCH_KB) <= TOLERANCE_KB
    console.print(f"SWITCH_KB in memdir.agents.strategy: {SWITCH_KB} KB; derived here: {derived} KB")
    out = args.runs
    write_json(
        out / "shape_threshold.json",
        {
            "what": "the ingest strategy's switch point (benchmarks/switch_threshold.py)",
            "factor": FACTOR,
            "points": [asdict(p) | {"input": p.input} for p in points],
            "by_reads": by_reads,
            "by_input": by_input,
            "switch_kb_constant": SWITCH_KB,
            "matches": verdict,
            "machine": machine(),
        },
    )
    plot(points, by_input, out / "shape_threshold.png")
    console.print(f"JSON and plot in {out}")
    if sizes != list(SIZES):
        console.print(f"(SWITCH_KB is derived at the cost curve's sizes, {','.join(map(str, SIZES))})")
    elif not verdict:
        console.print("the derived switch point differs from SWITCH_KB: update the constant and docs/eval.md")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
