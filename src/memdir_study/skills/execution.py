"""The skill setting: the execution agent acting in a text environment, trajectories rendered as
chunks, and the management agent distilling them into skills (and, for skills+mem, notes).

The environment is anything with `reset() -> str` and `step(action) -> (observation, done,
won)`; ALFWorld's wrapper lives with the benchmark loaders. The execution agent runs at
temperature 0 for at most 50 environment steps, appending to one conversation.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Protocol

from memdir.agents.baselines import require_model
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.agents.roles import render
from memdir.agents.run import run_role
from memdir.models import ChatMessage, GenerateConfig, Model, Usage
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir_study.roles import NO_BASELINE, study_role

MAX_STEPS = 50
# An attempt is stopped when its last REPEAT_STOP steps are the same action with the same
# observation: at temperature 0 nothing new can happen. A small local model sent "examine
# armchair 1" step after step, each wasted step costing seconds
# (benchmarks/results/2026-12-06-docstring-figures.md, "memdir_study/skills/execution.py").
# Recorded as the episode's `stop`, so it is never mistaken for the study's 50-step cap.
REPEAT_STOP = 5
# An attempt is also stopped when its last NO_PROGRESS_STOP steps each repeated an (action,
# observation) pair it had already seen: the same local model took and put a mug and an egg on
# one countertop for 27 steps, never the same step five times running, and nothing it saw was new.
NO_PROGRESS_STOP = 12
NOTES_RULE = (
    "- Notes: also keep memory notes (`metadata: {type: note}`): lessons, warnings and observations "
    "from any attempt, failed ones included (where things were found, which actions the environment "
    "rejects, what went wrong). Keep notes apart from procedures, and say in each note when it applies."
)
NO_NOTES_RULE = "- Write procedures only; do not keep notes about failed attempts."
# The outcome gate, stated only to the variants the paper gates (skills+mem and its GS form);
# there the store enforces it too (tools/guards.py, `outcome_gate`).
GATE_RULE = (
    "- Outcome gate: only a successful attempt may create a procedure or extend one. A failed "
    "attempt never adds a step to a procedure."
)
# What the management agent reads when the executor was served nothing (the paper's C.6: the
# management agent's input holds the entries that were served, so it can mend the ones that misled).
NOTHING_SERVED = "(nothing was served before this attempt)"
# How the execution agent is told to act when the environment gives no rule of its own.
PLAIN_ACTIONS = "Reply with the action alone, in the environment's own command words."


class Environment(Protocol):
    def reset(self) -> str: ...

    def step(self, action: str) -> tuple[str, bool, bool]: ...


@dataclass
class Trajectory:
    episode: int
    task: str
    first_observation: str
    steps: list[tuple[str, str]] = field(default_factory=list)  # (action, observation)
    success: bool = False
    usage: Usage = field(default_factory=Usage)
    stop: str = "step_cap"  # done | step_cap | repeated_actions | no_progress

    def render(self) -> str:
        """The chunk the management agent reads: every step, with the episode's locator."""
        loc = f"E{self.episode}"
        lines = [
            f"Task [{loc}]: {self.task}",
            f"Outcome: {'success' if self.success else 'failure'}",
            f"Start: {self.first_observation.strip()}",
        ]
        for i, (action, obs) in enumerate(self.steps, start=1):
            lines.append(f"{i}. > {action}\n   {obs.strip()}")
        return "\n".join(lines)


def outcome_rules(*, notes: bool, gate: bool) -> str:
    """The management prompt's rules on outcomes: the gate where it applies, then notes or not."""
    return "\n".join([GATE_RULE] * gate + [NOTES_RULE if notes else NO_NOTES_RULE])


def parse_action(text: str) -> str:
    """The action in a reply: the first non-empty line, without 'Action:' or '>' markers."""
    for line in text.strip().splitlines():
        line = re.sub(r"^\s*(?:action\s*:|>)\s*", "", line.strip(), flags=re.I).strip('`*" ')
        if line:
            return line
    return ""


async def execute(
    model: Model,
    env: Environment,
    task: str,
    *,
    episode: int,
    guidance: str = "",
    max_steps: int = MAX_STEPS,
    record: RunRecord | None = None,
    variant: str | None = None,
    actions_rule: str = PLAIN_ACTIONS,
) -> Trajectory:
    """Attempt one task: one model call per environment step, the conversation appended each time.
    `actions_rule` tells the agent how to phrase an action (the environment's, skills/chain.py)."""
    require_model("execution", model, NO_BASELINE["execution"])
    role = study_role("execution")
    first = env.reset()
    system, user = render(
        role, guidance=guidance or "(none)", task=task, observation=first, actions_rule=actions_rule
    )
    messages = [ChatMessage("system", system), ChatMessage("user", user)]
    traj = Trajectory(episode, task, first)
    config = GenerateConfig(max_tokens=role.output_cap, temperature=role.temperature)
    seen: set[tuple[str, str]] = set()
    stale = 0  # steps in a row that showed nothing new
    for n in range(1, max_steps + 1):
        out = await model.generate(messages, [], config)
        traj.usage = traj.usage + out.usage
        action = parse_action(out.message.content)
        start = time.perf_counter()
        obs, done, won = env.step(action)
        traj.steps.append((action, obs))
        stale = stale + 1 if (action, obs) in seen else 0
        seen.add((action, obs))
        messages += [out.message, ChatMessage("user", obs)]
        if record is not None:
            record.write(
                "model_call",
                role=role.name,
                variant=variant,
                task=episode,
                round=n,
                model=model.name,
                usage=out.usage.as_dict(),
                action=action,
                observation_bytes=len(obs.encode()),
                env_seconds=round(time.perf_counter() - start, 6),
                done=done,
            )
        if done:
            traj.success, traj.stop = won, "done"
            break
        if len(traj.steps) >= REPEAT_STOP and len(set(traj.steps[-REPEAT_STOP:])) == 1:
            traj.stop = "repeated_actions"
            break
        if stale >= NO_PROGRESS_STOP:
            traj.stop = "no_progress"
            break
    if record is not None:
        record.write(
            "episode",
            role=role.name,
            variant=variant,
            task=episode,
            model=model.name,
            steps=len(traj.steps),
            success=traj.success,
            stop=traj.stop,
            usage=traj.usage.as_dict(),
        )
    return traj


async def manage_trajectory(
    model: Model,
    store: Store,
    traj: Trajectory,
    *,
    notes: bool = True,
    outcome_gate: bool | None = None,
    served: str = NOTHING_SERVED,
    record: RunRecord | None = None,
    profile: str | None = None,
    variant: str | None = None,
) -> RoleOutput:
    """Distil one attempt into the store: skills only (curated skills) or skills and notes (+mem).

    `served` is what the executor was given before the attempt (entries under their paths, or
    GS guidance), part of the agent's input as in the paper (C.6). `outcome_gate` (default: with
    notes, as the paper gates skills+mem only) states the gate in the prompt; the harness carries
    the attempt's outcome in its meta, so a store that enforces the gate
    (`Guards(outcome_gate=True)`) refuses a failed attempt's additions to a procedure.
    """
    require_model("management_skills", model, NO_BASELINE["management_skills"])
    variant = variant or ("curated-skills-mem" if notes else "curated-skills")
    role = study_role("management_skills", profile)
    outcome = "success" if traj.success else "failure"
    harness = Harness(
        store, role.profile or "manage", role=role.name, task=traj.episode, variant=variant, outcome=outcome
    )
    ep = await run_role(
        model,
        harness,
        role,
        record,
        {"variant": variant, "task": traj.episode},
        core_memory=spec.context(store).text,
        chunk=traj.render(),
        chunk_id=f"E{traj.episode}",
        outcome=outcome,
        outcome_rules=outcome_rules(notes=notes, gate=notes if outcome_gate is None else outcome_gate),
        served=served.strip() or NOTHING_SERVED,
    )
    return RoleOutput(role.name, model.name, ep.final, episode=ep)
