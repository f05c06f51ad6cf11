"""Search under the shell harness: the search role with `bash`, which can write.

The search role must never change the store it is judged on, and questions are answered
side by side, so each question gets its own scratch copy of the store
(`store.workcopy.scratch_copy`): whatever a command writes there is thrown away with the copy.
Citations name paths, the same in the copy and the original, and are resolved against the
original.
"""

from __future__ import annotations

from memdir.agents import RunRecord, parse_answer
from memdir.agents.output import RoleOutput
from memdir.agents.record import RecordIds
from memdir.agents.roles import search_turn
from memdir.agents.run import map_choice, options_prompt, run_role
from memdir.models import Model
from memdir.store import spec
from memdir.store.store import Store
from memdir.store.workcopy import scratch_copy
from memdir.tools.profiles import Harness
from memdir_study.variants import variant_role


async def shell_search(
    model: Model,
    store: Store,
    question: str,
    options: list[str] | None = None,
    *,
    profile: str = "shell",
    question_id: str,
    variant: str,
    record: RunRecord,
    core_memory: bool = True,
) -> RoleOutput:
    """`core_memory` as for `agents.run.answer_question`: the study's runner leaves it out. With
    `options`, the question is put with them, as `choose_option` puts it, and the chosen index is
    `extra["choice"]`."""
    role = variant_role("answer", variant, profile)
    asked = options_prompt(question, options) if options else question
    with scratch_copy(store) as scratch:
        harness = Harness(scratch, profile, role=role.name, question=question_id, variant=variant)
        ids: RecordIds = {"variant": variant, "question": question_id}
        core = spec.context(scratch).text if core_memory else None
        ep = await run_role(model, harness, role, record, ids, search_turn=search_turn(asked, core))
    parsed = parse_answer(ep.final)
    out = RoleOutput(role.name, model.name, ep.final, parsed.answer, parsed.citations, ep)
    if options:
        out.extra["choice"] = map_choice(out.answer or "", options)
    return out
