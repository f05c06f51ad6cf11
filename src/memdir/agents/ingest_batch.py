"""One ingest: a batch of a conversation into a store, the one path `Memory.add`, `memdir ingest`
and a plugin's runs take, so they cannot drift apart.

Wherever the turns come from, the steps are the same: one ingest at a time (the store's ingest
lock), the batch placed in the store's stream (turns the store holds left out, derived locators
continuing their conversation), then integrated as one operation (one id for all its steps, so
`memdir revert --operation` undoes it whole), each chunk's turns recorded in the ledger as it
lands so that a failed run resumes (store/ingest_ledger.py). Reading the turns (text, messages,
a file) and saying the result belong to the callers; `on_placed` hands them the batch before
any model runs, so they can say what was left out and, on a failure, what landed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from memdir.agents.curation import Curation
from memdir.agents.feedback import Feedback
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.agents.strategy import SWITCH_KB, Strategy, StrategyResult, ingest_by_strategy
from memdir.models import Model
from memdir.store import secrets
from memdir.store.ingest_ledger import Batch, place, serialized_async
from memdir.store.operations import operation
from memdir.store.store import Store
from memdir.stream import Turn
from memdir.tools.profiles import require_profile


@dataclass(frozen=True)
class IngestSettings:
    """How a batch is integrated. `curation` and `feedback` are the product's choices
    (docs/curation.md, docs/health.md); `strategy`, `switch_kb` and `profile` are for runs that
    compare layouts and tool sets (docs/eval.md, "Ingest strategy"; the tool profiles), which
    `Memory.add` leaves at these defaults."""

    curation: Curation = "auto"
    feedback: Feedback = "none"
    strategy: Strategy = "curate"
    switch_kb: float | None = None  # None: SWITCH_KB
    profile: str | None = None  # None: the management role's own


@dataclass(frozen=True)
class Ingested:
    """What one batch did: where it was placed, how it was integrated (None when the store held
    every turn already, and nothing ran), and the operation its steps belong to."""

    batch: Batch
    given: int  # the turns the caller handed over, before placing
    shaped: StrategyResult | None
    operation: str | None
    redacted: tuple[str, ...] = ()  # the kind of each secret kept out of the turns

    @property
    def already(self) -> list[str]:
        """What placing said: turns left out, sessions continued or renumbered."""
        return self.batch.placed.lines(self.given)

    def summary(self) -> str:
        """The batch in one line: what placing said, then where the batch went, then the
        secrets written as `[redacted: kind]` (docs/secrets.md)."""
        kept_out = [f"{secrets.said(self.redacted)} redacted"] if self.redacted else []
        if self.shaped is None:
            nothing = f"every turn was already in the store; nothing was added ({'; '.join(self.already)})"
            return "; ".join([nothing, *kept_out])
        said = self.shaped.summary()  # the dump, or the switch: then the ingest's own line follows
        if (result := self.shaped.ingest) is not None:
            said = result.summary() if self.shaped.went == "curate" else f"{said}; {result.summary()}"
        return "; ".join([*self.already, said, *kept_out])


async def ingest_batch(
    model: Model,
    store: Store,
    turns: list[Turn],
    *,
    derived: bool,
    ids: Sequence[str | None] = (),
    kind: str,
    file: str | None = None,
    settings: IngestSettings = IngestSettings(),
    record: RunRecord | None = None,
    on_wait: Callable[[], None] | None = None,
    on_placed: Callable[[Batch], None] | None = None,
    on_curate: Callable[[int], None] | None = None,
    on_chunk: Callable[[RoleOutput], None] | None = None,
) -> Ingested:
    """Place `turns` (`derived`: their locators were numbered from S1T1 by the reader; `ids`:
    each turn's id in its source) and integrate what is new as one operation of `kind`, named
    after the `file` the turns were read from, else by the new turns' count. `on_wait` is told
    when another ingest holds the store; `on_curate` and `on_chunk` follow curation
    (agents/strategy.py)."""
    if settings.profile is not None:
        require_profile(settings.profile)  # refused before the store is locked or a model started
    turns, redacted = redact_turns(store, turns)
    async with serialized_async(store, on_wait=on_wait):
        store.finish_landing()  # one another process was stopped in: placed on the store whole
        batch = Batch(store, place(store, turns, derived=derived, ids=ids))
        if on_placed is not None:
            on_placed(batch)
        if not batch.placed.turns:
            return Ingested(batch, len(turns), None, None, redacted)
        s, n = settings, len(batch.placed.turns)
        label = f"{kind} {Path(file).name}" if file is not None else f"{kind} {n} turn{'s' * (n != 1)}"
        with operation(store.root, kind, label) as op:
            shaped = await ingest_by_strategy(
                model, store, batch.placed.turns, strategy=s.strategy,
                threshold_kb=SWITCH_KB if s.switch_kb is None else s.switch_kb, record=record,
                profile=s.profile, feedback=s.feedback, curation=s.curation, on_chunk=on_chunk,
                on_curate=on_curate, on_landed=batch.land,
            )  # fmt: skip
    return Ingested(batch, len(turns), shaped, op.id, redacted)


def redact_turns(store: Store, turns: list[Turn]) -> tuple[list[Turn], tuple[str, ...]]:
    """The turns with their secrets written as `[redacted: kind]` (the store's allowlist kept),
    before anything sees them: the ledger's digests, the dump's files and every model prompt
    then hold the redacted words, so no file, log or provider is sent the secret; and the kinds
    kept out. The same export read again redacts the same way, so the ledger still knows it."""
    out: list[Turn] = []
    kinds: list[str] = []
    for t in turns:
        text, hits = store.redact(t.text)
        out.append(t if not hits else replace(t, text=text))
        kinds += [h.kind for h in hits]
    return out, tuple(kinds)
