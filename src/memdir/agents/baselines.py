"""Who plays a role: the model, through the tool loop, or the offline baseline. Chosen here, once.

Every role runner (`agents.run`, `agents.restructure`, and any role played outside them) asks
:func:`policy` for the function that does its work and calls it; none of them tests which kind
of model it holds. A baseline takes the same arguments as the model's play and acts through the
same harness, so its effort is metered the same way and its record line says `model: offline,
baseline: true`. Roles the baselines cannot play are named in `NO_BASELINE` with the reason a
user is shown; a plugin's role brings its own baseline or reason (`policy(baseline=)`,
`require_model(reason=)`), so the product names no role but its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from memdir.agents.feedback import FEEDBACKS, baseline
from memdir.agents.offline import OFFLINE_LABEL, Curator, LexicalSearcher, choose
from memdir.agents.offline.mend import mend_introduced
from memdir.agents.output import RoleExtra, RoleOutput
from memdir.agents.record import RecordIds, RunRecord
from memdir.agents.roles import Role
from memdir.errors import MemdirError
from memdir.models import Model, Usage
from memdir.models.base import LoggedCall
from memdir.store.moves import following_moves
from memdir.tools.profiles import Harness

Play = Callable[..., Awaitable[Any]]
"""A role's work: `(model, harness, role, record, ids, **values)`, returning a RoleOutput."""

NO_BASELINE = {
    "reorganize": "the offline baselines cannot reorganize a store; use a model",
}


def has_baseline(role: str) -> bool:
    return role in _BASELINES


def policy(role: str, model: Model, plays: Play, baseline: Play | None = None) -> Play:
    """`plays` (the model's way of doing `role`) for a model; the baseline for the offline one
    (`baseline`, where the caller brings its own). A role without a baseline, asked of the
    offline model, is refused with the reason."""
    if not model.is_offline:
        return plays
    if baseline is not None:
        return baseline
    if role not in _BASELINES:
        raise MemdirError(NO_BASELINE.get(role, f"the offline baselines cannot play {role}; use a model"))
    return _BASELINES[role]


def require_model(role: str, model: Model, reason: str | None = None) -> None:
    """Refuse the offline model for a role only a model can play, with the reason (`reason`, or
    the product's own in `NO_BASELINE`)."""
    if model.is_offline:
        raise MemdirError(
            reason or NO_BASELINE.get(role, f"the offline baselines cannot play {role}; use a model")
        )


def _record(
    record: RunRecord | None,
    role: str,
    harness: Harness,
    calls: list[LoggedCall],
    start: float,
    **ids: Any,
) -> None:
    if record is not None:
        record.write(
            "offline_step",
            role=role,
            **ids,
            **OFFLINE_LABEL,
            usage=Usage(calls=0).as_dict(),
            tool_calls=len(calls),
            calls=calls,
            harness={k: v for k, v in harness.meter.as_dict().items() if k != "seconds"},
            seconds=round(time.perf_counter() - start, 6),
        )


async def _manage(
    model: Model, harness: Harness, role: Role, record: RunRecord | None, ids: RecordIds, **values: Any
) -> RoleOutput:
    """The curator files the chunk; with `feedback="health"`, the findings it introduced are then
    mended by rule (offline/mend.py), the offline counterpart of the model's extra round
    (agents/feedback.py), in an offline step of its own marked `feedback`."""
    feedback = values.get("feedback", "none")
    if feedback not in FEEDBACKS:
        raise MemdirError(f"unknown feedback {feedback!r}; choose one of {', '.join(FEEDBACKS)}")
    with following_moves(harness.store) as moved:
        before = await asyncio.to_thread(baseline, harness.store, feedback)
        start = time.perf_counter()
        r = await asyncio.to_thread(Curator(harness).integrate, values["chunk_obj"])
        _record(record, role.name, harness, r.tool_calls, start, **ids)
        summary = f"{r.facts_written} fact line(s), {r.keyed_written} keyed, {r.superseded} superseded"
        writes = harness.meter.writes
        if before is not None:
            start = time.perf_counter()
            # Its own harness on the same store and profile: its calls are journaled as the
            # chunk's, and its meter is the mend's alone, so the record lines count no call twice.
            mender = Harness(harness.store, harness.profile, config=harness.config, **harness.meta)
            fb = await asyncio.to_thread(mend_introduced, mender, before, record, role.name, ids, moved)
            if fb.mend is not None:
                _record(record, role.name, mender, fb.mend.tool_calls, start, **ids, feedback=True)
            summary += f"; {fb.summary()}"
            writes += mender.meter.writes
    return RoleOutput(role.name, "offline", summary, baseline=True, extra={"writes": writes})


async def _search(
    model: Model, harness: Harness, role: Role, record: RunRecord | None, ids: RecordIds, **values: Any
) -> RoleOutput:
    start = time.perf_counter()
    res = await asyncio.to_thread(LexicalSearcher(harness).search, values["question"])
    _record(
        record, role.name, harness, res.tool_calls, start, **ids, answer=res.answer, citations=res.citations
    )
    extra: RoleExtra = {"files_opened": len(harness.meter.files_touched)}
    return RoleOutput(role.name, "offline", res.answer, res.answer, res.citations, baseline=True, extra=extra)


async def _choose(
    model: Model, harness: Harness, role: Role, record: RunRecord | None, ids: RecordIds, **values: Any
) -> RoleOutput:
    start = time.perf_counter()
    c = await asyncio.to_thread(choose, harness, values["question"], values["options"])
    _record(record, "choice", harness, c.tool_calls, start, **ids, choice=c.index)
    extra: RoleExtra = {"choice": c.index, "scores": c.scores}
    return RoleOutput("choice", "offline", c.option, c.option, c.citations, baseline=True, extra=extra)


_BASELINES: dict[str, Play] = {
    "management": _manage,
    "answer": _search,
    "choice": _choose,
}
