"""health: the store's findings, each with its path and what to do (docs/health.md). Read-only.

The checks are `analytics.health` (tools may import analytics, which imports only store:
ARCHITECTURE.md). It is imported on the first call, not with the tool: it brings numpy and
scipy, which no other tool needs, and every harness loads every tool module.
The operator's guards set the limits when the store has them (a fanout cap, a core budget), so
a finding never disagrees with the guard that will refuse the write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir.errors import NotFoundError
from memdir.jsontypes import record_json
from memdir.tools import outputs
from memdir.tools.base import ToolContext, tool
from memdir.tools.guards import store_limits

if TYPE_CHECKING:
    from memdir.analytics.health import Finding

MAX_SHOWN = 20  # findings in the text; the model fixes these and calls again
MAX_DATA = 100  # findings in the structured result


@tool(
    description="""
    Check the memory for what to fix: a keyed fact still live in one file after it was superseded
    in another, 'see' references that point at nothing, folders with too many entries, core memory
    over its budget, near-duplicate sections, sections that fit another folder or file better,
    the most confusable pair of sibling names, over-long sections. Each finding names its path
    and a suggested action, the most urgent first. The checks cover the whole store; path narrows
    which findings are shown. Changes nothing.
    """,
    params={"path": "Folder or file whose findings to show (default /memories: all of them)."},
    read_only=True,
    title="Check the memory's health",
    output_schema=outputs.HEALTH,
)
def health(ctx: ToolContext, path: str = "/memories") -> str:
    from memdir.analytics import health as checks

    mp = ctx.store.parse(path)
    if not ctx.store.exists(mp):
        raise NotFoundError(
            f"{mp.text} does not exist; call health on a folder or file that does, or on /memories"
        )
    cap, budget = store_limits(ctx.store)
    report = checks.health(ctx.store, fanout_cap=cap, core_budget=budget)
    found = report.within(mp.text)
    counts = {k: 0 for k in checks.KINDS}
    for f in found:
        counts[f.kind] += 1
    ctx.data = {
        "path": mp.text,
        "total": len(found),
        "not_shown": max(0, len(found) - MAX_DATA),
        "counts": counts,
        "findings": [record_json(f.as_dict()) for f in found[:MAX_DATA]],
    }
    elsewhere = len(report.findings) - len(found)
    return _text(mp.text, found, counts, elsewhere, report.counts)


def _text(
    path: str, found: list[Finding], counts: dict[str, int], elsewhere: int, sizes: dict[str, int]
) -> str:
    more = f"; {elsewhere} more elsewhere in the store (call health on /memories)" if elsewhere else ""
    if not found:
        checked = f"{sizes.get('files', 0)} files, {sizes.get('units', 0)} sections checked"
        return f"health of {path}: no findings, nothing to fix ({checked}){more}."
    kinds = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    lines = [f"health of {path}: {len(found)} findings ({kinds}), most urgent first{more}."]
    for i, f in enumerate(found[:MAX_SHOWN], start=1):
        lines.append(f"{i}. [{f.kind}] {f.message}")
        lines.append(f"   do: {f.action}")
    if len(found) > MAX_SHOWN:
        lines.append(f"({len(found) - MAX_SHOWN} more not shown; fix these and call health again)")
    return "\n".join(lines)
