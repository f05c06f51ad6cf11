"""Role runners: one call per unit of work (a chunk, a question, a pass), model or offline.

Each runner builds the role's harness over the store (with role and chunk or question in its
meta, so the journal knows who wrote what), renders the prompt, runs the loop, and returns a
:class:`RoleOutput`. The model name `offline` routes management, search and multiple choice
to the offline policies instead, which use the same harness and write the same record.
"""

from __future__ import annotations

import asyncio
import re
import string
import time
from dataclasses import dataclass, field
from typing import Any

from memdir.agents.answer import parse_answer
from memdir.agents.loop import Episode, run_loop
from memdir.agents.offline import OFFLINE_LABEL, Curator, LexicalSearcher, choose
from memdir.agents.record import RunRecord
from memdir.agents.roles import Role, get_role, render
from memdir.errors import MemdirError
from memdir.models import Model, Usage
from memdir.store import spec
from memdir.store.store import Store
from memdir.stream import Chunk
from memdir.tools.profiles import Harness


@dataclass
class RoleOutput:
    role: str
    model: str
    text: str
    answer: str | None = None
    citations: list[str] = field(default_factory=list)
    episode: Episode | None = None
    baseline: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role, "model": self.model, "baseline": self.baseline}
        if self.answer is not None:
            d |= {"answer": self.answer, "citations": self.citations}
        else:
            d["text"] = self.text
        if self.episode is not None:
            ep = self.episode
            d |= {
                "rounds": ep.rounds,
                "tool_calls": ep.tool_calls,
                "stop": ep.stop,
                "usage": ep.usage.as_dict(),
            }
            if ep.stop_reason:
                d["stop_reason"] = ep.stop_reason
        return d | self.extra


def _offline_record(
    record: RunRecord | None,
    role: str,
    harness: Harness,
    calls: list[dict[str, Any]],
    start: float,
    **ids: Any,
) -> None:
    if record is not None:
        record.write(
            "offline_step",
            role=role,
            **ids,
            **OFFLINE_LABEL,
            usage=Usage(calls=0).as_dict(),
            tool_calls=calls,
            harness={k: v for k, v in harness.meter.as_dict().items() if k != "seconds"},
            seconds=round(time.perf_counter() - start, 6),
        )


async def run_role(
    model: Model,
    harness: Harness | None,
    role: Role,
    record: RunRecord | None,
    ids: dict[str, Any],
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
    variant: str = "agent-curated",
    record: RunRecord | None = None,
    profile: str | None = None,
) -> RoleOutput:
    """Integrate one chunk into the store (the management role)."""
    role = get_role("management", variant, profile)
    ids = {"variant": variant, "chunk": chunk.id}
    harness = Harness(store, role.profile or "manage", role=role.name, chunk=chunk.id, variant=variant)
    if model.is_offline:
        start = time.perf_counter()
        result = await asyncio.to_thread(Curator(harness).integrate, chunk)
        _offline_record(record, role.name, harness, result.tool_calls, start, **ids)
        r = result
        summary = f"{r.facts_written} fact line(s), {r.keyed_written} keyed, {r.superseded} superseded"
        return RoleOutput(
            role.name, "offline", summary, baseline=True, extra={"writes": harness.meter.writes}
        )
    ep = await run_role(
        model,
        harness,
        role,
        record,
        ids,
        core_memory=spec.context(store).text,
        chunk=chunk.render(),
        chunk_id=chunk.id,
    )
    return RoleOutput(role.name, model.name, ep.final, episode=ep, extra={"writes": ep.writes})


async def search(
    model: Model,
    store: Store,
    question: str,
    *,
    question_id: str | None = None,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
) -> RoleOutput:
    """Answer `question` from the store, read-only, with citations (the search role)."""
    role = get_role("search", variant, profile)
    ids = {"variant": variant, "question": question_id}
    harness = Harness(store, role.profile or "search", role=role.name, question=question_id, variant=variant)
    if not harness.read_only:
        raise MemdirError(f"search must be read-only; profile {harness.profile!r} can write")
    if model.is_offline:
        start = time.perf_counter()
        res = await asyncio.to_thread(LexicalSearcher(harness).search, question)
        _offline_record(record, role.name, harness, res.tool_calls, start, **ids, answer=res.answer,
                        citations=res.citations)  # fmt: skip
        return RoleOutput(role.name, "offline", res.answer, res.answer, res.citations, baseline=True,
                          extra={"files_opened": len(harness.meter.files_touched)})  # fmt: skip
    ep = await run_role(
        model, harness, role, record, ids, core_memory=spec.context(store).text, question=question
    )
    parsed = parse_answer(ep.final)
    extra = {"parsed": parsed.parsed, "files_opened": ep.files_opened}
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
) -> RoleOutput:
    """Multiple choice over the store: the answer is one of `options` (index in extra['choice'])."""
    if model.is_offline:
        role = get_role("search", variant, profile)
        harness = Harness(
            store, role.profile or "search", role="choice", question=question_id, variant=variant
        )
        start = time.perf_counter()
        c = await asyncio.to_thread(choose, harness, question, options)
        _offline_record(record, "choice", harness, c.tool_calls, start, variant=variant, question=question_id,
                        choice=c.index)  # fmt: skip
        return RoleOutput("choice", "offline", c.option, c.option, c.citations, baseline=True,
                          extra={"choice": c.index, "scores": c.scores})  # fmt: skip
    letters = "\n".join(f"({string.ascii_lowercase[i]}) {o}" for i, o in enumerate(options))
    prompt = f'{question}\n\nOptions:\n{letters}\n\nAnswer with the letter of one option, e.g. "(b)".'
    out = await search(
        model, store, prompt, question_id=question_id, variant=variant, record=record, profile=profile
    )
    out.extra["choice"] = map_choice(out.answer or "", options)
    return out


async def closed_book(
    model: Model, question: str, *, question_id: str | None = None, record: RunRecord | None = None
) -> RoleOutput:
    """One round, no store, no tools: the floor every memory variant is compared with."""
    if model.is_offline:
        raise MemdirError("the offline baselines have no closed-book policy; closed-book needs a model")
    role = get_role("closed_book")
    ep = await run_role(
        model, None, role, record, {"variant": "closed-book", "question": question_id}, question=question
    )
    parsed = parse_answer(ep.final)
    return RoleOutput(role.name, model.name, ep.final, parsed.answer, parsed.citations, ep)


async def guidance(
    model: Model,
    store: Store,
    task: str,
    *,
    task_id: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
) -> RoleOutput:
    """Guidance synthesis (skill setting, GS variant): task-specific advice written from the store."""
    if model.is_offline:
        raise MemdirError("the offline baselines do not synthesize guidance; use a model")
    role = get_role("guidance", profile=profile)
    harness = Harness(
        store, role.profile or "search", role=role.name, task=task_id, variant="curated-skills-mem-gs"
    )
    ids = {"variant": "curated-skills-mem-gs", "task": task_id}
    ep = await run_role(model, harness, role, record, ids, core_memory=spec.context(store).text, task=task)
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
    """The skill setting's search agent: which whole entries to serve for `task` (its citations)."""
    if model.is_offline:
        raise MemdirError("the offline baselines select entries mechanically; use a model")
    role = get_role("skill_search", profile=profile)
    harness = Harness(store, role.profile or "search", role=role.name, task=task_id, variant=variant)
    ids = {"variant": variant, "task": task_id}
    rule = STRICT_RULE if strict else LOOSE_RULE
    core = spec.context(store).text
    ep = await run_role(model, harness, role, record, ids, core_memory=core, task=task, strict_rule=rule, k=k)
    parsed = parse_answer(ep.final)
    return RoleOutput(role.name, model.name, ep.final, parsed.answer, parsed.citations, ep)


async def search_many(
    model: Model,
    store: Store,
    questions: list[tuple[str, str]],
    *,
    in_flight: int = 8,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
) -> list[RoleOutput]:
    """Answer (question id, question) pairs with at most `in_flight` at once (8 in the study), in order."""
    gate = asyncio.Semaphore(in_flight)

    async def one(qid: str, question: str) -> RoleOutput:
        async with gate:
            return await search(
                model, store, question, question_id=qid, variant=variant, record=record, profile=profile
            )

    return list(await asyncio.gather(*(one(qid, q) for qid, q in questions)))
