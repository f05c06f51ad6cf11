"""Guidance synthesis without a model: the GS variant's offline baseline.

The GS variant serves the execution agent a short task-specific text instead of whole files.
With a model, the guidance role reads the store and writes it. Offline, this module writes it
mechanically from the entries strict serving would have served (the family's skill and the
notes on the task's objects): the procedure with the task's own objects substituted for the
placeholders, and the evidence of where each object was found or seen, deduplicated and
counted (`x3`), strongest first. It sees only the task text, as the model's search agent does;
matching evidence to the room being played is left to the executor.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from memdir.conventions import EPISODE
from memdir_study.bench.alfworld import parse_goal
from memdir_study.skills.hints import FACT, W_SEEN, W_TAKEN
from memdir_study.skills.retrieve import Doc

_PROCEDURE = re.compile(r"^## Procedure\n(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_STEP = re.compile(r"^\d+\. (.+)$", re.MULTILINE)
_LOC = re.compile(EPISODE)
MAX_LOCATORS = 3  # per guidance line: enough to trace it, few enough to stay short


@dataclass
class Guidance:
    text: str
    cited: list[str] = field(default_factory=list)


def _procedure(docs: list[Doc], family: str, subst: dict[str, str]) -> tuple[list[str], str | None]:
    for d in docs:
        meta = d.metadata
        if meta.get("type") != "skill" or meta.get("family") != family:
            continue
        m = _PROCEDURE.search(d.text)
        if not m:
            continue
        steps = []
        for step in _STEP.findall(m.group(1)):
            for ph, value in subst.items():
                step = step.replace(ph, value)
            steps.append(step)
        return steps, d.path
    return [], None


def synthesize(task: str, family: str, docs: list[Doc]) -> Guidance:
    """Guidance for `task` from the served entries `docs`; one line saying so when nothing applies."""
    goal = parse_goal(task, family)
    wanted = [o for o in (goal.obj, goal.lamp) if o]
    subst = {
        "{obj}": goal.obj,
        "{target}": goal.target or "the target",
        "{lamp}": goal.lamp or "desklamp",
        "{place}": f"where the {goal.obj} is",
    }
    steps, skill = _procedure(docs, family, subst)
    cited = [skill] if skill else []
    weight: dict[tuple[str, str, str, str], int] = Counter()
    locs: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for d in docs:
        used = False
        for obj, kind, recep, room, times, loc_text in FACT.findall(d.text):
            if obj not in wanted:
                continue
            key = (obj, kind, recep, room)
            weight[key] += int(times or 1)
            locs[key] += [x for x in _LOC.findall(loc_text) if x not in locs[key]]
            used = True
        if used and d.path not in cited:
            cited.append(d.path)
    if not steps and not weight:
        return Guidance(f"Nothing in memory clearly applies to: {task}")
    lines = [f"Guidance for: {task}"]
    if steps:
        lines += ["", f"Procedure (from {skill}):", *(f"{n}. {s}" for n, s in enumerate(steps, start=1))]
    for obj in wanted:
        facts = [k for k in weight if k[0] == obj]
        if not facts:
            continue
        facts.sort(key=lambda k: (-weight[k] * (W_TAKEN if k[1] == "found" else W_SEEN), k))
        kinds: Counter[str] = Counter()
        for k in facts:
            kinds[k[2].rsplit(" ", 1)[0]] += weight[k]
        common = ", ".join(f"{kind} ({n})" for kind, n in kinds.most_common(5))
        lines += ["", f"Where {obj} objects were, most often: {common}. By room, strongest first:"]
        for k in facts:
            _, kind, recep, room = k
            room_part = f" (room {room})" if room else ""
            times = f" x{weight[k]}" if weight[k] > 1 else ""
            refs = "".join(f" [{x}]" for x in locs[k][:MAX_LOCATORS])
            lines.append(f"- {obj}: {kind} in {recep}{room_part}{times}{refs}")
    lines += ["", "Sources: " + ", ".join(cited)]
    return Guidance("\n".join(lines) + "\n", cited)
