"""The offline distiller: what a finished episode says, read mechanically.

`procedure` abstracts a winning action sequence to placeholders (`{obj}`, `{place}`,
`{target}`, `{lamp}`) so it transfers to other objects and rooms; `found_places` and
`sightings` are where objects were taken from or seen, the fact lines of skills and notes.
No model is involved: the offline curated variants are baselines built from these.
"""

from __future__ import annotations

import re
from collections import defaultdict

from memdir_study.bench.alfworld import STATIONS, parse_goal
from memdir_study.bench.alfworld_env import Episode
from memdir_study.skills.hints import IN, ITEM, ON


def sightings(episode: Episode) -> dict[str, list[str]]:
    """{object type: receptacles it was seen in}, from the episode's observations."""
    seen: dict[str, list[str]] = defaultdict(list)
    texts = [episode.intro, *(obs for _, obs in episode.steps)]
    here: str | None = None
    for (action, _), text in zip([("", ""), *episode.steps], texts, strict=True):
        if action.startswith("go to "):
            here = action.removeprefix("go to ")
        for recep, listing in [*ON.findall(text), *IN.findall(text)]:
            for obj in ITEM.findall(listing):
                if recep not in seen[obj]:
                    seen[obj].append(recep)
        if "In it, you see" in text and here and not IN.search(text):
            for obj in ITEM.findall(text.split("In it, you see", 1)[1]):
                if here not in seen[obj]:
                    seen[obj].append(here)
    return seen


def procedure(episode: Episode) -> list[str]:
    """The winning actions from the first take on, objects abstracted to placeholders."""
    goal = parse_goal(episode.task, episode.game.family)
    actions = [a for a, _ in episode.steps]
    start = next((i for i, a in enumerate(actions) if a.startswith("take ")), 0)
    subst: dict[str, str] = {}
    for a in actions[start:]:
        if a.startswith("take "):
            words = a.split()
            inst, place = " ".join(words[1:3]), " ".join(words[4:])
            subst[inst] = "{obj}"
            subst.setdefault(place, "{place}")
        elif a.startswith("put "):
            subst[" ".join(a.split()[-2:])] = "{target}"
        elif a.startswith("use "):
            subst[" ".join(a.split()[1:3])] = "{lamp}"
    steps: list[str] = []
    for a in actions[start:]:
        for inst, ph in subst.items():
            a = re.sub(rf"\b{re.escape(inst)}\b", ph, a)
        if not steps or steps[-1] != a:
            steps.append(a)
    if goal.family in STATIONS:
        steps.insert(0, f"find the {{obj}} (a {goal.obj} here); station: {STATIONS[goal.family][1]}")
    return steps


def found_places(episode: Episode) -> list[tuple[str, str]]:
    """(object type, receptacle) for every take, and for the lamp that was switched on."""
    out: list[tuple[str, str]] = []
    here = ""
    for action, obs in episode.steps:
        if action.startswith("go to ") and obs.startswith("You arrive"):
            here = action.removeprefix("go to ")
        if action.startswith("take ") and obs.startswith("You pick up"):
            out.append((action.split()[1], " ".join(action.split()[4:])))
        if action.startswith("use ") and obs.startswith("You turn on") and here:
            out.append((action.split()[1], here))
    return out


PHRASES = {
    "place": "put an object in or on a receptacle ('put a X in Y', 'put some X on Y')",
    "two-object": "put two objects of one type in or on a receptacle ('put two X in Y', 'find two X')",
    "look": "look at an object under a lamp ('look at X under the desklamp', 'examine the X with the lamp')",
    "clean": "clean an object at the sinkbasin and place it ('put a clean X in Y', 'clean some X')",
    "heat": "heat an object in the microwave and place it ('put a hot X in Y', 'heat some X')",
    "cool": "cool an object in the fridge and place it ('put a cool X in Y', 'cool some X')",
}
