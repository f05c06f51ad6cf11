"""`consolidate`: a reorganization pass over a live store that lands only when it is safe.

The reorganizer (preserve mode, `agents/restructure.reorganize`) works on a private working copy
while the live store stays open to everyone else. What it did lands only when every gate holds,
checked in this order (docs/consolidate.md):

- `cost_cap`: the pass stayed within its tokens, dollars and seconds (`agents/cost_cap.py`);
- `facts_lost`: `diff --facts` finds every sourced fact line of the store in the copy;
- `new_findings`: `check` finds nothing in the copy it did not find in the store already;
- `store_changed`: the live store is still what was copied, checked under the writer lock at
  landing time (someone else wrote meanwhile: the pass is stale).

A pass that lands is one step (tool `consolidate`) whose meta says what moved, merged and split;
`agents/revert.revert` undoes it. Otherwise nothing changes and the report names the gate.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memdir.agents.baselines import require_model
from memdir.agents.change_summary import ChangeSummary, summarize, unified_diff
from memdir.agents.cost_cap import CappedModel, CapReached, CostCap, tokens
from memdir.agents.landing import Plan, apply, digests, plan, read
from memdir.agents.record import RunRecord
from memdir.agents.restructure import reorganize
from memdir.agents.roles import REORG_PASSES
from memdir.analytics.integrity import CheckReport, Problem, check, diff_facts
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject, record_json
from memdir.models import Model, Usage, price_card
from memdir.store.journal import Journal
from memdir.store.operations import operation
from memdir.store.store import Store
from memdir.store.workcopy import scratch_copy

TOOL = "consolidate"
GATES = ("cost_cap", "facts_lost", "new_findings", "store_changed")
NAMED = 5  # facts, findings or files a gate message names before it counts the rest
_LINE = re.compile(r"(\.md):\d+")


@dataclass(frozen=True)
class Gate:
    """One condition for landing: its name (GATES), whether it held, and why, in words."""

    name: str
    passed: bool
    message: str
    numbers: JsonObject = field(default_factory=dict)

    def as_dict(self) -> JsonObject:
        return {"gate": self.name, "passed": self.passed, "message": self.message, **self.numbers}


@dataclass
class ConsolidationReport:
    model: str
    cap: CostCap
    dry_run: bool
    gates: list[Gate] = field(default_factory=list)
    summary: ChangeSummary = field(default_factory=ChangeSummary)
    landed: bool = False
    step: int | None = None  # the journal step that landed, when the store has a journal
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    seconds: float = 0.0
    stopped: str | None = None  # why the cost cap cut the pass short
    diff: str = ""  # dry run: the unified diff of every changed file

    @property
    def failed(self) -> list[Gate]:
        return [g for g in self.gates if not g.passed]

    @property
    def changed(self) -> bool:
        return not self.summary.empty

    def verdict(self) -> str:
        """One line: what happened to the store."""
        if self.failed:
            names = ", ".join(g.name for g in self.failed)
            return f"not landed: gate {names} failed; the store is unchanged"
        if not self.changed:
            return "nothing to land: the pass changed nothing"
        if self.dry_run:
            return "dry run: every gate held; nothing was landed"
        return f"landed as journal step {self.step}" if self.step is not None else "landed"

    def as_json(self) -> JsonObject:
        return {
            "landed": self.landed,
            "dry_run": self.dry_run,
            "step": self.step,
            "verdict": self.verdict(),
            "failed": [g.name for g in self.failed],
            "gates": [g.as_dict() for g in self.gates],
            "summary": self.summary.as_json(),
            "model": self.model,
            "cap": record_json(self.cap.as_dict()),
            "usage": record_json(self.usage.as_dict()),
            "tokens": tokens(self.usage),
            "cost_usd": self.cost_usd,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            **({"diff": self.diff} if self.dry_run else {}),
        }


async def consolidate(
    model: Model,
    store: Store,
    *,
    caps: CostCap | None = None,
    passes: int = REORG_PASSES,
    dry_run: bool = False,
    record: RunRecord | None = None,
) -> ConsolidationReport:
    """Reorganize a working copy of `store` (preserve mode, `passes` passes) and land the result
    as one journaled step if every gate holds; with `dry_run`, report and diff, land nothing.

    The writer lock is held only while the copy is taken and while the result lands, never
    during the model's run. A model failure other than the cap ends the call (nothing lands).
    """
    require_model("reorganize", model)
    cap = caps or CostCap()
    capped = CappedModel(model, cap, cap.card or price_card(model.name))
    report = ConsolidationReport(model.name, cap, dry_run)
    with contextlib.ExitStack() as stack:
        with store.writer_lock.hold():  # a consistent copy: no writer mid-step
            store.finish_landing()  # nor a landing another process was stopped in (reentrant lock)
            live = digests(store)
            base = stack.enter_context(scratch_copy(store))
        if digests(base) != live:
            raise MemdirError("the working copy does not hold the store's bytes; nothing was run")
        work = stack.enter_context(scratch_copy(base))
        findings_before = check(base)
        await _run(capped, model, work, passes, record, report)
        ops = plan(live, digests(work))
        old, new = read(base, ops.old_side), read(work, ops.needed)
        report.summary = summarize(ops, old, new)
        report.gates = [
            _cost_gate(capped),
            _facts_gate(base, work),
            _findings_gate(findings_before, check(work)),
        ]
        if dry_run:
            report.diff = unified_diff(ops, old, new)
        if dry_run or report.failed or ops.empty:
            report.gates.append(_changed_gate(live, digests(store)))
            return report
        keep = frozenset(e.path.text for e in work.walk() if e.is_dir)
        _land(store, ops, new, old, keep, live, report)
    return report


async def _run(
    capped: CappedModel,
    model: Model,
    work: Store,
    passes: int,
    record: RunRecord | None,
    report: ConsolidationReport,
) -> None:
    """The reorganizer's passes on the copy, stopped by the cap; what they spent goes on `model`."""
    capped.start = time.monotonic()
    try:
        await reorganize(capped, work, "preserve", passes=passes, record=record, variant="consolidate")
    except CapReached:
        pass  # the gate says so; what the copy holds now is discarded
    finally:
        capped.finish()
        capped.fold_into(model)
    report.usage, report.cost_usd, report.seconds = capped.usage, capped.cost_usd, capped.seconds
    report.stopped = capped.reached


def _land(
    store: Store,
    ops: Plan,
    new: dict[str, bytes],
    old: dict[str, bytes],
    keep: frozenset[str],
    live: dict[str, str],
    report: ConsolidationReport,
) -> None:
    """Apply `ops` as one step, after checking under its lock that the store is still `live`."""
    journal = Journal(store.root)
    head = journal.head()
    meta = {
        "role": "reorganize_preserve",
        "model": report.model,
        "tokens": tokens(report.usage),
        "cost_usd": round(report.cost_usd, 6) if report.cost_usd is not None else None,
        **report.summary.meta(),
    }
    with operation(store.root, TOOL, f"consolidate with {report.model}"), store.step(TOOL, **meta):
        gate = _changed_gate(live, digests(store))
        report.gates.append(gate)
        if not gate.passed:
            return  # nothing written: the step records no change and the journal no commit
        apply(store, ops, new, old, keep_dirs=keep)
    report.landed = True
    if journal.head() not in (None, head):
        report.step = len(journal.steps()) - 1


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def _cost_gate(capped: CappedModel) -> Gate:
    c, cost = capped.cap, capped.cost_usd
    numbers: JsonObject = {
        "tokens": tokens(capped.usage),
        "cost_usd": round(cost, 6) if cost is not None else None,
        "seconds": round(capped.seconds, 3),
        "calls": capped.usage.calls,
        **record_json(c.as_dict()),
    }
    if capped.reached is not None:
        return Gate("cost_cap", False, f"the pass passed its cost cap: {capped.reached}", numbers)
    spent = f"{numbers['tokens']:,} tokens" + (f", ${cost:.4f}" if cost is not None else "")
    spent += f", {capped.seconds:.1f} s in {_count(capped.usage.calls, 'model call')}"
    caps = ", ".join(
        f"{what} {'none' if v is None else v}"
        for what, v in (("tokens", c.max_tokens), ("dollars", c.max_usd), ("seconds", c.max_seconds))
    )
    return Gate("cost_cap", True, f"held: spent {spent}; caps: {caps}", numbers)


def _facts_gate(base: Store, work: Store) -> Gate:
    d = diff_facts(base, work)
    numbers: dict[str, Any] = {
        "facts": d.old_facts,
        "kept_in_place": d.kept_in_place,
        "moved": d.moved,
        "lost": len(d.missing),
    }
    if d.ok:
        msg = f"no sourced fact lost: {_count(d.old_facts, 'fact line')}, "
        msg += f"{d.kept_in_place:,} in place, {d.moved:,} moved"
        return Gate("facts_lost", True, msg, numbers)
    parts: list[str] = []
    if d.missing:
        named = "; ".join(f"{f.path}:{f.lineno} {f.text.strip()!r}" for f in d.missing[:NAMED])
        more = f" (+{len(d.missing) - NAMED} more)" if len(d.missing) > NAMED else ""
        parts.append(f"{_count(len(d.missing), 'sourced fact line')} lost: {named}{more}")
    if d.unread:
        unread = "; ".join(d.unread[:NAMED])
        parts.append(f"{_count(len(d.unread), 'entry')} of the store could not be read or compared: {unread}")
    numbers["missing"] = [f"{f.path}:{f.lineno}" for f in d.missing]
    return Gate("facts_lost", False, "; ".join(parts), numbers)


def _identity(p: Problem) -> tuple[str, str, str]:
    """A finding as the same finding after lines shift: rule, file and message, line numbers out."""
    return p.rule, _LINE.sub(r"\1", p.path), _LINE.sub(r"\1", p.message)


def _findings_gate(before: CheckReport, after: CheckReport) -> Gate:
    new = Counter(_identity(p) for p in after.problems) - Counter(_identity(p) for p in before.problems)
    fresh = [p for p in after.problems if new[_identity(p)] > 0]
    numbers: dict[str, Any] = {
        "before": len(before.problems),
        "after": len(after.problems),
        "new": len(fresh),
    }
    if not fresh:
        msg = f"no new findings ({len(before.problems):,} before, {len(after.problems):,} after)"
        return Gate("new_findings", True, msg, numbers)
    named = "; ".join(f"[{p.rule}] {p.path}: {p.message}" for p in fresh[:NAMED])
    more = f" (+{len(fresh) - NAMED} more)" if len(fresh) > NAMED else ""
    numbers["findings"] = [p.as_dict() for p in fresh]
    return Gate("new_findings", False, f"{_count(len(fresh), 'new finding')}: {named}{more}", numbers)


def _changed_gate(live: dict[str, str], now: dict[str, str]) -> Gate:
    differ = sorted(p for p in live.keys() | now.keys() if live.get(p) != now.get(p))
    if not differ:
        return Gate("store_changed", True, "the store did not change during the pass", {"changed": 0})
    named = ", ".join(differ[:NAMED]) + (f" (+{len(differ) - NAMED} more)" if len(differ) > NAMED else "")
    msg = f"the store changed during the pass ({_count(len(differ), 'file')}: {named}); run consolidate again"
    return Gate("store_changed", False, msg, {"changed": len(differ), "files": differ})
