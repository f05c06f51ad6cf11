"""The novice: an offline executor that must learn each family's procedure from memory.

The standard offline policy has every family's procedure built in, so only knowledge of
*where things are* can transfer through a store. The novice knows only the household basics:
find the object the task names (searching receptacles in order, opening closed ones), take it,
carry it to the receptacle the task names and put it there (twice for "two"). It does not know
that a task may need the object heated, cooled or cleaned first, with which appliance, or that
looking at something under a lamp means switching the lamp on.

Without applicable memory it explores: when a put did not win (or there is nowhere to put),
it takes the object back and, at each receptacle it visits, tries every action the environment
offers on the held object that it has not tried (and any `use`), returning to put after each
one that did something. With served entries of the task's own family that record a success
(an episode, a procedure, GS guidance), it reads the last such action before the success
(`heat apple 1 with microwave 1`, a procedure step `heat {obj} with microwave 1`, `use
desklamp 1`) and does it directly. The verb and the appliance come from the text, never from a
built-in table: what transfers is the procedure itself.
"""

from __future__ import annotations

import re

from memdir.store import frontmatter
from memdir_study.bench.alfworld import Goal
from memdir_study.bench.alfworld_env import Observation
from memdir_study.skills.policy import OfflinePolicy, _State, kind_of

_BASIC = frozenset({"go", "take", "put", "open", "close", "examine", "look", "inventory"})
_LEAD = r"(?:^|> |\d+\. )"
_WITH = re.compile(_LEAD + r"([a-z]+) (?:\{obj\}|[a-z]+(?: \d+)?) with ([a-z]+)(?: \d+)?", re.MULTILINE)
_USE = re.compile(_LEAD + r"use (\{lamp\}|[a-z]+)(?: \d+)?", re.MULTILINE)
_FAMILY_LINE = re.compile(r"^- Family: (\S+)", re.MULTILINE)


def applies(source: str, text: str, family: str) -> bool:
    """An entry teaches this task only if it records a success of the task's own family."""
    if source == "guidance":
        return True  # written for this very task
    meta = frontmatter.parse(text).metadata
    fam = meta.get("family")
    if fam is None:
        m = _FAMILY_LINE.search(text)
        fam = m.group(1) if m else None
    return fam == family and meta.get("outcome", "success") == "success"


def learned_step(text: str, goal: Goal) -> tuple[str, str] | None:
    """The last special action of a success: (verb, appliance type) or ("use", lamp type)."""
    found: list[tuple[int, tuple[str, str]]] = []
    for m in _WITH.finditer(text):
        if m.group(1) not in _BASIC:
            found.append((m.start(), (m.group(1), m.group(2))))
    for m in _USE.finditer(text):
        lamp = goal.lamp or "" if m.group(1) == "{lamp}" else m.group(1)
        if lamp:
            found.append((m.start(), ("use", lamp)))
    return max(found)[1] if found else None


class Novice(OfflinePolicy):
    """Plays like :class:`OfflinePolicy` once it knows a family's special step; explores before."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.known: tuple[str, str] | None = None  # the family's special step, once learned
        self.learned_from: str | None = None
        self.tried: set[str] = set()  # special actions tried while exploring
        self.carried_to: set[str] = set()  # receptacles visited with the object in hand
        self.explore = False
        self._offered: list[str] = []

    def _learn(self, family: str, goal: Goal, docs: list[tuple[str, str]]) -> None:
        """Reset the per-episode state and read the special step from the first entry teaching it."""
        self._reset()
        self.explore = goal.target is None
        for source, text in docs:
            step = learned_step(text, goal) if applies(source, text, family) else None
            if step:
                self.known, self.learned_from = step, source
                return

    def _wishes(self, st: _State) -> list[str]:
        if st.holding is None:
            return self._find(st, st.goal.obj)
        known = self.known
        if known and known[0] == "use":
            lamps = [(i, w) for i, w in st.seen.items() if kind_of(i) == known[1]]
            out = [a for inst, where in lamps for a in (f"use {inst}", f"go to {where}")]
            return out + self._explore(st)
        if known and not st.transformed:
            verb, appliance = known
            where = self._first_of(st, appliance)
            return [f"{verb} {st.holding} with {where}", f"go to {where}"] if where else ["look"]
        if self.explore:
            here = [a for a in self._offered if a not in self.tried and self._curious(a, st.holding)]
            away = [f"go to {r}" for r in st.order if r not in self.carried_to and r != st.here]
            return here + away + self._place(st)
        return self._place(st)

    @staticmethod
    def _curious(action: str, held: str) -> bool:
        verb = action.split(" ", 1)[0]
        return verb not in _BASIC and (f" {held} " in f" {action} " or verb == "use")

    def _next(self, st: _State, obs: Observation) -> str:
        self._offered = obs.admissible
        return super()._next(st, obs)

    def _observe(self, st: _State, action: str, obs: Observation) -> None:
        holding = st.holding
        super()._observe(st, action, obs)
        if action.startswith("go to ") and holding and obs.text.startswith("You arrive"):
            self.carried_to.add(action.removeprefix("go to "))
        if holding and self._curious(action, holding) and obs.text != "Nothing happens.":
            if self.known and action.split(" ", 1)[0] == self.known[0]:
                st.transformed = True
            elif self.known is None:
                self.explore = st.goal.target is None  # it did something: go and try the put
        if holding and self._curious(action, holding):
            self.tried.add(action)
        put_lost = action.startswith("put ") and obs.text.startswith("You put ") and not obs.won
        if put_lost and holding and len(st.placed) >= st.goal.count:
            # The put did not win: take the object back and explore.
            st.placed.discard(holding)
            st.seen[holding] = " ".join(action.split(" ")[-2:])
            self.explore = True
