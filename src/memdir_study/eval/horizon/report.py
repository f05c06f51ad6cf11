"""The horizon run's summary, table and growth plots, derived from its checkpoint rows alone.

`summary` holds the rows and the month-12 targets of issue 51 (each with its value, its bound
and whether it was met); `table` is the rich table the command prints; `plot` writes one PNG per
panel with the checkpoint months on x, so a curve that erodes, plateaus or holds shows as such.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rich.table import Table

from memdir.jsontypes import JsonObject, JsonValue, count, figure, obj
from memdir.store.atomic import write_atomic

SUMMARY = "summary.json"
Row = Mapping[str, JsonValue]  # one checkpoint as `score.checkpoint` gave it, or one month's row
Figure = Callable[[Row], float | None]


COLUMNS: tuple[tuple[str, Figure], ...] = (
    ("month", lambda r: figure(r, "month")),
    ("sessions", lambda r: figure(r, "sessions")),
    ("retention", lambda r: figure(r, "retention")),
    ("of m1 kept", lambda r: figure(r, "retention_of_month1_kept")),
    ("current", lambda r: figure(r, "current_state")),
    ("previous", lambda r: figure(r, "previous_state")),
    ("stale-first", lambda r: figure(r, "stale_first", "stale_first_rate")),
    ("update acc", lambda r: figure(r, "update_accuracy")),
    ("halluc.", lambda r: figure(r, "hallucinated")),
    ("files", lambda r: figure(r, "shape", "files")),
    ("dirs", lambda r: figure(r, "shape", "dirs")),
    ("depth", lambda r: figure(r, "shape", "depth_mean")),
    ("fanout", lambda r: figure(r, "shape", "fanout_mean")),
    ("B1", lambda r: figure(r, "shape", "b1_mean")),
    ("B2", lambda r: figure(r, "shape", "b2")),
    ("B3", lambda r: figure(r, "shape", "b3")),
    ("B4", lambda r: figure(r, "shape", "b4")),
    ("core tok", lambda r: figure(r, "core_tokens")),
    ("index KB", lambda r: _kb(figure(r, "index_bytes"), 1)),
    ("ingest s/sess", lambda r: figure(r, "ingest_seconds_per_session")),
    ("cpu s/sess", lambda r: figure(r, "ingest_cpu_seconds_per_session")),
    ("search KB/q", lambda r: _kb(figure(r, "search_bytes_per_question"))),
    ("facts lost", lambda r: figure(r, "facts_lost_by_consolidation")),
)


def _kb(n: float | None, digits: int = 2) -> float | None:
    return None if n is None else round(n / 1024, digits)


def targets(rows: Sequence[Row]) -> JsonObject:
    """Issue 51's targets, read at the last checkpoint (core memory: at every one)."""
    if not rows:
        return {}
    last, first = rows[-1], rows[0]
    ratio, cpu = (
        _growth(first, last, "ingest_seconds_per_session"),
        _growth(first, last, "ingest_cpu_seconds_per_session"),
    )
    lost = figure(last, "facts_lost_by_consolidation")
    retention, of_kept = figure(last, "retention"), figure(last, "retention_of_month1_kept")
    current, update = figure(last, "current_state"), figure(last, "update_accuracy")
    stale = figure(last, "stale_first", "stale_first_rate")
    hallucinated = figure(last, "hallucinated")
    within = all(r.get("core_within_budget") is True for r in rows)
    found: list[tuple[str, JsonValue, str, bool | None]] = [
        ("retention", retention, ">= 0.98", _at_least(retention, 0.98)),
        ("retention_of_month1_kept", of_kept, ">= 0.98 (of those month 1 kept)", _at_least(of_kept, 0.98)),
        ("current_state", current, ">= 0.95", _at_least(current, 0.95)),
        ("stale_first", stale, "<= 0.02", _at_most(stale, 0.02)),
        ("update_accuracy", update, ">= 0.95", _at_least(update, 0.95)),
        ("hallucinated", hallucinated, "== 0", hallucinated == 0),
        ("facts_lost_by_consolidation", lost, "== 0", None if lost is None else lost == 0),
        ("core_within_budget", within, "every checkpoint", within),
        ("ingest_growth", ratio, "<= 1.5 (last / month 1)", _at_most(ratio, 1.5)),
        ("ingest_cpu_growth", cpu, "<= 1.5 (last / month 1, CPU seconds)", _at_most(cpu, 1.5)),
    ]  # fmt: skip
    return {name: {"value": v, "target": t, "met": met} for name, v, t, met in found}


def _growth(first: Row, last: Row, name: str) -> float | None:
    """`name` at the last checkpoint over month 1's, or None where either lacks it."""
    began, ended = figure(first, name), figure(last, name)
    return round(ended / began, 3) if began and ended is not None else None


def _at_least(v: float | None, bound: float) -> bool | None:
    return None if v is None else v >= bound


def _at_most(v: float | None, bound: float) -> bool | None:
    return None if v is None else v <= bound


def summary(rows: Sequence[Row], settings: JsonObject, months: Sequence[Row]) -> JsonObject:
    return {
        "settings": settings,
        "checkpoints": list(rows),
        "consolidations": [
            {"month": m.get("month"), **obj(m["consolidation"])} for m in months if "consolidation" in m
        ],
        "targets": targets(rows),
    }


def write_summary(folder: Path, data: JsonObject) -> None:
    write_atomic(folder / SUMMARY, json.dumps(data, indent=2).encode("utf-8"))


def table(rows: Sequence[Row], title: str) -> Table:
    t = Table(title=title)
    for name, _ in COLUMNS:
        t.add_column(name, justify="right")
    for r in rows:
        t.add_row(*(_shown(get(r)) for _, get in COLUMNS))
    return t


def _shown(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}" if isinstance(v, float) and abs(v) < 100 else str(v)


def targets_table(found: JsonValue) -> Table:
    """`targets`' verdicts (a summary's `targets`) as a table."""
    t = Table(title="targets at the last checkpoint")
    for name in ("target", "value", "bound", "met"):
        t.add_column(name)
    for name, part in obj(found).items():
        d = obj(part)
        met = d.get("met")
        shown = ("yes" if met else "NO") if isinstance(met, bool) else "n/a"
        t.add_row(name, str(d.get("value")), str(d.get("target")), shown)
    return t


Series = tuple[tuple[str, Figure], ...]
PANELS: dict[str, tuple[str, Series]] = {
    "retention": (
        "month-1 facts kept",
        (
            ("of those stated", lambda r: figure(r, "retention")),
            ("of those month 1 kept", lambda r: figure(r, "retention_of_month1_kept")),
        ),
    ),
    "accuracy": (
        "answers and updates",
        (
            ("current state", lambda r: figure(r, "current_state")),
            ("previous state", lambda r: figure(r, "previous_state")),
            ("update accuracy", lambda r: figure(r, "update_accuracy")),
            ("stale-first rate", lambda r: figure(r, "stale_first", "stale_first_rate")),
        ),
    ),
    "size": (
        "store size",
        (
            ("files", lambda r: figure(r, "shape", "files")),
            ("dirs", lambda r: figure(r, "shape", "dirs")),
            ("fanout max", lambda r: figure(r, "shape", "fanout_max")),
        ),
    ),
    "shape": (
        "store shape",
        (
            ("depth mean", lambda r: figure(r, "shape", "depth_mean")),
            ("fanout mean", lambda r: figure(r, "shape", "fanout_mean")),
        ),
    ),
    "taxonomy": (
        "taxonomy panel (B1-B4)",
        (
            ("B1 mean", lambda r: figure(r, "shape", "b1_mean")),
            ("B2", lambda r: figure(r, "shape", "b2")),
            ("B3", lambda r: figure(r, "shape", "b3")),
            ("B4", lambda r: figure(r, "shape", "b4")),
        ),
    ),
    "core": (
        "core memory tokens against the budget (log)",
        (
            ("core memory", lambda r: figure(r, "core_tokens")),
            ("context budget", lambda r: figure(r, "core_budget")),
        ),
    ),
    "indexes": (
        "folder indexes (MEMORY.md)",
        (
            ("KB, all", lambda r: _kb(figure(r, "index_bytes"), 3)),
            ("files", lambda r: figure(r, "index_files")),
        ),
    ),
    "cost": (
        "cost",
        (
            ("ingest s / session", lambda r: figure(r, "ingest_seconds_per_session")),
            ("ingest CPU s / session", lambda r: figure(r, "ingest_cpu_seconds_per_session")),
            ("search KB read / question", lambda r: _kb(figure(r, "search_bytes_per_question"))),
        ),
    ),
    "consolidation": (
        "facts lost by consolidation (cumulative)",
        (("facts lost", lambda r: figure(r, "facts_lost_by_consolidation")),),
    ),
}
LOG = frozenset({"core"})


def plot(rows: Sequence[Row], folder: Path, title: str) -> list[Path]:
    """One PNG per panel (`PANELS`) in `folder`; a panel with no value at all is left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    months = [count(r.get("month")) for r in rows]
    for name, (label, series) in PANELS.items():
        lines = [(s, [get(r) for r in rows]) for s, get in series]
        if not any(v is not None for _, ys in lines for v in ys):
            continue
        fig, ax = plt.subplots(figsize=(5, 3.2), dpi=90)
        for s, ys in lines:
            pts = [(m, y) for m, y in zip(months, ys, strict=True) if y is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=s)
        if name in LOG:
            ax.set_yscale("log")
        ax.set_xlabel("month")
        ax.set_xticks(months)
        ax.set_title(f"{title}: {label}", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = folder / f"horizon-{name}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written
