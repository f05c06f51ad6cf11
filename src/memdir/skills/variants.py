"""The skill variants that need no model: what each serves to the executor and what it records.

* ``no-store``: nothing is served or recorded.
* ``episode-log``: every rendered trajectory is appended verbatim as its own file
  (`metadata.type: episode`), zero model cost; retrieval serves whole episode files.
* ``curated-skills`` (offline baseline): a mechanical distiller, not a model. Only a successful
  attempt may create or extend a family's procedure file (`metadata.type: skill`): the winning
  action sequence with its objects abstracted to placeholders, plus fact lines saying where
  the objects were found. Failures write nothing (the outcome gate).
* ``curated-skills-mem`` (offline baseline): the same skills, plus notes from every attempt
  (`metadata.type: note`, one file per object type: where it was seen, in which room), and
  strict serving: only the task family's skill and the notes on the task's own objects.

Every write goes through the `manage` harness with `role` and `task` meta, so each task is one
journal step per tool call.
"""

from __future__ import annotations

import re
from collections import defaultdict

from memdir.bench.alfworld import STATIONS, parse_goal
from memdir.bench.alfworld_env import Episode
from memdir.errors import MemdirError
from memdir.skills.hints import room_key
from memdir.skills.policy import room_receptacles
from memdir.skills.render import episode_name, render_episode
from memdir.skills.retrieve import DEFAULT, Doc, Retriever
from memdir.store import frontmatter, spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness

OFFLINE_VARIANTS = ("no-store", "episode-log", "curated-skills", "curated-skills-mem")
MODEL_VARIANTS = ("curated-skills-mem-gs",)
ALL_VARIANTS = (*OFFLINE_VARIANTS, *MODEL_VARIANTS)
TOP_K = 3

_ON = re.compile(r"On the ([a-z]+ \d+), you see ([^.]*)\.")
_IN = re.compile(r"You open the ([a-z]+ \d+)\. The [a-z]+ \d+ is open\. In it, you see ([^.]*)\.")
_ITEM = re.compile(r"\b(?:a|an) ([a-z]+) \d+")
_FOLDER_INDEX = {
    "episodes": "Episode log: one file per attempted task, verbatim (task, room, actions, outcome).",
    "skills": "Procedures (skills), one per task family, distilled only from successful attempts.",
    "notes": "Notes, one per object type: where it was seen, from every attempt.",
}


class Variant:
    """No store: the floor every other variant is compared with."""

    name = "no-store"

    def __init__(self, store: Store | None = None, retriever: Retriever = DEFAULT) -> None:
        self.store = store
        self.retriever = retriever
        if store is not None:
            spec.init(store)
            self.search = Harness(store, "search", role="search")

    def serve(self, index: int, task: str, family: str) -> list[Doc]:
        return []

    def record(self, index: int, episode: Episode) -> None:
        return None

    # -- helpers for the store-backed variants -------------------------------------------
    def _manage(self, index: int, role: str) -> Harness:
        assert self.store is not None
        return Harness(self.store, "manage", role=role, task=index)

    def _folder(self, h: Harness, folder: str) -> None:
        assert self.store is not None
        path = f"/memories/{folder}/MEMORY.md"
        if not self.store.exists(path):
            h.call_or_raise("create", {"path": path, "file_text": f"# {folder}\n\n{_FOLDER_INDEX[folder]}\n"})

    def _append(self, h: Harness, path: str, text: str) -> None:
        assert self.store is not None
        total = len(self.store.read_text(path).rstrip("\n").split("\n"))
        h.call_or_raise("insert", {"path": path, "insert_line": total, "insert_text": text})


class EpisodeLog(Variant):
    name = "episode-log"

    def serve(self, index: int, task: str, family: str) -> list[Doc]:
        return self.retriever(self.search, task, TOP_K)

    def record(self, index: int, episode: Episode) -> None:
        h = self._manage(index, "recorder")
        self._folder(h, "episodes")
        name = episode_name(index, episode)
        h.call_or_raise(
            "create", {"path": f"/memories/episodes/{name}.md", "file_text": render_episode(index, episode)}
        )
        self._append(
            h, "/memories/episodes/MEMORY.md", f"- {name}.md: {episode.task} ({episode.game.family})"
        )


def sightings(episode: Episode) -> dict[str, list[str]]:
    """{object type: receptacles it was seen in}, from the episode's observations."""
    seen: dict[str, list[str]] = defaultdict(list)
    texts = [episode.intro, *(obs for _, obs in episode.steps)]
    here: str | None = None
    for (action, _), text in zip([("", ""), *episode.steps], texts, strict=True):
        if action.startswith("go to "):
            here = action.removeprefix("go to ")
        for recep, listing in [*_ON.findall(text), *_IN.findall(text)]:
            for obj in _ITEM.findall(listing):
                if recep not in seen[obj]:
                    seen[obj].append(recep)
        if "In it, you see" in text and here and not _IN.search(text):
            for obj in _ITEM.findall(text.split("In it, you see", 1)[1]):
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


_PHRASES = {
    "place": "put an object in or on a receptacle ('put a X in Y', 'put some X on Y')",
    "two-object": "put two objects of one type in or on a receptacle ('put two X in Y', 'find two X')",
    "look": "look at an object under a lamp ('look at X under the desklamp', 'examine the X with the lamp')",
    "clean": "clean an object at the sinkbasin and place it ('put a clean X in Y', 'clean some X')",
    "heat": "heat an object in the microwave and place it ('put a hot X in Y', 'heat some X')",
    "cool": "cool an object in the fridge and place it ('put a cool X in Y', 'cool some X')",
}


class CuratedSkills(Variant):
    """Offline distiller with the outcome gate: successes create or extend procedures."""

    name = "curated-skills"

    def serve(self, index: int, task: str, family: str) -> list[Doc]:
        return self.retriever(self.search, task, TOP_K)

    def record(self, index: int, episode: Episode) -> None:
        if episode.won:
            self._skill(index, episode)

    def _skill(self, index: int, episode: Episode) -> None:
        assert self.store is not None
        h = self._manage(index, "curator")
        fam, loc = episode.game.family, f"[E{index}]"
        room = room_key(room_receptacles(episode.intro))
        path = f"/memories/skills/{fam}.md"
        facts = [f"- {obj}: found in {recep} (room {room}) {loc}" for obj, recep in found_places(episode)]
        if not self.store.exists(path):
            self._folder(h, "skills")
            steps = "\n".join(f"{n}. {s}" for n, s in enumerate(procedure(episode), start=1))
            head = frontmatter.dump(
                fam, f"Procedure (skill): {_PHRASES[fam]}", {"type": "skill", "family": fam}
            )
            body = (
                f"# {fam} tasks\n\n## Procedure\nDistilled from a successful attempt {loc}; search "
                f"receptacles (open closed ones) until the object is seen, then:\n{steps}\n\n"
                "## Where objects were found\n"
                + "\n".join(facts) + "\n"
            )  # fmt: skip
            h.call_or_raise("create", {"path": path, "file_text": head + body})
            self._append(h, "/memories/skills/MEMORY.md", f"- {fam}.md: {_PHRASES[fam]}")
        elif facts:
            self._append(h, path, "\n".join(facts))


class CuratedSkillsMem(CuratedSkills):
    """Skills behind the outcome gate, plus notes from every attempt; strict serving."""

    name = "curated-skills-mem"

    def serve(self, index: int, task: str, family: str) -> list[Doc]:
        goal = parse_goal(task, family)
        wanted = {goal.obj, goal.lamp} - {None}
        docs = self.retriever(self.search, task, TOP_K * 3)
        keep = []
        for d in docs:
            meta = d.metadata
            if (meta.get("type") == "skill" and meta.get("family") == family) or (
                meta.get("type") == "note" and meta.get("object") in wanted
            ):
                keep.append(d)
        return keep

    def record(self, index: int, episode: Episode) -> None:
        super().record(index, episode)
        assert self.store is not None
        h = self._manage(index, "curator")
        room = room_key(room_receptacles(episode.intro))
        for obj, places in sorted(sightings(episode).items()):
            path = f"/memories/notes/{obj}.md"
            lines = "\n".join(f"- {obj}: seen in {p} (room {room}) [E{index}]" for p in places)
            if not self.store.exists(path):
                self._folder(h, "notes")
                head = frontmatter.dump(
                    obj, f"Note: where {obj} objects were seen, by room", {"type": "note", "object": obj}
                )
                h.call_or_raise(
                    "create", {"path": path, "file_text": f"{head}# {obj}\n\n## Sightings\n{lines}\n"}
                )
                self._append(h, "/memories/notes/MEMORY.md", f"- {obj}.md: where {obj} objects were seen")
            else:
                self._append(h, path, lines)


VARIANTS: dict[str, type[Variant]] = {
    v.name: v for v in (Variant, EpisodeLog, CuratedSkills, CuratedSkillsMem)
}


def make_variant(name: str, store: Store | None, retriever: Retriever = DEFAULT) -> Variant:
    if name in MODEL_VARIANTS:
        raise MemdirError(
            f"variant {name!r} needs a model (guidance synthesis); it arrives with the agents issue"
        )
    if name not in VARIANTS:
        raise MemdirError(f"unknown variant {name!r}; choose from {', '.join(ALL_VARIANTS)}")
    return VARIANTS[name](None if name == "no-store" else store, retriever)
