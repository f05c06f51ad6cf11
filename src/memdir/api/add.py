"""What `add` takes and what it returns, once for `Memory` and `AsyncMemory`.

`add` keeps the choices an app makes about its memory (the model, whose words, when, how it is
curated, whether health findings go back to the model); the settings of a run that compares
layouts (the ingest strategy and its switch point, tool profiles, a benchmark sample) belong to
the one ingest (agents/ingest_batch.py), which such a run calls directly. The signature is
written once, as `AddOptions`, and `memory.takes` gives it to both faces, so Python and the type
checker refuse the same calls on each.
"""

from __future__ import annotations

import warnings
from dataclasses import KW_ONLY, dataclass
from datetime import date as date_type
from datetime import timedelta
from typing import TYPE_CHECKING

from memdir.api.inputs import Input
from memdir.api.results import AddResult
from memdir.errors import NoOpWarning

if TYPE_CHECKING:
    from memdir.agents.curation import Curation
    from memdir.agents.feedback import Feedback
    from memdir.agents.ingest_batch import Ingested
    from memdir.models import Model


@dataclass(frozen=True)
class AddOptions:
    """The one signature of `add`, for the sync and the async face alike (`memory.takes`)."""

    data: Input
    _: KW_ONLY
    model: str | Model | None = None
    speaker: str = "user"
    date: str | date_type | None = None
    session_gap: timedelta | None = None
    curation: Curation = "auto"
    feedback: Feedback = "none"


def result(done: Ingested, model: str, source: str, skipped: int) -> AddResult:
    """The batch as `add` reports it; a batch that added nothing says so (a `NoOpWarning`)."""
    said, already, shaped = done.summary(), done.batch.placed.already, done.shaped
    if shaped is None:
        warnings.warn(NoOpWarning(said), stacklevel=2)
        return AddResult.nothing_new(
            model=model, source=source, summary=said, skipped=skipped, already=already
        )
    op = done.operation or ""
    if (result := shaped.ingest) is None:  # a dump batch: no model call
        merge = shaped.merge
        writes = len(merge.created) + len(merge.appended) if merge is not None else 0
        return AddResult.from_dump(
            turns=shaped.turns, writes=writes, model=model, source=source, summary=said, skipped=skipped,
            already=already, operation=op,
        )  # fmt: skip
    return AddResult.from_ingest(
        result,
        went=shaped.went,
        switch_kb=shaped.switch.dump_kb if shaped.went == "switch" and shaped.switch else None,
        model=model,
        source=source,
        summary=said,
        skipped=skipped,
        already=already,
        operation=op,
    )
