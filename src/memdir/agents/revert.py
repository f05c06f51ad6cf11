"""`revert`: put a store back as it was just before one of its journaled steps.

Reverting step N restores every file to its bytes in the journal's snapshot of step N-1: files
made since are removed, files removed since come back, and the rest get their old bytes. That is
exactly "undo step N" when N is the newest step and nothing was edited outside the tools since;
otherwise it also undoes what came later, so it is refused unless forced (docs/consolidate.md).
The restore is itself one new step (tool `revert`) written through the store's write API, so the
index and the journal follow it and a revert can be reverted in turn. A file the undone steps
moved is moved back, then rewritten when they changed its bytes too (`moved_back`), so it keeps
its mode: a note `adopt --rename` made `travel-plans.md` is `Travel Plans.md` again with
the mode it had, not a new private file.

Reverting an operation (`revert_operation`: an ingest, an `add`, a consolidate, an adopt, one
tool call; `store/operations.py`) restores only the files its steps changed, to their bytes just
before its first step, so a later operation on other files stays. It is refused unless forced when
a step of another operation changed one of those files after the operation began, or an edit
made outside the tools did: restoring them would undo that work too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.agents.landing import Plan, apply, digests, git_blob, plan, read
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.store.journal import MEMORY_PREFIX, Journal, JournalStep, OperationSteps, find, group, is_baseline
from memdir.store.operations import LABEL_KEY, operation
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
    operation: str | None = None  # the operation undone, when one was named (`revert_operation`)
    label: str = ""  # that operation's kind and label

    def lines(self) -> list[str]:
        o = self.ops
        out = [f"renamed {a} -> {b}" for a, b in o.renames]
        out += [f"restored {p}" for p in o.writes]
        out += [f"recreated {p}" for p in o.creates]
        out += [f"removed {p}" for p in o.deletes]
        return out

    def verdict(self) -> str:
        if self.operation is not None:
            return self._operation_verdict()
        if self.ops.empty:
            return f"nothing to revert: the store already holds its files as before step {self.reverted}"
        also = f" (undoing steps {self.undone[0]}-{self.undone[-1]})" if len(self.undone) > 1 else ""
        rec = f" as journal step {self.step}" if self.step is not None else ""
        return f"reverted step {self.reverted} ({self.tool}){also}{rec}"

    def _operation_verdict(self) -> str:
        n = len(self.undone)
        what = f"operation {self.operation} ({self.label}; {n} step{'s' if n != 1 else ''})"
        if self.ops.empty:
            return f"nothing to revert: the files {what} changed already hold their bytes from before it"
        rec = f" as journal step {self.step}" if self.step is not None else ""
        return f"reverted {what}: its files put back as they were before step {self.reverted}{rec}"

    def as_json(self) -> JsonObject:
        o = self.ops
        return {
            **({"operation": self.operation, "label": self.label} if self.operation else {}),
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
    with operation(store.root, TOOL, f"revert step {step}"), store.step(TOOL, reverted=step) as st:
        steps = journal.steps()
        _check_range(steps, step)
        current = digests(store, git_blob)
        _check_alone(journal, steps, step, current, force)
        before = steps[step - 1]
        target = _snapshot(journal, before.commit)
        undone = [s.index for s in steps[step:]]
        report = RevertReport(step, steps[step].tool, before.commit, undone, forced=force)
        report.ops = plan(current, target, moved_back(steps[step:]))
        st.meta.update(restored=before.commit[:12], undone=len(report.undone), forced=force or None)
        if report.ops.empty:
            return report
        _land(store, journal, report, target, f"the store as it was before step {step}")
    return _numbered(journal, steps, report)


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


def moved_back(steps: list[JournalStep]) -> dict[str, str]:
    """{path now: path before `steps`} of every file they moved (renames followed in order, a file
    removed or made anew since forgotten): the moves a restore takes back, so a file whose bytes
    the steps changed as well (adopt's renamed note) is moved back and rewritten, keeping its
    mode, rather than removed and made again as a new private file."""
    origin: dict[str, str] = {}
    for s in steps:
        for c in s.changes:
            if c.kind == "rename" and c.new_path is not None:
                origin[c.new_path] = origin.pop(c.path, c.path)
            elif c.kind in ("create", "delete"):
                origin.pop(c.path, None)
    return {now: was for now, was in origin.items() if now != was}


def _bytes(journal: Journal, paths: list[str], target: dict[str, str]) -> dict[str, bytes]:
    blobs = dict(journal.blobs(sorted({target[p] for p in paths})))
    return {p: blobs[target[p]] for p in paths}


def revert_operation(store: Store, ref: str, *, force: bool = False) -> RevertReport:
    """Put every file operation `ref` (its id or 4+ leading characters of it) changed back to its
    bytes just before the operation's first step, as one new step; files it did not touch stay
    as they are. Refused (RevertError, nothing changed) when a later step of another operation,
    or an edit outside the tools, changed one of those files, unless `force`."""
    journal = Journal(store.root)
    if not journal.exists:
        raise RevertError(f"{store.root} has no journal, so there is no operation to revert")
    with operation(store.root, TOOL, f"revert operation {ref}"), store.step(TOOL) as st:
        steps = journal.steps()
        try:
            op = find(group(steps), ref)
        except MemdirError as exc:
            raise RevertError(str(exc)) from None
        if is_baseline(op):
            raise RevertError(
                "that is the baseline (the store before its first journaled step): there is no earlier "
                "state to restore"
            )
        touched = op.paths()
        current = digests(store, git_blob)
        before = steps[op.first.index - 1]
        target = {p: d for p, d in _snapshot(journal, before.commit).items() if p in touched}
        label = f"{op.operation.kind}: {op.operation.label}"
        report = RevertReport(op.first.index, op.first.tool, before.commit, [s.index for s in op.steps])
        report.forced, report.operation, report.label = force, op.id, label
        now = {p: d for p, d in current.items() if p in touched}
        report.ops = plan(now, target, moved_back(op.steps))
        if not report.ops.empty:  # files already as before it (reverted once): nothing to refuse
            _check_operation_alone(journal, steps, op, touched, current, force)
        st.meta.update(
            reverted_operation=op.id, restored=before.commit[:12], undone=len(op.steps), forced=force or None
        )
        st.meta[LABEL_KEY] = f"revert {op.id} ({op.operation.label})"
        if report.ops.empty:
            return report
        what = f"the files of operation {op.id} as they were before step {op.first.index}"
        _land(store, journal, report, target, what)
    return _numbered(journal, steps, report)


def _land(store: Store, journal: Journal, report: RevertReport, target: dict[str, str], what: str) -> None:
    """Write the planned restore: every old blob is read before the first write, so a journal
    that lost one refuses the whole revert with the store untouched."""
    try:
        new = _bytes(journal, report.ops.needed, target)
    except MemdirError as exc:
        raise RevertError(f"{what} cannot be restored: {exc}; nothing was changed") from None
    apply(store, report.ops, new, read(store, report.ops.old_side))


def _numbered(journal: Journal, steps: list[JournalStep], report: RevertReport) -> RevertReport:
    """The report with the step the revert landed as (the journal's newest, when it is one)."""
    steps_after = journal.steps()
    if steps_after and steps_after[-1].tool == TOOL and len(steps_after) > len(steps):
        report.step = steps_after[-1].index
    return report


def _check_operation_alone(
    journal: Journal,
    steps: list[JournalStep],
    op: OperationSteps,
    touched: set[str],
    current: dict[str, str],
    force: bool,
) -> None:
    """Refuse, unless forced, to restore a file that another operation's step changed between
    `op`'s steps, or that no longer holds its bytes from just after `op` (a later operation or an
    edit made outside the tools changed it). A later change since taken back (its operation
    reverted) is no conflict: the file holds `op`'s bytes again."""
    if force:
        return
    after = _snapshot(journal, op.last.commit)
    between = steps[op.first.index : op.last.index + 1]
    mixed = set().union(*(s.paths() & touched for s in between if s.operation.id != op.id))
    moved = sorted(mixed | {p for p in touched if current.get(p) != after.get(p)})
    if not moved:
        return
    later = [s for s in steps[op.first.index :] if s.operation.id != op.id and s.paths() & set(moved)]
    if later:
        ids = list(dict.fromkeys(s.operation.id for s in reversed(later)))
        raise RevertError(
            f"operation {op.id} changed {_named(moved)}, which {len(ids)} later operation(s) changed "
            f"again ({', '.join(ids[:NAMED])}, newest first). Reverting it would undo their changes to "
            "these files too. Revert those operations first, newest first ('memdir revert ROOT "
            "--operation ID'), or pass --force to put these files back anyway"
        )
    raise RevertError(
        f"{len(moved)} file(s) operation {op.id} changed differ from the journal's record of them "
        f"({_named(moved)}): edits made outside memdir's tools since. Reverting would lose them; "
        "pass --force to revert anyway"
    )


def _named(paths: list[str]) -> str:
    return ", ".join(paths[:NAMED]) + (f" (+{len(paths) - NAMED} more)" if len(paths) > NAMED else "")
