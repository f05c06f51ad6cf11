"""Model-backed serving in the skill setting: the search agent picks the whole entries to serve
(curated variants) or writes guidance (GS), always over a store it cannot change.

Under the shell harness the search role holds `bash`, which can write. As in the conversational
study's shell search, it then works on a scratch copy of the store (derived state left out);
its citations name paths, which are resolved against the original.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.conventions import parse_citation
from memdir.errors import ToolError
from memdir.models import Model, Usage
from memdir.store.store import Store
from memdir.store.workcopy import scratch_copy
from memdir_study.roles import guidance as write_guidance
from memdir_study.roles import select_entries
from memdir_study.skills.retrieve import Doc


@contextmanager
def read_only(store: Store, profile: str) -> Iterator[Store]:
    """The store itself for read-only profiles; a throwaway copy for the shell."""
    if profile != "shell":
        yield store
        return
    with scratch_copy(store) as copy:
        yield copy


def cited_files(citations: list[str], store: Store, k: int) -> list[str]:
    """Distinct entry files named by citations (`path`, `path:12-14`, `path > # Heading`; the grammar
    of `conventions.parse_citation`, as the evaluation resolves them), at most k."""
    out: list[str] = []
    for c in citations:
        path = parse_citation(c).path
        if not path.endswith(".md") or path.endswith("/MEMORY.md") or path in out:
            continue
        try:
            ok = store.exists(path) and not store.is_dir(path)
        except ToolError:  # a malformed path in a citation serves nothing
            ok = False
        if ok:
            out.append(path)
        if len(out) == k:
            break
    return out


def _usage(out: RoleOutput) -> Usage:
    return out.episode.usage if out.episode else Usage()


async def select(
    model: Model, store: Store, task: str, *, strict: bool, k: int, variant: str, index: int,
    record: RunRecord | None, profile: str,
) -> tuple[list[Doc], Usage]:  # fmt: skip
    """The entries the search agent cites for `task`, served whole, and what choosing cost.

    A store with no entry yet (only `MEMORY.md` indexes: the first task of a chain) serves
    nothing without asking the model: the local model spent minutes looking through an empty
    store for task 1 (benchmarks/results/2026-12-06-docstring-figures.md,
    "memdir_study/skills/serving.py"). The skipped choice is a record line, not a silence."""
    if not has_entries(store):
        if record is not None:
            record.write("serve_skipped", role="skill_search", variant=variant, task=index,
                         reason="the store holds no entry yet")  # fmt: skip
        return [], Usage()
    with read_only(store, profile) as view:
        out = await select_entries(
            model, view, task, strict=strict, k=k, variant=variant, task_id=str(index), record=record,
            profile=profile,
        )  # fmt: skip
    docs = [Doc(p, store.read_text(p)) for p in cited_files(out.citations, store, k)]
    return docs, _usage(out)


def has_entries(store: Store) -> bool:
    """Whether any file besides the `MEMORY.md` indexes exists (an entry the agent could cite)."""
    return any(e.path.name != "MEMORY.md" for e in store.files())


async def guide(
    model: Model, store: Store, task: str, *, index: int, record: RunRecord | None, profile: str
) -> tuple[str, list[str], Usage]:
    """GS: guidance the search agent writes for `task`, the files it cites, and what it cost
    (nothing, and no model call, while the store holds no entry)."""
    if not has_entries(store):
        if record is not None:
            record.write("serve_skipped", role="guidance", variant="curated-skills-mem-gs", task=index,
                         reason="the store holds no entry yet")  # fmt: skip
        return "", [], Usage()
    with read_only(store, profile) as view:
        out = await write_guidance(model, view, task, task_id=str(index), record=record, profile=profile)
    return out.answer or out.text, cited_files(out.citations, store, 100), _usage(out)
