"""The journal's steps grouped back into the operations that made them (`operations.py`).

An operation's steps need not be consecutive: an MCP call made while an ingest ran lands between
two of the ingest's steps and is an operation of its own. So grouping is by id, and operations
are listed in the order their first steps were journaled. A step journaled before steps carried
an operation reads as an operation of its own, so an old journal lists as it always did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.store.journal.format import BASELINE, JournalStep
from memdir.store.operations import OperationTag

MIN_REF = 4  # hex digits of an id a person must give, as for a commit


@dataclass
class OperationSteps:
    """One operation and the steps it took, oldest first."""

    operation: OperationTag
    steps: list[JournalStep] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.operation.id

    @property
    def first(self) -> JournalStep:
        return self.steps[0]

    @property
    def last(self) -> JournalStep:
        return self.steps[-1]

    def paths(self) -> set[str]:
        """Every path the operation's steps changed (both ends of a rename)."""
        return set().union(*(s.paths() for s in self.steps))

    def span(self) -> str:
        """Its steps as a person reads them: `7`, `7-56`, or `7-56 (40 of them)` when other
        operations' steps came in between."""
        a, b, n = self.first.index, self.last.index, len(self.steps)
        if n == 1:
            return str(a)
        return f"{a}-{b}" if b - a + 1 == n else f"{a}-{b} ({n} of them)"

    def as_dict(self, *, steps: bool = False) -> JsonObject:
        out: dict[str, Any] = {
            "operation": self.id,
            "kind": self.operation.kind,
            "label": self.operation.label,
            "time": self.first.time,
            "end_time": self.last.time,
            "steps": [s.index for s in self.steps],
            "files": sorted(self.paths()),
        }
        if steps:
            out["step_records"] = [s.as_dict() for s in self.steps]
        return out


def group(steps: list[JournalStep]) -> list[OperationSteps]:
    """The operations of `steps`, in the order of their first steps."""
    found: dict[str, OperationSteps] = {}
    for s in steps:
        op = s.operation
        found.setdefault(op.id, OperationSteps(op)).steps.append(s)
    return list(found.values())


def find(groups: list[OperationSteps], ref: str) -> OperationSteps:
    """The operation `ref` names: its id, or MIN_REF+ leading hex digits of it."""
    ref = ref.strip().lower()
    if len(ref) < MIN_REF:
        raise MemdirError(
            f"name an operation by {MIN_REF} or more characters of its id ('memdir history ROOT' lists them)"
        )
    exact = [g for g in groups if g.id == ref]
    found = exact or [g for g in groups if g.id.startswith(ref)]
    if len(found) == 1:
        return found[0]
    if found:
        raise MemdirError(f"{ref!r} begins the ids of {len(found)} operations; give more of it")
    raise MemdirError(f"no operation {ref!r} in this store's history ('memdir history ROOT' lists them)")


def is_baseline(group: OperationSteps) -> bool:
    return group.first.index == 0 or group.first.tool == BASELINE
