"""The report's statistics tables, from `summary.json` alone: the paired comparisons (sign tests,
each with the sidedness it was run at) and the caching efficiency per cell (the paper's Table 18)."""

from __future__ import annotations

from memdir.sign_test import SIDEDNESS_LABELS
from memdir.study.eval.records import CellSummary, RunSummary


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
        "| variant | no-cache | measured | perfect | efficiency |",
        "|---|---|---|---|---|",
    ]
    for c, k in shown:
        eff = k.caching_efficiency
        name = f"{c.conversation} / {c.variant}" if many else c.variant
        lines.append(
            f"| {name} | {k.no_cache:,} | {k.measured:,} | {k.perfect:,} | "
            f"{'—' if eff is None else f'{100 * eff:.1f}%'} |"
        )
    return lines
