"""Role runners: one call per unit of work (a chunk, a question, a pass), model or offline.

Each runner builds the role's harness over the store (with role and chunk or question in its
meta, so the journal knows who wrote what), renders the prompt, runs the loop, and returns a
:class:`RoleOutput`. The model name `offline` routes management, answering and multiple choice
to the offline baseline policies instead, which use the same harness and write the same record.
"""

from __future__ import annotations

import asyncio
import re
import string
from typing import Any

from memdir.agents.answer import parse_answer
from memdir.agents.baselines import policy
from memdir.agents.curation import Curation, resolve
from memdir.agents.feedback import FEEDBACKS, Feedback, baseline, mend, merged
from memdir.agents.loop import Episode, run_loop
from memdir.agents.mend_gate import before_round, gate_episode
from memdir.agents.output import RoleExtra, RoleOutput
from memdir.agents.record import RecordIds, RunRecord
from memdir.agents.roles import Role, get_role, render, search_turn
from memdir.agents.split import curate_chunk
from memdir.errors import MemdirError
from memdir.models import Model
from memdir.store import spec
from memdir.store.moves import following_moves
from memdir.store.operations import EPISODE, operation
from memdir.store.store import Store
from memdir.stream import Chunk
from memdir.tools.profiles import Harness


async def run_role(
    model: Model,
    harness: Harness | None,
    role: Role,
    record: RunRecord | None,
    ids: RecordIds,
    **values: Any,
) -> Episode:
    """Render `role`'s prompt with `values` and run one episode; `ids` go into every record line."""
    system, user = render(role, **values)
    return await run_loop(model, harness, role, system, user, record=record, **ids)


async def manage_chunk(
    model: Model,
    store: Store,
    chunk: Chunk,
    *,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
    feedback: Feedback = "none",
    curation: Curation = "auto",
    role: Role | None = None,
) -> RoleOutput:
    """Integrate one chunk into the store (the management role); with `feedback="health"`, the
    findings its episode introduced go back to it for one more round (agents/feedback.py).
    `curation` chooses the agentic episode or split curation (agents/curation.py). `role` is the
    product's management role unless the caller brings its own (e.g. a variant's);
    `variant` only labels the records."""
    if feedback not in FEEDBACKS:
        raise MemdirError(f"unknown feedback {feedback!r}; choose one of {', '.join(FEEDBACKS)}")
    how = resolve(curation, model)
    role = (role or get_role("management")).with_profile(profile)
    ids: RecordIds = {"variant": variant, "chunk": chunk.id}
    harness = Harness(store, role.profile or "manage", role=role.name, chunk=chunk.id, variant=variant)
    if how == "split":
        if feedback != "none":
            raise MemdirError(
                "feedback rounds are for the agentic episode; split curation files by rule "
                "(use --feedback none with it, or --curation agentic)"
            )
        with operation(store.root, EPISODE, f"manage chunk {chunk.id}"):  # one, unless inside another
            return await curate_chunk(model, harness, record, {**ids, "curation": "split"}, chunk)
    play = policy("management", model, _manage)
    with operation(store.root, EPISODE, f"manage chunk {chunk.id}"):
        return await play(model, harness, role, record, ids, chunk_obj=chunk, feedback=feedback)  # type: ignore[no-any-return]


async def _manage(
    model: Model,
    harness: Harness,
    role: Role,
    record: RunRecord | None,
    ids: RecordIds,
    chunk_obj: Chunk,
    feedback: Feedback = "none",
) -> RoleOutput:
    values = {"chunk": chunk_obj.render(), "chunk_id": chunk_obj.id}
    kept = before_round(harness.store)  # the gate's snapshot: plain files only (agents/mend_gate.py)
    with following_moves(harness.store) as moved:
        before = baseline(harness.store, feedback)
        ep = await run_role(
            model, harness, role, record, ids, core_memory=spec.context(harness.store).text, **values
        )
        if before is not None:
            ep = merged(ep, await mend(model, harness, role, record, ids, ep, before, moved))
    verdict = gate_episode(harness, kept, chunk_obj.turns, record, role.name, ids)
    if verdict.worse:  # undone whole: the chunk changed nothing, and says why
        extra: RoleExtra = {
            "writes": 0,
            "undone": True,
            "undo_reasons": verdict.reasons,
            "episode_writes": ep.writes,
        }
        return RoleOutput(role.name, model.name, ep.final, episode=ep, extra=extra)
    return RoleOutput(role.name, model.name, ep.final, episode=ep, extra={"writes": ep.writes})


async def answer_question(
    model: Model,
    store: Store,
    question: str,
    *,
    question_id: str | None = None,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
    core_memory: bool = True,
    role: Role | None = None,
) -> RoleOutput:
    """Answer `question` from the store, read-only, with citations (the `answer` role, the
    paper's search agent), as the product's role (its round cap: `roles.SEARCH_ROUNDS_PRODUCT`)
    unless the caller brings its own (e.g. a variant's form and cap); `variant` labels records.
    `core_memory` puts the store's core memory before the question, as the product does. Off,
    the role gets what the paper's search agent gets: its system prompt, the question and the
    fixed citation instruction, and it reaches every file, the dump's root sessions too, through
    its tools."""
    role = (role or get_role("answer")).with_profile(profile)
    ids: RecordIds = {"variant": variant, "question": question_id}
    harness = Harness(store, role.profile or "search", role=role.name, question=question_id, variant=variant)
    if not harness.read_only:
        raise MemdirError(f"answering must be read-only; profile {harness.profile!r} can write")
    play = policy("answer", model, _answer)
    return await play(model, harness, role, record, ids, question=question, core_memory=core_memory)  # type: ignore[no-any-return]


async def _answer(
    model: Model,
    harness: Harness,
    role: Role,
    record: RunRecord | None,
    ids: RecordIds,
    question: str,
    core_memory: bool = True,
) -> RoleOutput:
    core = spec.context(harness.store).text if core_memory else None
    ep = await run_role(model, harness, role, record, ids, search_turn=search_turn(question, core))
    parsed = parse_answer(ep.final)
    extra: RoleExtra = {"parsed": parsed.parsed, "files_opened": ep.files_opened}
    return RoleOutput(role.name, model.name, ep.final, parsed.answer, parsed.citations, ep, extra=extra)


def map_choice(answer: str, options: list[str]) -> int | None:
    """Which option an answer names: a letter `(b)`/`b`, a number, or the option's own text."""
    a = answer.strip()
    m = re.fullmatch(r"\(?([A-Za-z])\)?[.:)]?(?:\s.*)?", a, re.S)
    if m and len(options) <= 26:
        idx = string.ascii_lowercase.index(m.group(1).lower())
        if idx < len(options):
            return idx
    m = re.fullmatch(r"\(?(\d+)\)?[.:)]?(?:\s.*)?", a, re.S)
    if m and 1 <= int(m.group(1)) <= len(options):
        return int(m.group(1)) - 1
    low = a.lower()
    hits = [i for i, o in enumerate(options) if o.strip().lower() and o.strip().lower() in low]
    return hits[0] if len(hits) == 1 else None


def options_prompt(question: str, options: list[str]) -> str:
    """A multiple-choice question as every role puts it to a model: the question, its options
    lettered (a), (b), ..., and the instruction to answer with one letter (`map_choice` reads it)."""
    letters = "\n".join(f"({string.ascii_lowercase[i]}) {o}" for i, o in enumerate(options))
    return f'{question}\n\nOptions:\n{letters}\n\nAnswer with the letter of one option, e.g. "(b)".'


async def choose_option(
    model: Model,
    store: Store,
    question: str,
    options: list[str],
    *,
    question_id: str | None = None,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
    core_memory: bool = True,
    role: Role | None = None,
) -> RoleOutput:
    """Multiple choice over the store: the answer is one of `options` (index in extra['choice']);
    `core_memory` and `role` as for `answer_question`."""
    role = (role or get_role("answer")).with_profile(profile)
    harness = Harness(store, role.profile or "search", role="choice", question=question_id, variant=variant)
    if not harness.read_only:
        raise MemdirError(f"answering must be read-only; profile {harness.profile!r} can write")
    ids: RecordIds = {"variant": variant, "question": question_id}
    play = policy("choice", model, _choose)
    asked = {"question": question, "options": options, "core_memory": core_memory}
    return await play(model, harness, role, record, ids, **asked)  # type: ignore[no-any-return]


async def _choose(
    model: Model,
    harness: Harness,
    role: Role,
    record: RunRecord | None,
    ids: RecordIds,
    question: str,
    options: list[str],
    core_memory: bool = True,
) -> RoleOutput:
    """A model chooses by answering the question with the options in it, as an answering episode."""
    prompt = options_prompt(question, options)
    answering = Harness(
        harness.store, harness.profile, role=role.name, question=ids["question"], variant=ids["variant"]
    )
    out = await _answer(model, answering, role, record, ids, prompt, core_memory)
    out.extra["choice"] = map_choice(out.answer or "", options)
    return out


async def answer_many(
    model: Model,
    store: Store,
    questions: list[tuple[str, str]],
    *,
    in_flight: int = 8,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
    role: Role | None = None,
) -> list[RoleOutput]:
    """Answer (question id, question) pairs with at most `in_flight` at once, in order."""
    gate = asyncio.Semaphore(in_flight)

    async def one(qid: str, question: str) -> RoleOutput:
        async with gate:
            return await answer_question(
                model,
                store,
                question,
                question_id=qid,
                variant=variant,
                record=record,
                profile=profile,
                role=role,
            )

    return list(await asyncio.gather(*(one(qid, q) for qid, q in questions)))
