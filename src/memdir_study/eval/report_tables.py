"""The report's statistics tables, from `summary.json` alone: the paired comparisons (sign tests,
each with the sidedness it was run at), the caching efficiency per cell (the paper's Table 18) and
the composite's change between two runs of the same cells (`composite.py`)."""

from __future__ import annotations

from memdir.models.usage import Bounds
from memdir.sign_test import SIDEDNESS_LABELS
from memdir_study.eval.composite import points
from memdir_study.eval.records import CellSummary, RunSummary, ScoreColumn


def paired_table(summary: RunSummary) -> list[str]:
    """A row per comparison of `summary.paired` (eval/stats.COMPARISONS); empty without any."""
    rows = summary.paired
    if not rows:
        return []
    many = len({(r.benchmark, r.conversation) for r in rows}) > 1
    lines = [
        "",
        "## Paired comparisons (sign test on per-question correctness)",
        "",
        "Ties are dropped. One-sided where the claim has a direction (a store beats the closed-book "
        "floor: p is the chance of this many wins or more), two-sided where either may win (against "
        "the verbatim dump).",
        "",
        "| variant | against | wins | losses | ties | sidedness | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        name = f"{r.conversation} / {r.variant}" if many else r.variant
        lines.append(
            f"| {name} | {r.against} | {r.wins} | {r.losses} | {r.ties} | "
            f"{SIDEDNESS_LABELS.get(r.sidedness, r.sidedness)} | {r.p_value:.3f} |"
        )
    return lines


def caching_table(cells: list[CellSummary]) -> list[str]:
    """Per cell, the search's intrinsic bounds summed over its questions and the caching
    efficiency `(no-cache - measured) / (no-cache - perfect)`; empty when no cell has bounds."""
    shown = [(c, c.caching) for c in cells if c.caching]
    if not shown:
        return []
    many = len({c.conversation for c in cells}) > 1
    lines = [
        "",
        "## Caching efficiency of search (tokens summed over the cell's questions)",
        "",
        "no-cache: every prompt paid in full; measured: uncached input as billed; perfect: each "
        "prompt token paid once. Efficiency: the share of the saving a perfect cache allows that the "
        "run's cache made, `(no-cache - measured) / (no-cache - perfect)` (Table 18).",
        "",
        "| variant | no-cache | measured | perfect | measured/perfect | efficiency |",
        "|---|---|---|---|---|---|",
    ]
    for c, k in shown:
        eff = k.caching_efficiency
        name = f"{c.conversation} / {c.variant}" if many else c.variant
        lines.append(
            f"| {name} | {k.no_cache:,} | {k.measured:,} | {k.perfect:,} | {_ratio(k.measured, k.perfect)} | "
            f"{'—' if eff is None else f'{100 * eff:.1f}%'} |"
        )
    return lines


def composite_change_table(before: RunSummary, after: RunSummary, before_name: str) -> list[str]:
    """The study's run-to-run variation: each cell both runs hold, its composite in each and
    the change in points (the paper saw +4.0, -2.7, +0.6 and +2.8); a cell one run lacks, or
    one without an LLM judge's composite, is listed as such rather than dropped."""
    old = {_cell_key(c): c for c in before.cells}
    lines = [
        "",
        f"## Run-to-run change of the composite (this run against {before_name})",
        "",
        "| cell | before | after | change (points) |",
        "|---|---|---|---|",
    ]
    for c in after.cells:
        b = old.get(_cell_key(c))
        was = _mean(b.composite) if b else None
        now = _mean(c.composite)
        change = points(was, now)
        lines.append(
            f"| {c.conversation} / {c.variant} | {_show(was) if b else 'not in that run'} | {_show(now)} | "
            f"{'—' if change is None else f'{change:+.1f}'} |"
        )
    return lines


def _ratio(measured: int, perfect: int) -> str:
    ratio = Bounds(0, measured, perfect).measured_over_perfect
    return "—" if ratio is None else f"{ratio:.2f}x"


def _cell_key(c: CellSummary) -> tuple[str, str, str]:
    return (c.benchmark, c.conversation, c.variant)


def _mean(column: ScoreColumn | None) -> float | None:
    return column.all.mean if column else None


def _show(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}"
