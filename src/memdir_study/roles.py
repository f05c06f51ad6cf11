"""The study's own roles: what only the study plays, with its prompts (`study/prompts/`).

The closed-book floor (one round, no store: what every memory variant is compared with), the
foldering pass of the `foldered` variant (the dump's files moved into folders, verified
byte-identical afterwards), and the
skill setting's roles: the search agent choosing whole entries to serve (`skill_search`), guidance
synthesis (GS: task-specific advice written from the store), the ALFWorld execution agent and the
curator that distils skills (both run by `memdir_study/skills/execution.py`). They are product roles in
form (`memdir.agents.roles.Role`, rendered with the product's shared prompt blocks, run by the same
loop and harness and asked of `policy` / `require_model` like any role), but the product neither
plays nor names them, so they live here; a role's `package` says where its prompt is. How a
variant plays the product's roles (prompt form, round cap, conventions) is its registry entry's
(`variants/registry.py`, `variant_role`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from memdir.agents.answer import parse_answer
from memdir.agents.baselines import policy, require_model
from memdir.agents.output import RoleOutput
from memdir.agents.record import RecordIds, RunRecord
from memdir.agents.roles import (
    BUILD_ROUNDS,
    CURATION_OUTPUT,
    SEARCH_OUTPUT,
    SEARCH_ROUNDS_ORGANIZED,
    Role,
)
from memdir.agents.run import map_choice, options_prompt, run_role
from memdir.errors import MemdirError
from memdir.models import Model
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness

PROMPTS = "memdir_study"
"""The package whose `prompts/` holds the study's role templates."""
OFFLINE_CLOSED_BOOK = "unknown"

STUDY_ROLES: dict[str, Role] = {
    "closed_book": Role("closed_book", "closed_book", None, 1, SEARCH_OUTPUT, answers=True, package=PROMPTS),
    "guidance": Role(
        "guidance", "guidance", "search", SEARCH_ROUNDS_ORGANIZED, SEARCH_OUTPUT, answers=True,
        package=PROMPTS,
    ),
    "skill_search": Role(
        "skill_search", "skill_search", "search", SEARCH_ROUNDS_ORGANIZED, SEARCH_OUTPUT, answers=True,
        package=PROMPTS,
    ),
    "execution": Role("execution", "execution", None, 50, SEARCH_OUTPUT, temperature=0.0, package=PROMPTS),
    "folder": Role("folder", "folder", "folder", BUILD_ROUNDS, CURATION_OUTPUT, package=PROMPTS),
    "management_skills": Role(
        "management_skills", "management_skills", "manage", BUILD_ROUNDS, CURATION_OUTPUT, package=PROMPTS
    ),
}  # fmt: skip

NO_BASELINE = {
    "folder": "the offline baselines cannot design folders; use a model",
    "guidance": "the offline baselines do not synthesize guidance; use a model",
    "skill_search": "the offline baselines select entries mechanically; use a model",
    "execution": "the offline baselines do not act in environments; use a model",
    "management_skills": "the offline baselines do not distil skills; use a model",
}
"""The study's roles no offline baseline plays, with the reason a user is shown."""


def study_role(name: str, profile: str | None = None) -> Role:
    """The study role's configuration of record (docs/study.md), with `profile` in place of its own."""
    if name not in STUDY_ROLES:
        raise MemdirError(f"unknown study role {name!r}; choose one of {', '.join(STUDY_ROLES)}")
    return STUDY_ROLES[name].with_profile(profile)


async def closed_book(
    model: Model,
    question: str,
    *,
    options: list[str] | None = None,
    question_id: str | None = None,
    record: RunRecord | None = None,
) -> RoleOutput:
    """One round, no store, no tools: the floor every memory variant is compared with. A
    multiple-choice question is put with its options, as to every other variant (the paper's
    PersonaMem floor, 34.4 / 47.6, is a choice among them); the chosen index is extra['choice']."""
    role = study_role("closed_book")
    play = policy("closed_book", model, _closed_book, baseline=_offline_closed_book)
    ids: RecordIds = {"variant": "closed-book", "question": question_id}
    asked = options_prompt(question, options) if options else question
    out: RoleOutput = await play(model, None, role, record, ids, question=asked)
    if options:
        out.extra["choice"] = map_choice(out.answer or "", options)
    return out


async def _closed_book(
    model: Model, harness: None, role: Role, record: RunRecord | None, ids: RecordIds, question: str
) -> RoleOutput:
    ep = await run_role(model, None, role, record, ids, question=question)
    parsed = parse_answer(ep.final)
    return RoleOutput(role.name, model.name, ep.final, parsed.answer, parsed.citations, ep)


async def _offline_closed_book(
    model: Model, harness: None, role: Role, record: RunRecord | None, ids: RecordIds, **values: Any
) -> RoleOutput:
    """The closed-book baseline answers "unknown": no store and no model, so nothing to know."""
    return RoleOutput(role.name, "offline", OFFLINE_CLOSED_BOOK, OFFLINE_CLOSED_BOOK, [], baseline=True)


# The fixed line that closes the GS user turn, after the task: the search agent writing guidance
# is asked, as the study's search agent is after its question, to ground what it says in cited entries.
GS_INSTRUCTION = (
    "Write the guidance for this task from the entries that clearly apply, and cite every entry it "
    "rests on by its path, e.g. [/memories/skills/heat.md]; your final JSON's `citations` lists them all."
)


async def guidance(
    model: Model,
    store: Store,
    task: str,
    *,
    task_id: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
) -> RoleOutput:
    """Guidance synthesis (skill setting, GS variant): task-specific advice written from the store.
    The user turn is the task and the fixed line `GS_INSTRUCTION`, no core-memory block: the search
    agent reaches the entries, indexes included, through its read-only tools."""
    require_model("guidance", model, NO_BASELINE["guidance"])
    role = study_role("guidance", profile)
    harness = Harness(
        store, role.profile or "search", role=role.name, task=task_id, variant="curated-skills-mem-gs"
    )
    ids: RecordIds = {"variant": "curated-skills-mem-gs", "task": task_id}
    ep = await run_role(model, harness, role, record, ids, task=task, gs_instruction=GS_INSTRUCTION)
    parsed = parse_answer(ep.final)
    return RoleOutput(role.name, model.name, ep.final, parsed.answer, parsed.citations, ep)


STRICT_RULE = (
    "Strict serving: cite an entry only when it clearly applies to this task (its kind of task, "
    "or the very objects it names). Citing nothing is better than citing entries that do not apply."
)
LOOSE_RULE = "Cite the entries most likely to help with this task."


async def select_entries(
    model: Model,
    store: Store,
    task: str,
    *,
    strict: bool,
    k: int,
    variant: str,
    task_id: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
) -> RoleOutput:
    """The skill setting's search agent: which whole entries to serve for `task` (its citations).
    As every search of the study (and the GS turn, `guidance`), its user turn is the task with no
    core-memory block: the agent reaches the entries, indexes included, through its read-only tools."""
    require_model("skill_search", model, NO_BASELINE["skill_search"])
    role = study_role("skill_search", profile)
    harness = Harness(store, role.profile or "search", role=role.name, task=task_id, variant=variant)
    ids: RecordIds = {"variant": variant, "task": task_id}
    rule = STRICT_RULE if strict else LOOSE_RULE
    ep = await run_role(model, harness, role, record, ids, task=task, strict_rule=rule, k=k)
    parsed = parse_answer(ep.final)
    return RoleOutput(role.name, model.name, ep.final, parsed.answer, parsed.citations, ep)


def file_digests(store: Store) -> dict[str, str]:
    """{memory path: sha256 of its bytes} for every visible file."""
    return {e.path.text: hashlib.sha256(e.disk.read_bytes()).hexdigest() for e in store.files(suffix="")}


class FolderingError(MemdirError):
    """The foldering pass changed bytes, or lost or added a file: the variant is invalid."""


def verify_moves(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    """The moves (old path -> new path) if `after` holds exactly the same files' bytes, else raise."""
    if sorted(before.values()) != sorted(after.values()):
        lost = sorted(p for p, d in before.items() if d not in set(after.values()))
        new = sorted(p for p, d in after.items() if d not in set(before.values()))
        raise FolderingError(
            f"foldering changed file contents: missing bytes of {lost[:5]}, new bytes in {new[:5]}"
        )
    by_digest: dict[str, list[str]] = {}
    for p, d in sorted(after.items()):
        by_digest.setdefault(d, []).append(p)
    moves: dict[str, str] = {}
    for p, d in sorted(before.items()):
        targets = by_digest[d]
        dest = p if p in targets else targets[0]
        targets.remove(dest)
        if dest != p:
            moves[p] = dest
    return moves


async def folder(model: Model, store: Store, *, record: RunRecord | None = None) -> RoleOutput:
    """Move the dump's session files into folders (view, grep, rename only), then verify the bytes."""
    require_model("folder", model, NO_BASELINE["folder"])
    role = study_role("folder")
    harness = Harness(store, role.profile or "folder", role=role.name, variant="foldered")
    before = file_digests(store)
    ep = await run_role(
        model, harness, role, record, {"variant": "foldered"}, core_memory=spec.context(store).text
    )
    moves = verify_moves(before, file_digests(store))
    if record is not None:
        record.write("foldering_verified", role=role.name, moves=moves, files=len(before))
    return RoleOutput(role.name, model.name, ep.final, episode=ep, extra={"moves": moves})
