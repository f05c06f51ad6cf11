"""The skill run's two deployment bills and the executor's invalid actions, from its task rows.

The paper prices a skill run's deployment as two bills (Table 16): the search agent's, choosing
entries or writing GS guidance before each task, and the executor's. The search bill of a store
that only grows climbs along the chain (Figure 7: the episode log's cumulative cost), so it is
reported per task, in all, and as a cumulative curve. The invalid-action rate is the share of
executor steps that sent an action not admissible in the state it was sent in (the paper's
19-40%). Rows written before these were recorded lack them and count as zero, or as unknown for
the rate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from memdir_study.skills.folder import Bills, PlotStyle, SkillCell, TaskRow

SEARCH_COST_PNG = "search_cost.png"


def cumulative(rows: Sequence[TaskRow], key: Literal["search_cost_usd"]) -> list[float]:
    """Per chain position, the running sum of `key`, averaged over the chains the rows span."""
    per_chain: dict[int, list[TaskRow]] = defaultdict(list)
    for r in rows:
        per_chain[r["chain"]].append(r)
    series = []
    for rs in per_chain.values():
        acc, out = 0.0, []
        for r in sorted(rs, key=lambda r: r["index"]):
            acc += float(r.get(key, 0.0))
            out.append(acc)
        series.append(out)
    n = min((len(s) for s in series), default=0)
    return [round(sum(s[i] for s in series) / len(series), 6) for i in range(n)]


def bills(rows: Sequence[TaskRow]) -> Bills:
    """One cell's search and execution bills, its search cost's climb, and its invalid actions."""
    n = len(rows)
    search = sum(r.get("search_cost_usd", 0.0) for r in rows)
    execution = sum(r.get("execution_cost_usd", 0.0) for r in rows)
    counted = [r for r in rows if "invalid_actions" in r]
    steps = sum(r["steps"] for r in counted)
    invalid = sum(r["invalid_actions"] for r in counted)
    return {
        "search_cost_usd": round(search, 6),
        "search_cost_per_task_usd": round(search / n, 6) if n else None,
        "execution_cost_usd": round(execution, 6),
        "execution_cost_per_task_usd": round(execution / n, 6) if n else None,
        "search_cost_cumulative_usd": cumulative(rows, "search_cost_usd"),
        "invalid_actions": invalid if counted else None,
        "invalid_action_rate": round(invalid / steps, 4) if counted and steps else None,
    }


def bill_lines(cells: Sequence[SkillCell]) -> list[str]:
    """The report's section on the two bills and the invalid actions."""
    lines = [
        "",
        f"## Search and execution bills (the search bill's climb: {SEARCH_COST_PNG})",
        "",
        "| variant | search $/task | execution $/task | search $ (chain total) | invalid actions "
        "| invalid actions (% of steps) |",
        "|---|---|---|---|---|---|",
    ]
    for c in cells:
        rate = c.get("invalid_action_rate")
        lines.append(
            f"| {c['variant']} | {_usd(c.get('search_cost_per_task_usd'))} | "
            f"{_usd(c.get('execution_cost_per_task_usd'))} | {_usd(c.get('search_cost_usd'))} | "
            f"{'–' if c.get('invalid_actions') is None else c['invalid_actions']} | "
            f"{'–' if rate is None else format(100 * rate, '.1f')} |"
        )
    return lines


def _usd(x: float | None) -> str:
    return "–" if x is None else f"{x:.4f}"


def plot_search_cost(
    run: Path, rows: Sequence[TaskRow], variants: list[str], style: Callable[[str], PlotStyle]
) -> str:
    """The cumulative search cost along the chain, one curve per variant (mean over chains)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for v in variants:
        ys = cumulative([r for r in rows if r["variant"] == v], "search_cost_usd")
        ax.plot(range(1, len(ys) + 1), ys, label=v, **style(v))
    ax.set_xlabel("task position in chain")
    ax.set_ylabel("cumulative search cost (USD)")
    ax.set_title("Search bill along the chain")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(run / SEARCH_COST_PNG, dpi=110)
    plt.close(fig)
    return SEARCH_COST_PNG
