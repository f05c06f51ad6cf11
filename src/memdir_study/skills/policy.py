"""The offline execution policy: no model, a baseline that shows whether stored skills transfer.

It knows the shape of every family (take the object; clean at the sink basin, heat in the
microwave, cool in the fridge, or switch on the lamp; put it in or on the target) but not where
anything is. Without a store it searches the room's receptacles in their listed order, opening
closed ones and remembering everything it sees. With retrieved entries it first follows their
evidence (the route a past success took, places an object was found or seen, with the task's
objects substituted for the entry's), then falls back to the same systematic search. Every
action it sends is one the environment lists as admissible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memdir_study.bench.alfworld import STATIONS, Goal, parse_goal
from memdir_study.bench.alfworld_env import AlfworldEnv, Episode, Observation
from memdir_study.skills.hints import Hints, read_hints, room_key

_ROOM_LIST = re.compile(r"you see (.*?)\.\s*$", re.MULTILINE)
_ITEM = re.compile(r"\b(?:a|an) ([a-z]+ \d+)")
_CONTENTS = re.compile(r"(?:On the ([a-z]+ \d+), you see|In it, you see) ([^.]*)\.")
_OPENED = re.compile(r"You open the ([a-z]+ \d+)")


def _natural(name: str) -> tuple[str, int]:
    kind, _, num = name.rpartition(" ")
    return (kind, int(num)) if num.isdigit() else (name, 0)


def room_receptacles(intro: str) -> list[str]:
    """The receptacles named in the opening description, in natural order (`drawer 2` < `drawer 10`)."""
    m = _ROOM_LIST.search(intro)
    return sorted(set(_ITEM.findall(m.group(1))) if m else set(), key=_natural)


def kind_of(name: str) -> str:
    return name.rpartition(" ")[0] or name


@dataclass
class _State:
    goal: Goal
    receptacles: list[str]
    order: list[str]
    here: str | None = None
    holding: str | None = None
    visited: set[str] = field(default_factory=set)
    seen: dict[str, str] = field(default_factory=dict)  # object instance -> where it was seen
    placed: set[str] = field(default_factory=set)
    transformed: bool = False
    lamp_on: bool = False
    failed: set[str] = field(default_factory=set)


class OfflinePolicy:
    """Plays one game to the end: `run(env, docs)` returns the finished :class:`Episode`."""

    hints: Hints | None = None

    def run(self, env: AlfworldEnv, docs: list[tuple[str, str]] | None = None) -> Episode:
        """Reset and play; `docs` are retrieved (path, text) entries (none: no store)."""
        return self.play(env, env.reset(), docs)

    def play(self, env: AlfworldEnv, obs: Observation, docs: list[tuple[str, str]] | None = None) -> Episode:
        """Play on from the observation `reset()` returned, reading hints from `docs`."""
        ep = env.episode
        assert ep is not None
        goal = parse_goal(ep.task, env.game.family)
        recs = room_receptacles(ep.intro)
        hints = read_hints(docs, room_key(recs), {goal.obj, goal.lamp} - {None}) if docs else None  # type: ignore[arg-type]
        self.hints = hints
        self._learn(env.game.family, goal, docs or [])
        order = self._order(goal, recs, hints)
        st = _State(goal, recs, order)
        while not obs.done:
            action = self._next(st, obs)
            obs = env.step(action)
            self._observe(st, action, obs)
        return ep

    def _learn(self, family: str, goal: Goal, docs: list[tuple[str, str]]) -> None:
        """What a subclass takes from the served entries besides locations (nothing here)."""

    @staticmethod
    def _order(goal: Goal, recs: list[str], hints: Hints | None) -> list[str]:
        """Search order: evidence-ranked places for the object (and lamp) first, then the rest."""
        first: list[str] = []
        if hints:
            for obj in (goal.obj, goal.lamp):
                if obj:
                    first += [r for r in hints.ranked(obj, recs) if r not in first]
        return first + [r for r in recs if r not in first]

    # -- bookkeeping ---------------------------------------------------------------------
    def _observe(self, st: _State, action: str, obs: Observation) -> None:
        text = obs.text
        if action.startswith("go to ") and text.startswith("You arrive"):
            st.here = action.removeprefix("go to ")
            st.visited.add(st.here)
        opened = _OPENED.search(text)
        for m in _CONTENTS.finditer(text):
            where = m.group(1) or (opened.group(1) if opened else st.here)
            for item in _ITEM.findall(m.group(2)):
                if where and item != st.holding:
                    st.seen[item] = where
        if text.startswith("You pick up the "):
            st.holding = action.split(" ")[1] + " " + action.split(" ")[2]
            st.seen.pop(st.holding, None)
        elif text.startswith("You put the ") and st.holding:
            st.placed.add(st.holding)
            st.holding, st.transformed = None, False
        elif text.startswith(("You clean the ", "You heat the ", "You cool the ")):
            st.transformed = True
        elif text.startswith("You turn on the "):
            st.lamp_on = True
        elif text == "Nothing happens.":
            st.failed.add(action)

    # -- choosing the next action --------------------------------------------------------
    def _next(self, st: _State, obs: Observation) -> str:
        adm = set(obs.admissible)
        for action in self._wishes(st):
            if action in adm and action not in st.failed:
                return action
        return "look"

    def _wishes(self, st: _State) -> list[str]:
        """Candidate actions, best first; the first admissible one is taken."""
        g = st.goal
        if st.holding is None:
            return self._find(st, g.obj)
        if g.family == "look":
            return self._use_lamp(st)
        if g.family in STATIONS and not st.transformed:
            verb, station = STATIONS[g.family]
            where = self._first_of(st, station)
            return [f"{verb} {st.holding} with {where}", f"go to {where}"] if where else ["look"]
        return self._place(st)

    def _find(self, st: _State, obj: str) -> list[str]:
        known = [(i, w) for i, w in st.seen.items() if kind_of(i) == obj and i not in st.placed]
        # Two objects: one already sitting in a target-type receptacle is the last resort.
        known.sort(key=lambda iw: st.goal.count > 1 and kind_of(iw[1]) == st.goal.target)
        out: list[str] = []
        for inst, where in known:
            out += [f"take {inst} from {where}", f"go to {where}"]
        return out + self._explore(st)

    def _use_lamp(self, st: _State) -> list[str]:
        lamp = st.goal.lamp or "desklamp"
        lamps = [(i, w) for i, w in st.seen.items() if kind_of(i) == lamp]
        out: list[str] = []
        for inst, where in lamps:
            out += [f"use {inst}", f"go to {where}"]
        return out + self._explore(st)

    @staticmethod
    def _explore(st: _State) -> list[str]:
        """The fallback once nothing known applies: open what is here, then go on searching."""
        out = [f"open {st.here}"] if st.here else []
        return out + [f"go to {r}" for r in st.order if r not in st.visited]

    def _place(self, st: _State) -> list[str]:
        target = st.goal.target or ""
        dest = st.here if st.here and kind_of(st.here) == target else self._first_of(st, target)
        if not dest:
            return ["look"]
        return [f"put {st.holding} in/on {dest}", f"open {dest}", f"go to {dest}"]

    @staticmethod
    def _first_of(st: _State, kind: str) -> str | None:
        matches = [r for r in st.receptacles if kind_of(r) == kind]
        return matches[0] if matches else None
