"""Live health feedback in the management loop (`--feedback health`).

The management protocol (docs/study.md, "Roles") gives the agent no signal about the store it is
shaping, and organization erodes as the store grows (docs/health.md). With feedback on, the
store's health is taken before and after each chunk's episode; the findings the episode
*introduced* (by key: `analytics.health.introduced`) go back to the agent as one more user turn
of the same conversation, and it gets FEEDBACK_ROUNDS more rounds to mend them. Findings that
were there before the episode are not its doing and are not sent. Every feedback turn is a
`feedback` line of the run record, and what remained after it a `feedback_result` line. Without
the flag nothing changes: the protocol as the paper gives it stays the default.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from memdir.agents.loop import Episode, run_loop
from memdir.agents.mend_gate import before_round, lost_sources, undo_round
from memdir.agents.record import RecordIds, RecordLine, RunRecord
from memdir.agents.roles import Role
from memdir.analytics.health import Finding, HealthReport, health, introduced
from memdir.models import Model
from memdir.store.moves import MoveLog
from memdir.store.store import Store
from memdir.tools.guards import store_limits
from memdir.tools.profiles import Harness

Feedback = Literal["none", "health"]
FEEDBACKS: tuple[Feedback, ...] = ("none", "health")
# One extra round per chunk: enough to make the edits a finding names (each says which file
# and what to do), and a bound on what feedback can add to a build's cost.
FEEDBACK_ROUNDS = 1
MAX_SHOWN = 8  # findings written into the turn; the rest are counted


def baseline(store: Store, feedback: Feedback) -> HealthReport | None:
    """The health before an episode, when feedback is on."""
    return store_health(store) if feedback == "health" else None


def store_health(store: Store) -> HealthReport:
    """`health` against the store's own limits (its guards' cap and budget, else the defaults),
    as the `health` tool measures, so the feedback and the tool agree."""
    cap, budget = store_limits(store)
    return health(store, fanout_cap=cap, core_budget=budget)


def message(found: list[Finding]) -> str:
    """The feedback turn: what the episode just introduced, each with its path and action."""
    lines = [
        f"Your edits to the memory introduced {len(found)} problem(s). Mend them now with your "
        "tools, then reply that you are done:"
    ]
    for f in found[:MAX_SHOWN]:
        lines.append(f"- [{f.kind}] {f.path}: {f.message} Suggested: {f.action}")
    if len(found) > MAX_SHOWN:
        lines.append(f"- ... and {len(found) - MAX_SHOWN} more of the same kinds")
    return "\n".join(lines)


async def mend(
    model: Model,
    harness: Harness,
    role: Role,
    record: RunRecord | None,
    ids: RecordIds,
    episode: Episode,
    before: HealthReport,
    moved: MoveLog,
) -> Episode | None:
    """One feedback turn after `episode`, when it introduced findings; None when it did not.
    `moved`: the renames made since `before` was taken, so a moved file's findings stay old."""
    found = introduced(before, store_health(harness.store), moved.moves)
    if not found:
        if record is not None:
            record.write("feedback", role=role.name, **ids, introduced=0, findings=[])
        return None
    if record is not None:
        record.write(
            "feedback",
            role=role.name,
            **ids,
            introduced=len(found),
            findings=[{"kind": f.kind, "path": f.path, "key": f.key} for f in found],
        )
    capped = replace(role, round_cap=FEEDBACK_ROUNDS)
    kept = before_round(harness.store)
    fed: RecordIds = {**ids, "feedback": True}
    extra = await run_loop(
        model,
        harness,
        capped,
        "",
        message(found),
        record=record,
        prior=episode.messages,
        **fed,
    )
    lost = lost_sources(harness.store, kept)
    if lost:  # a mend never costs a source: the round is undone whole (agents/mend_gate.py)
        undo_round(harness.store, kept, **harness.meta)
    left = {f.key for f in introduced(before, store_health(harness.store), moved.moves)}
    if record is not None:
        record.write(
            "feedback_result",
            role=role.name,
            **ids,
            introduced=len(found),
            mended=sum(1 for f in found if f.key not in left),
            remaining=len(left),
            rounds=extra.rounds,
            tool_calls=extra.tool_calls,
            writes=extra.writes,
            undone=bool(lost),
            lost_sources=lost,
        )
    return extra


def merged(episode: Episode, extra: Episode | None) -> Episode:
    """The chunk's episode with its feedback turn folded in: one unit of work, one cost."""
    if extra is None:
        return episode
    return replace(
        episode,
        final=extra.final or episode.final,
        messages=extra.messages,
        rounds=episode.rounds + extra.rounds,
        tool_calls=episode.tool_calls + extra.tool_calls,
        usage=episode.usage + extra.usage,
        round_usage=[*episode.round_usage, *extra.round_usage],
        seconds=episode.seconds + extra.seconds,
        writes=episode.writes + extra.writes,
        files_opened=episode.files_opened + extra.files_opened,
    )


@dataclass(frozen=True)
class FeedbackTotals:
    """What feedback did over a run, from its record's `feedback_result` lines."""

    turns: int  # feedback turns sent (chunks whose episode introduced a finding)
    introduced: int
    mended: int
    undone: int = 0  # rounds undone because they lost a source (agents/mend_gate.py)

    def line(self) -> str:
        if self.turns == 0:
            return "feedback: no episode introduced a health finding"
        undone = f"; {self.undone} round(s) undone for losing a source" if self.undone else ""
        return (
            f"feedback: {self.turns} chunk(s) introduced {self.introduced} finding(s); "
            f"{self.mended} mended in their extra round{undone}"
        )


def feedback_totals(entries: list[RecordLine]) -> FeedbackTotals:
    rows = [e for e in entries if e.get("kind") == "feedback_result"]
    return FeedbackTotals(
        len(rows),
        sum(int(r.get("introduced", 0)) for r in rows),
        sum(int(r.get("mended", 0)) for r in rows),
        sum(1 for r in rows if r.get("undone")),
    )
