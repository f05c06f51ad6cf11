"""The skill variants: what each serves the executor before a task and records after it.

* ``no-store``: nothing is served or recorded.
* ``episode-log``: every rendered trajectory is appended verbatim as its own file
  (`metadata.type: episode`), zero model cost; retrieval serves whole episode files.
* ``curated-skills``: the management agent (`--curator-model`) distils procedures
  (`metadata.type: skill`). Offline, a mechanical distiller stands in (a baseline): the winning
  action sequence with its objects abstracted to placeholders, plus fact lines saying where
  the objects were found.
* ``curated-skills-mem``: the same skills plus notes from every attempt (`metadata.type: note`;
  offline: one file per object type, where it was seen, in which room), and strict serving:
  only the task family's skill and the notes on the task's own objects.
* ``curated-skills-mem-gs``: the same store, but the search agent writes task-specific guidance
  instead of serving files (offline: :mod:`memdir_study.skills.guidance`).

With a model as searcher (`Roles.searcher`, the search model, apart from the executor), the
entries of the episode log and the curated variants are chosen by the search agent (strictly
for skills+mem) and served whole, its calls the task's search bill; offline, by the lexical
retriever. The curator reads what was served beside the trajectory (the paper's C.6).

The outcome gate (only a successful attempt may create or extend a procedure) is the paper's
for skills+mem and its GS form (`outcome_gate`): there it is enforced by the store the chain
opens (`Guards(outcome_gate=True)`), not only asked of the curator. Every write goes through a
`manage`-type harness with `role`, `task` and `outcome` meta, so each tool call is one journal step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.agents.record import RunRecord
from memdir.errors import MemdirError
from memdir.models import Model, Usage
from memdir.store import frontmatter, spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir_study.bench.alfworld import parse_goal
from memdir_study.bench.alfworld_env import Episode
from memdir_study.skills.distill import PHRASES, found_places, procedure, sightings
from memdir_study.skills.execution import NOTHING_SERVED, Trajectory, manage_trajectory
from memdir_study.skills.guidance import synthesize
from memdir_study.skills.hints import room_key
from memdir_study.skills.policy import room_receptacles
from memdir_study.skills.render import episode_name, render_episode
from memdir_study.skills.retrieve import DEFAULT, Doc, Retriever
from memdir_study.skills.serving import guide, select

TOP_K = 3

_FOLDER_INDEX = {
    "episodes": "Episode log: one file per attempted task, verbatim (task, room, actions, outcome).",
    "skills": "Procedures (skills), one per task family, distilled only from successful attempts.",
    "notes": "Notes, one per object type: where it was seen, from every attempt.",
}


@dataclass
class Roles:
    """The model-backed roles around a chain's stores; a role whose model is None runs offline."""

    curator: Model | None = None  # the management agent (curated variants)
    searcher: Model | None = None  # the search agent: picks the entries served, or writes GS guidance
    record: RunRecord | None = None
    manage_profile: str = "manage"
    search_profile: str = "search"


@dataclass
class Served:
    """What the executor gets before a task: whole entries, or a guidance text (GS)."""

    docs: list[Doc] = field(default_factory=list)
    guidance: str | None = None
    cited: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    @property
    def paths(self) -> list[str]:
        return self.cited if self.guidance is not None else [d.path for d in self.docs]

    def pairs(self) -> list[tuple[str, str]]:
        """(source, text) pairs for the offline policy."""
        if self.guidance is not None:
            return [("guidance", self.guidance)]
        return [(d.path, d.text) for d in self.docs]

    def text(self) -> str:
        """The prompt block a model executor reads."""
        if self.guidance is not None:
            return self.guidance.strip()
        return "\n\n".join(f"### {d.path}\n{d.text.strip()}" for d in self.docs)

    def for_curator(self) -> str:
        """What was served, as the management agent reads it after the attempt: the entries
        whole under their paths, or the guidance with the entries it was written from."""
        if self.guidance is not None:
            cited = ", ".join(self.cited) or "no entry"
            return (
                f"Guidance (written from {cited}):\n{self.guidance.strip()}"
                if self.guidance.strip()
                else NOTHING_SERVED
            )
        return self.text() or NOTHING_SERVED


class SkillVariant:
    """A variant of the skill setting; this base is no-store, the floor every other variant is
    compared with."""

    name = "no-store"
    outcome_gate = False  # the paper gates skills+mem (and its GS form) only

    def __init__(
        self, store: Store | None = None, retriever: Retriever = DEFAULT, roles: Roles | None = None
    ) -> None:
        self.store = store
        self.retriever = retriever
        self.roles = roles or Roles()
        if store is not None:
            spec.init(store)
            self.search = Harness(store, self.roles.search_profile, role="search", variant=self.name)

    async def serve(self, index: int, task: str, family: str) -> Served:
        return Served()

    async def record(self, index: int, episode: Episode, served: Served | None = None) -> Usage:
        """Integrate the finished episode (and what was served before it); returns what the
        model calls cost (zero offline)."""
        return Usage()

    async def _select(self, index: int, task: str, *, strict: bool, k: int) -> Served:
        """The search agent (a model) chooses the entries; they are served whole."""
        assert self.store is not None and self.roles.searcher is not None
        docs, usage = await select(
            self.roles.searcher, self.store, task, strict=strict, k=k, variant=self.name, index=index,
            record=self.roles.record, profile=self.roles.search_profile,
        )  # fmt: skip
        return Served(docs, usage=usage)

    # -- helpers for the store-backed variants -------------------------------------------
    def _manage(self, index: int, role: str, episode: Episode) -> Harness:
        assert self.store is not None
        outcome = "success" if episode.won else "failure"
        return Harness(self.store, "manage", role=role, task=index, variant=self.name, outcome=outcome)

    def _folder(self, h: Harness, folder: str) -> None:
        assert self.store is not None
        path = f"/memories/{folder}/MEMORY.md"
        if not self.store.exists(path):
            h.call_or_raise("create", {"path": path, "file_text": f"# {folder}\n\n{_FOLDER_INDEX[folder]}\n"})

    def _append(self, h: Harness, path: str, text: str) -> None:
        assert self.store is not None
        total = len(self.store.read_text(path).rstrip("\n").split("\n"))
        h.call_or_raise("insert", {"path": path, "insert_line": total, "insert_text": text})


class EpisodeLog(SkillVariant):
    name = "episode-log"

    async def serve(self, index: int, task: str, family: str) -> Served:
        if self.roles.searcher is not None:  # the log's search bill, climbing as the log grows
            return await self._select(index, task, strict=False, k=TOP_K)
        return Served(self.retriever(self.search, task, TOP_K))

    async def record(self, index: int, episode: Episode, served: Served | None = None) -> Usage:
        h = self._manage(index, "recorder", episode)
        self._folder(h, "episodes")
        name = episode_name(index, episode)
        h.call_or_raise(
            "create", {"path": f"/memories/episodes/{name}.md", "file_text": render_episode(index, episode)}
        )
        self._append(
            h, "/memories/episodes/MEMORY.md", f"- {name}.md: {episode.task} ({episode.game.family})"
        )
        return Usage()


def trajectory(index: int, episode: Episode) -> Trajectory:
    """The finished episode as the chunk the management agent reads."""
    return Trajectory(index, episode.task, episode.intro, list(episode.steps), episode.won)


class CuratedSkills(SkillVariant):
    """Procedures, by the curator model or the offline distiller (which distils successes only;
    a curator model is not gated here, as in the paper)."""

    name = "curated-skills"
    notes = False

    async def serve(self, index: int, task: str, family: str) -> Served:
        if self.roles.searcher is not None:
            return await self._select(index, task, strict=False, k=TOP_K)
        return Served(self.retriever(self.search, task, TOP_K))

    async def record(self, index: int, episode: Episode, served: Served | None = None) -> Usage:
        roles = self.roles
        if roles.curator is not None:
            assert self.store is not None
            out = await manage_trajectory(
                roles.curator, self.store, trajectory(index, episode), notes=self.notes,
                outcome_gate=self.outcome_gate, served=(served or Served()).for_curator(),
                record=roles.record, profile=roles.manage_profile, variant=self.name,
            )  # fmt: skip
            return out.episode.usage if out.episode else Usage()
        self._distil(index, episode)
        return Usage()

    def _distil(self, index: int, episode: Episode) -> None:
        """The offline distiller: a success creates or extends the family's procedure."""
        if episode.won:
            self._skill(index, episode)

    def _skill(self, index: int, episode: Episode) -> None:
        assert self.store is not None
        h = self._manage(index, "curator", episode)
        fam, loc = episode.game.family, f"[E{index}]"
        room = room_key(room_receptacles(episode.intro))
        path = f"/memories/skills/{fam}.md"
        facts = [f"- {obj}: found in {recep} (room {room}) {loc}" for obj, recep in found_places(episode)]
        if not self.store.exists(path):
            self._folder(h, "skills")
            steps = "\n".join(f"{n}. {s}" for n, s in enumerate(procedure(episode), start=1))
            head = frontmatter.dump(
                fam, f"Procedure (skill): {PHRASES[fam]}", {"type": "skill", "family": fam}
            )
            body = (
                f"# {fam} tasks\n\n## Procedure\nDistilled from a successful attempt {loc}; search "
                f"receptacles (open closed ones) until the object is seen, then:\n{steps}\n\n"
                "## Where objects were found\n"
                + "\n".join(facts) + "\n"
            )  # fmt: skip
            h.call_or_raise("create", {"path": path, "file_text": head + body})
            self._append(h, "/memories/skills/MEMORY.md", f"- {fam}.md: {PHRASES[fam]}")
        elif facts:
            self._append(h, path, "\n".join(facts))


class CuratedSkillsMem(CuratedSkills):
    """Skills behind the outcome gate, plus notes from every attempt; strict serving."""

    name = "curated-skills-mem"
    notes = True
    outcome_gate = True

    async def serve(self, index: int, task: str, family: str) -> Served:
        if self.roles.searcher is not None:
            return await self._select(index, task, strict=True, k=TOP_K * 2)
        return Served(self._strict(task, family))

    def _strict(self, task: str, family: str) -> list[Doc]:
        """Only entries that clearly apply: the family's skill, notes on the task's own objects.

        Offline entries say so in their metadata (`family`, `object`); a curator model's entries
        may not, and then a skill's text must name the family and a note's one of the objects.
        """
        goal = parse_goal(task, family)
        wanted = {o for o in (goal.obj, goal.lamp) if o}
        keep = []
        for d in self.retriever(self.search, task, TOP_K * 3):
            meta = d.metadata
            kind = meta.get("type")
            if kind == "skill":
                ok = meta.get("family") == family if "family" in meta else family in d.text.lower()
            elif kind == "note":
                ok = meta.get("object") in wanted if "object" in meta else any(w in d.text for w in wanted)
            else:
                ok = False
            if ok:
                keep.append(d)
        return keep

    def _distil(self, index: int, episode: Episode) -> None:
        """The skill as in curated-skills, then notes on every object seen, from any attempt."""
        super()._distil(index, episode)
        assert self.store is not None
        h = self._manage(index, "curator", episode)
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


class CuratedSkillsMemGS(CuratedSkillsMem):
    """The skills+mem store, served as guidance written for the task (guidance synthesis)."""

    name = "curated-skills-mem-gs"

    async def serve(self, index: int, task: str, family: str) -> Served:
        roles = self.roles
        if roles.searcher is None:
            g = synthesize(task, family, self._strict(task, family))
            return Served(guidance=g.text, cited=g.cited)
        assert self.store is not None
        text, cited, usage = await guide(
            roles.searcher, self.store, task, index=index, record=roles.record, profile=roles.search_profile
        )
        return Served(guidance=text, cited=cited, usage=usage)


SKILL_VARIANTS: dict[str, type[SkillVariant]] = {
    v.name: v for v in (SkillVariant, EpisodeLog, CuratedSkills, CuratedSkillsMem, CuratedSkillsMemGS)
}
VARIANT_NAMES = tuple(SKILL_VARIANTS)
GATED = tuple(name for name, v in SKILL_VARIANTS.items() if v.outcome_gate)  # the paper's outcome gate


def make_variant(
    name: str, store: Store | None, retriever: Retriever = DEFAULT, roles: Roles | None = None
) -> SkillVariant:
    if name not in SKILL_VARIANTS:
        raise MemdirError(f"unknown variant {name!r}; choose from {', '.join(VARIANT_NAMES)}")
    return SKILL_VARIANTS[name](None if name == "no-store" else store, retriever, roles)
