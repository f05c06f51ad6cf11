"""Summary, report and plots of a skill run, computed from its folder alone.

`tasks.jsonl` is the record; `summary.json` (a list of `cells`), `timings.json` (their wall
times, kept apart so a summary is the same bytes for the same chains), `report.md` and the PNGs are
derived from it and from `manifest.json`, so a report can be redrawn at any time and two
processes that ran different variants into one folder produce one report. The tables are read
through the studies' shared kernel (memdir_study/runfolder.py): a row cut short by a kill is skipped,
and a manifest written before a setting's rename is read under today's name.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.store.atomic import write_atomic
from memdir_study.bench.alfworld import FAMILY_ORDER
from memdir_study.runfolder import read_manifest
from memdir_study.skills.bills import bill_lines, bills, plot_search_cost
from memdir_study.skills.fate import fate_lines
from memdir_study.skills.folder import TASKS, ChainFolder, PlotStyle, SkillCell, TaskRow
from memdir_study.skills.paired import Paired, comparisons, paired_lines

ORDER = ("no-store", "episode-log", "curated-skills", "curated-skills-mem", "curated-skills-mem-gs")


def load_rows(run: Path) -> list[TaskRow]:
    folder = ChainFolder(run)
    if not folder.tasks.path.is_file():
        raise MemdirError(f"{run} has no {TASKS}; is it a skill run folder?")
    return folder.task_rows()


def load_aborted(run: Path) -> list[JsonObject]:
    """Cells whose model calls failed (`aborted.jsonl`): reported as aborted, never partially."""
    return ChainFolder(run).aborted.rows()


def load_manifest(run: Path) -> JsonObject:
    """The run's manifest."""
    manifest = read_manifest(ChainFolder(run).manifest)
    if manifest is None:
        raise MemdirError(f"{run} has no manifest.json; is it a skill run folder?")
    return manifest


def _key(row: Mapping[str, object]) -> tuple[str, str, str]:
    return str(row["variant"]), str(row["model"]), str(row["protocol"])


def _rank(variant: str) -> int:
    return ORDER.index(variant) if variant in ORDER else len(ORDER)


def summarize(rows: list[TaskRow]) -> list[SkillCell]:
    groups: dict[tuple[str, str, str], list[TaskRow]] = defaultdict(list)
    for r in rows:
        groups[_key(r)].append(r)
    cells: list[SkillCell] = []
    for (variant, model, protocol), rs in sorted(groups.items(), key=lambda kv: (_rank(kv[0][0]), kv[0])):
        fam: dict[str, list[bool]] = defaultdict(list)
        for r in rs:
            fam[r["family"]].append(bool(r["success"]))
        solved = sum(bool(r["success"]) for r in rs)
        deploy = sum(r["deploy_cost_usd"] for r in rs)
        finals: dict[int, TaskRow] = {}
        for r in rs:
            if r["chain"] not in finals or r["index"] > finals[r["chain"]]["index"]:
                finals[r["chain"]] = r
        fates: dict[str, int] = defaultdict(int)
        for r in finals.values():
            for k, n in r.get("early_fate", {}).items():
                fates[k] += n
        cells.append({
            "variant": variant, "model": model, "protocol": protocol, "n_tasks": len(rs),
            "success": round(solved / len(rs), 4),
            "success_by_family": {f: round(sum(v) / len(v), 4) for f in FAMILY_ORDER if (v := fam.get(f))},
            "deploy_cost_usd": round(deploy, 6),
            "build_cost_usd": round(sum(r["build_cost_usd"] for r in rs), 6),
            "deploy_cost_per_task_usd": round(deploy / len(rs), 6),
            "deploy_cost_per_solved_usd": round(deploy / solved, 6) if solved else None,
            "store_files": round(sum(r["store_files"] for r in finals.values()) / len(finals), 2),
            "store_kb": round(sum(r["store_kb"] for r in finals.values()) / len(finals), 3),
            "chains": len(finals), "mean_steps": round(sum(r["steps"] for r in rs) / len(rs), 2),
            "mean_steps_solved": (
                round(sum(r["steps"] for r in rs if r["success"]) / solved, 2) if solved else None
            ),
            "served_per_task": round(sum(len(r["served"]) for r in rs) / len(rs), 2),
            "served_tokens_per_task": round(sum(r.get("served_tokens", 0) for r in rs) / len(rs), 1),
            "deploy_tokens_per_task": round(sum(_tokens(r.get("deploy_usage")) for r in rs) / len(rs), 1),
            "build_tokens": sum(_tokens(r.get("build_usage")) for r in rs),
            "early_file_fate": dict(fates),
            **bills(rs),  # type: ignore[typeddict-item]  # store_health: added by write_report
            "wall_seconds": round(sum(sum(r["seconds"].values()) for r in rs), 1),
        })  # fmt: skip
    return cells


HEALTH_KEYS = ("files", "sections", "fanout_max", "depth_max", "b1_mean", "b2", "b3", "b4")


def store_health(run: Path, variant: str) -> dict[str, float | None] | None:
    """The health panel (`memdir stats`) of a variant's final stores, averaged over its chains."""
    from memdir.analytics.stats import store_stats
    from memdir.store.store import Store

    roots = ChainFolder(run).stores(variant)
    if not roots:
        return None
    records = [store_stats(Store(root)).values for root in roots]
    out: dict[str, float | None] = {}
    for k in HEALTH_KEYS:
        vals = [v for r in records if (v := r.get(k)) is not None]
        out[k] = round(sum(vals) / len(vals), 4) if vals else None
    return out


def _tokens(usage: dict[str, Any] | None) -> int:
    u = usage or {}
    return int(u.get("input_uncached", 0) + u.get("input_cached", 0) + u.get("output", 0))


def _by_index(
    rows: list[TaskRow], variant: str, field: Literal["running_success", "store_kb", "store_files"]
) -> list[float]:
    """Per chain position, the mean over chains of a running quantity."""
    per_chain: dict[int, list[TaskRow]] = defaultdict(list)
    for r in rows:
        if r["variant"] == variant:
            per_chain[r["chain"]].append(r)
    series = []
    for rs in per_chain.values():
        rs.sort(key=lambda r: r["index"])
        if field == "running_success":
            acc, out = 0, []
            for n, r in enumerate(rs, start=1):
                acc += bool(r["success"])
                out.append(acc / n)
            series.append(out)
        else:
            series.append([float(r[field]) for r in rs])
    n = min((len(s) for s in series), default=0)
    return [sum(s[i] for s in series) / len(series) for i in range(n)]


_DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))


def _style(variant: str) -> PlotStyle:
    """A fixed colour and dash per variant: identical curves (GS and skills+mem offline) stay visible."""
    rank = _rank(variant)
    return {"color": f"C{rank}", "linestyle": _DASHES[rank % len(_DASHES)], "linewidth": 1.6}


def plot(run: Path, rows: list[TaskRow]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = sorted({r["variant"] for r in rows}, key=_rank)
    names = []
    # Relative to no-store when there is something to compare; else the plain running success.
    compare = "no-store" in variants and len(variants) > 1
    base = _by_index(rows, "no-store", "running_success") if compare else None
    fig, ax = plt.subplots(figsize=(7, 4))
    for v in variants:
        if v == "no-store" and base is not None:
            continue
        ys = _by_index(rows, v, "running_success")
        if base is not None:
            n = min(len(ys), len(base))
            ys = [ys[i] - base[i] for i in range(n)]
        ax.plot(range(1, len(ys) + 1), ys, label=v, **_style(v))
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("task position in chain")
    ax.set_ylabel("running success − no-store" if base is not None else "running success")
    ax.set_title("Running success relative to no store")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(run / "success_vs_nostore.png", dpi=110)
    plt.close(fig)
    names.append("success_vs_nostore.png")
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for v in variants:
        if v == "no-store":
            continue
        kb = _by_index(rows, v, "store_kb")
        files = _by_index(rows, v, "store_files")
        a1.plot(range(1, len(kb) + 1), kb, label=v, **_style(v))
        a2.plot(range(1, len(files) + 1), files, label=v, **_style(v))
    a1.set_xlabel("task position in chain")
    a1.set_ylabel("store size (KB)")
    a2.set_xlabel("task position in chain")
    a2.set_ylabel("store files")
    if a1.get_legend_handles_labels()[0]:
        a1.legend(fontsize=8)
    fig.suptitle("Store size along the chain")
    fig.tight_layout()
    fig.savefig(run / "store_size.png", dpi=110)
    plt.close(fig)
    names.append("store_size.png")
    names.append(plot_search_cost(run, rows, variants, _style))
    return names


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _baseline_line(manifest: dict[str, Any]) -> str:
    """Say which roles were no-model baselines, so an offline table is never read as the study's."""
    keys = (("execution", "model"), ("curator", "curator_model"), ("GS guidance", "guidance_model"))
    offline = [role for role, key in keys if str(manifest.get(key, "offline")).startswith("offline")]
    if not offline:
        return "Every role ran on a model."
    return (
        f"Roles played by no-model baselines: {', '.join(offline)} (`offline`: procedures built in; "
        "`offline-novice`: procedures learned from memory; offline curators are mechanical distillers; "
        "offline GS writes guidance mechanically from the served entries). **Baselines**, not the "
        "study's agents."
    )


class _Summary(TypedDict):
    cells: list[SkillCell]
    aborted: list[dict[str, Any]]
    paired: list[Paired]


def write_report(run: Path) -> list[SkillCell]:
    """(Re)derive summary.json, report.md and the plots from the run folder."""
    aborted = load_aborted(run)
    dead = {_key(a) for a in aborted}
    rows = [r for r in load_rows(run) if _key(r) not in dead]
    manifest = load_manifest(run)
    cells = summarize(rows)
    for c in cells:
        c["store_health"] = store_health(run, c["variant"])
    # wall time apart (timings.json), so the summary of the same chains is the same bytes
    # whichever executor played them, however loaded the machine was
    timings = {"cells": [{"variant": c["variant"], "wall_seconds": c.pop("wall_seconds")} for c in cells]}
    summary: _Summary = {"cells": cells, "aborted": aborted, "paired": comparisons(rows, ORDER)}
    write_atomic(run / "summary.json", (json.dumps(summary, indent=1) + "\n").encode())
    write_atomic(run / "timings.json", (json.dumps(timings, indent=1) + "\n").encode())
    wall = {t["variant"]: t["wall_seconds"] for t in timings["cells"]}
    pngs = plot(run, rows)
    fams = [f for f in FAMILY_ORDER if any(f in c["success_by_family"] for c in cells)]
    counts = {
        f: sum(1 for r in rows if r["family"] == f and r["variant"] == rows[0]["variant"]) for f in fams
    }
    lines = [
        f"# Skill run: {manifest['benchmark']}, protocol {manifest['protocol']}, model {manifest['model']}",
        "",
        f"Curator model {manifest.get('curator_model', 'offline')}, guidance model "
        f"{manifest.get('guidance_model', 'offline')}, tool set {manifest.get('tool_set')}, price card "
        f"{manifest.get('price_card')}.",
        f"Retriever: {manifest['retriever']}; step cap {manifest['step_cap']}; seed {manifest['seed']}; "
        f"versions {manifest['versions']}.",
        _baseline_line(manifest),
        "",
        "## Success by family (%)",
        "",
        "| variant | " + " | ".join(f"{f} ({counts[f]})" for f in fams) + " | all | n |",
        "|---" * (len(fams) + 3) + "|",
    ]
    for c in cells:
        by = c["success_by_family"]
        lines.append(
            f"| {c['variant']} | "
            + " | ".join(_pct(by.get(f)) for f in fams)
            + f" | {_pct(c['success'])} | {c['n_tasks']} |"
        )
    lines += [
        "",
        "## Cost, steps and store",
        "",
        "| variant | deploy $/task | deploy $/solved | build $ | mean steps | steps when solved "
        "| served files/task | served tokens/task | model tokens/task | store files | store KB | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        per_solved = c["deploy_cost_per_solved_usd"]
        lines.append(
            f"| {c['variant']} | {c['deploy_cost_per_task_usd']:.4f} | "
            f"{'–' if per_solved is None else format(per_solved, '.4f')} | "
            f"{c['build_cost_usd']:.4f} | {c['mean_steps']} | {c['mean_steps_solved']} | "
            f"{c['served_per_task']} | {c['served_tokens_per_task']} | {c['deploy_tokens_per_task']} | "
            f"{c['store_files']} | {c['store_kb']} | {wall[c['variant']]} |"
        )
    lines += paired_lines(summary["paired"])
    lines += bill_lines(cells)
    lines += fate_lines(cells)
    healthy = [c for c in cells if c.get("store_health")]
    if healthy:
        lines += ["", "## Store health at the end of the chain (`memdir stats`; mean over chains)", ""]
        lines += ["| variant | " + " | ".join(HEALTH_KEYS) + " |", "|---" * (len(HEALTH_KEYS) + 1) + "|"]
        for c in healthy:
            h = c.get("store_health") or {}
            lines.append(
                f"| {c['variant']} | "
                + " | ".join("–" if h[k] is None else f"{h[k]:g}" for k in HEALTH_KEYS)
                + " |"
            )
    if aborted:
        lines += ["", "## Aborted cells (model calls failed; not reported partially)", ""]
        lines += [f"- {a['variant']} ({a['model']}, {a['protocol']}): chain {a['chain']} task {a['index']}: "
                  f"{a['error']}" for a in aborted]  # fmt: skip
    lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in pngs] + [""]
    (run / "report.md").write_text("\n".join(lines))
    return cells
