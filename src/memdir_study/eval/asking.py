"""How a cell's questions are put to what its build left: one way per cell, chosen once from the
built store and the run's `search`, so the runner asks every cell the same way and scores
whatever comes back.

The choice rests on what the store and its profile are, never on a profile's name: no store is
the closed-book floor; a search profile that can write (the shell's `bash`) answers each
question on its own scratch copy, since the search role must never change the store it is judged
on (eval/shell_search.py); otherwise the search role over the store with the build's profile, or
memdir's read search when the run asks for it (`--search read`, open questions only: a
multiple-choice question is always the choice role). A multiple-choice question's chosen index is
`extra["choice"]` whichever way it was asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdir.agents import RunRecord, answer_question, choose_option
from memdir.agents.output import RoleOutput
from memdir.agents.read_search import read_search
from memdir.models import Model
from memdir.tools.profiles import profile_specs
from memdir_study.eval.shell_search import shell_search
from memdir_study.roles import closed_book
from memdir_study.variants import Built, variant_role

# The study's search agent gets its system prompt, the question and the fixed citation instruction:
# no core-memory block for any variant, so the dump's root sessions are searched through the tools
# (docs/study.md, Configuration of record). The product (`Memory.ask`, MCP, `memdir ask`) loads it.
CORE_MEMORY_IN_SEARCH = False


Way = Literal["closed-book", "scratch", "store"]


@dataclass(frozen=True)
class Ask:
    """One question put to the cell's built store (its options, if any, shown with it), the way
    `way_to_ask` chose for the cell."""

    way: Way
    built: Built
    search_kind: str

    async def __call__(
        self,
        model: Model,
        question: str,
        options: list[str],
        *,
        question_id: str,
        variant: str,
        record: RunRecord,
    ) -> RoleOutput:
        store, profile = self.built.store, self.built.search_profile
        if self.way == "closed-book" or store is None:
            return await closed_book(
                model, question, options=options or None, question_id=question_id, record=record
            )
        core = CORE_MEMORY_IN_SEARCH
        if self.way == "scratch" and profile is not None:
            return await shell_search(
                model, store, question, options, profile=profile, question_id=question_id, variant=variant,
                record=record, core_memory=core,
            )  # fmt: skip
        role = variant_role("answer", variant, profile)
        if options:
            return await choose_option(
                model, store, question, options, question_id=question_id, variant=variant, record=record,
                core_memory=core, role=role,
            )  # fmt: skip
        if self.search_kind == "read":
            return await read_search(
                model, store, question, question_id=question_id, variant=variant, record=record
            )
        return await answer_question(
            model, store, question, question_id=question_id, variant=variant, record=record,
            core_memory=core, role=role,
        )  # fmt: skip


def way_to_ask(built: Built, search_kind: str) -> Ask:
    """The one way this cell's questions are asked (the module docstring says why each)."""
    profile = built.search_profile
    if built.store is None:
        return Ask("closed-book", built, search_kind)
    if profile is not None and not all(s.read_only for s in profile_specs(profile)):
        return Ask("scratch", built, search_kind)
    return Ask("store", built, search_kind)
