"""`revert`: put a store back as it was just before one of its journaled steps.

Reverting step N restores every file to its bytes in the journal's snapshot of step N-1: files
made since are removed, files removed since come back, and the rest get their old bytes. That is
exactly "undo step N" when N is the newest step and nothing was edited outside the tools since;
otherwise it also undoes what came later, so it is refused unless forced (docs/consolidate.md).
The restore is itself one new step (tool `revert`) written through the store's write API, so the
index and the journal follow it and a revert can be reverted in turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memdir.agents.landing import Plan, apply, digests, git_blob, plan, read
from memdir.errors import MemdirError
from memdir.store.journal import MEMORY_PREFIX, Journal, JournalStep
from memdir.store.store import Store

TOOL = "revert"
NAMED = 5


class RevertError(MemdirError):
    """The revert was refused; nothing was changed."""


@dataclass
class RevertReport:
    reverted: int  # the step undone
    tool: str  # what that step was (consolidate, str_replace, ...)
    restored: str  # the journal commit whose files the store now holds
    undone: list[int] = field(default_factory=list)  # every step whose effect this took back
    ops: Plan = field(default_factory=Plan)
    step: int | None = None  # the new step recording the revert; None when nothing had to change
    forced: bool = False

    def lines(self) -> list[str]:
        o = self.ops
        out = [f"renamed {a} -> {b}" for a, b in o.renames]
        out += [f"restored {p}" for p in o.writes]
        out += [f"recreated {p}" for p in o.creates]
        out += [f"removed {p}" for p in o.deletes]
        return out

    def verdict(self) -> str:
        if self.ops.empty:
            return f"nothing to revert: the store already holds its files as before step {self.reverted}"
        also = f" (undoing steps {self.undone[0]}-{self.undone[-1]})" if len(self.undone) > 1 else ""
        rec = f" as journal step {self.step}" if self.step is not None else ""
        return f"reverted step {self.reverted} ({self.tool}){also}{rec}"

    def as_json(self) -> dict[str, Any]:
        o = self.ops
        return {
            "reverted": self.reverted,
            "tool": self.tool,
            "restored": self.restored,
            "undone": self.undone,
            "step": self.step,
            "forced": self.forced,
            "verdict": self.verdict(),
            "renamed": [list(r) for r in o.renames],
            "restored_files": list(o.writes),
            "recreated": list(o.creates),
            "removed": list(o.deletes),
        }


def revert(store: Store, step: int, *, force: bool = False) -> RevertReport:
    """Restore the files of `store` to the snapshot just before journal step `step`, as one new
    step. Refused (RevertError, nothing changed) when later steps or edits made outside the tools
    would be undone too, unless `force`."""
    journal = Journal(store.root)
    if not journal.exists:
        raise RevertError(f"{store.root} has no journal, so there is no step to revert")
    with store.step(TOOL, reverted=step) as st:
        steps = journal.steps()
        _check_range(steps, step)
        current = digests(store, git_blob)
        _check_alone(journal, steps, step, current, force)
        before = steps[step - 1]
        target = _snapshot(journal, before.commit)
        undone = [s.index for s in steps[step:]]
        report = RevertReport(step, steps[step].tool, before.commit, undone, forced=force)
        report.ops = plan(current, target)
        st.meta.update(restored=before.commit[:12], undone=len(report.undone), forced=force or None)
        if report.ops.empty:
            return report
        try:
            new = _bytes(journal, report.ops.needed, target)
        except MemdirError as exc:
            raise RevertError(
                f"the store as it was before step {step} cannot be restored: {exc}; nothing was changed"
            ) from None
        apply(store, report.ops, new, read(store, report.ops.old_side))
    steps_after = journal.steps()
    if steps_after and steps_after[-1].tool == TOOL and len(steps_after) > len(steps):
        report.step = steps_after[-1].index
    return report


def _check_range(steps: list[JournalStep], step: int) -> None:
    last = len(steps) - 1
    if step == 0:
        raise RevertError(
            "step 0 is the baseline (the store before its first journaled step): there is no earlier "
            "state to restore"
        )
    if not 1 <= step <= last:
        raise RevertError(
            f"there is no step {step}: the journal has steps 0-{last} ('memdir history' lists them)"
        )


def _check_alone(
    journal: Journal, steps: list[JournalStep], step: int, current: dict[str, str], force: bool
) -> None:
    """Refuse, unless forced, a revert that would also take back later steps or edits the journal
    never saw (files that differ from its newest snapshot)."""
    if force:
        return
    later = steps[step + 1 :]
    if later:
        raise RevertError(
            f"step {step} is not the newest: steps {later[0].index}-{later[-1].index} came after it. "
            f"Reverting restores the store as it was just before step {step}, which undoes those too; "
            "pass --force to do that (every step stays in the journal and can itself be reverted)"
        )
    head = _snapshot(journal, steps[-1].commit)
    differ = sorted(p for p in current.keys() | head.keys() if current.get(p) != head.get(p))
    if differ:
        named = ", ".join(differ[:NAMED]) + (f" (+{len(differ) - NAMED} more)" if len(differ) > NAMED else "")
        raise RevertError(
            f"{len(differ)} file(s) differ from the journal's newest snapshot ({named}): edits made "
            "outside memdir's tools since. Reverting would lose them; pass --force to revert anyway"
        )


def _snapshot(journal: Journal, commit: str) -> dict[str, str]:
    """{memory path: blob id} of the files a journal snapshot holds."""
    return {MEMORY_PREFIX + rel: sha for rel, sha in journal.files_at(commit).items()}


def _bytes(journal: Journal, paths: list[str], target: dict[str, str]) -> dict[str, bytes]:
    blobs = dict(journal.blobs(sorted({target[p] for p in paths})))
    return {p: blobs[target[p]] for p in paths}
