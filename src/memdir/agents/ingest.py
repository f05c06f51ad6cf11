"""A stream of turns into a store, chunk by chunk, saying plainly which chunks changed nothing.

A model that answers without calling a tool (a small local model whose calls the server did not
parse, a model that only talks) leaves the store as it was; a run that reports "integrated" then
is a silent no-op. `ingest` counts the writes of every management episode, names the chunks that
wrote nothing in the run record, and the CLI and the API warn (and the CLI exits non-zero when
no chunk changed anything).

`on_landed` is told each chunk's turns once its episode is over (whatever it wrote), before the
next chunk starts: the ingest ledger records them then, so a run a model error stops at chunk 3
has recorded chunks 1 and 2, and its rerun resumes (store/ingest_ledger.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from memdir.agents.curation import Curation, resolve
from memdir.agents.feedback import Feedback
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.agents.roles import Role
from memdir.agents.run import manage_chunk
from memdir.errors import NoOpWarning as NoOpWarning  # in the leaf: `import memdir` reaches it cheaply
from memdir.models import Model
from memdir.store.store import Store
from memdir.stream import Turn, chunk_stream


@dataclass
class IngestResult:
    turns: int
    chunks: list[int]
    writes: dict[int, int] = field(default_factory=dict)  # chunk id -> file changes it made
    outputs: list[RoleOutput] = field(default_factory=list)

    @property
    def unchanged(self) -> list[int]:
        """Chunks whose episode wrote nothing."""
        return [c for c in self.chunks if self.writes.get(c, 0) == 0]

    @property
    def changed_nothing(self) -> bool:
        return bool(self.chunks) and len(self.unchanged) == len(self.chunks)

    def summary(self) -> str:
        n, bad = len(self.chunks), len(self.unchanged)
        line = f"integrated {self.turns} turn(s) in {n} chunk(s): {n - bad} changed the store"
        if bad:
            named = ", ".join(map(str, self.unchanged[:10])) + (" ..." if bad > 10 else "")
            line += f", {bad} changed nothing ({named})"
        undone = self.undone
        if undone:
            named = ", ".join(map(str, undone[:10])) + (" ..." if len(undone) > 10 else "")
            line += f"; {len(undone)} of them undone by the mend gate ({named})"
        return line

    @property
    def undone(self) -> list[int]:
        """Chunks whose episode the mend gate undid (agents/mend_gate.py): they wrote, then lost it."""
        return [c for c, out in zip(self.chunks, self.outputs, strict=False) if out.extra.get("undone")]


async def ingest(
    model: Model,
    store: Store,
    turns: list[Turn],
    *,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
    on_chunk: Callable[[RoleOutput], None] | None = None,
    feedback: Feedback = "none",
    curation: Curation = "auto",
    role: Role | None = None,
    on_landed: Callable[[list[Turn]], None] | None = None,
) -> IngestResult:
    """Integrate `turns` (chunked by `stream.chunk_stream`) with the management role; warn on no-ops.
    `feedback="health"` sends each episode the findings it introduced (agents/feedback.py);
    `curation` chooses the agentic episode or split curation (agents/curation.py); `on_landed`
    gets each chunk's turns once its episode is over."""
    resolve(curation, model)  # a bad value or split for the offline model, refused before any chunk
    chunks = chunk_stream(turns)
    result = IngestResult(len(turns), [c.id for c in chunks])
    for chunk in chunks:
        out = await manage_chunk(
            model,
            store,
            chunk,
            variant=variant,
            record=record,
            profile=profile,
            feedback=feedback,
            curation=curation,
            role=role,
        )
        if on_landed is not None:
            on_landed(list(chunk.turns))
        writes = int(out.extra.get("writes", 0))
        result.writes[chunk.id] = writes
        result.outputs.append(out)
        if writes == 0 and record is not None:
            record.write(
                "no_op",
                role="management",
                variant=variant,
                chunk=chunk.id,
                model=model.name,
                reason=_no_op_reason(out),
                reply=out.text[:2000],
            )
        if on_chunk is not None:
            on_chunk(out)
    if result.unchanged:
        warnings.warn(NoOpWarning(result.summary()), stacklevel=2)
    return result


def _no_op_reason(out: RoleOutput) -> str:
    if out.extra.get("undone"):
        why = ", ".join(out.extra.get("undo_reasons") or [])
        return f"the management episode was undone whole by the mend gate ({why})"
    return "the management episode changed nothing in the store"
