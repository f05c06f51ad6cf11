"""The ingest strategy (`memdir ingest --strategy auto`): a verbatim dump while the store is small,
curation once the dump's search cost becomes a line item.

The dump costs nothing to build (no model call), but its session files sit at the root, so its
whole text is core memory (docs/study.md, "The store"): every question's prompt carries all of
it. A curated store's prompt carries only its root index, and its questions read a few small
files. So the dump is the cheaper store only while it is small; `auto` dumps while the dump,
with the batch, stays within `threshold_kb` (KB of session files) and, the first time it would
pass it, switches: the dump's turns (read back from the session files) and the batch go to the
management role, and the curated store replaces the dump. Past the switch, `auto` curates.

The switch runs on a fresh store in a temporary folder, not on the dump itself: curating in
place would send every session file to every management episode as core memory, and a model
shown the dump could take its turns as already stored. The result lands in one journaled step,
only when the store has not changed meanwhile, and only after a check that no turn is lost:
every turn line of the dump (with the batch) must be kept verbatim (`diff --facts`) or have its
locator cited by a curated file; the turns that are neither stay, in their session files.

The store's layout is read from the files (a store holding only session files and the dump's
index is a dump; anything else is curated); `.memdir/strategy.json` records the layout and the
switch point, derived state that only reports (a store written before the rename keeps it in
`shape.json`, still read).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypedDict

from memdir.agents import landing
from memdir.agents.curation import Curation
from memdir.agents.dump_format import (
    DumpedSession,
    Merge,
    is_dump_index,
    is_session_file,
    merge_turns,
    read_dump,
)
from memdir.agents.feedback import Feedback
from memdir.agents.ingest import IngestResult, ingest
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.analytics.integrity import diff_facts
from memdir.conventions import locators
from memdir.errors import MemdirError
from memdir.models import Model
from memdir.store import spec
from memdir.store.atomic import write_atomic
from memdir.store.safefs import DIR_MODE
from memdir.store.store import Store
from memdir.stream import Turn, chunk_stream
from memdir.tools.guards import GuardedStore
from memdir.tools.wiring import open_store

Strategy = Literal["curate", "dump", "auto"]
STRATEGIES: tuple[Strategy, ...] = ("curate", "dump", "auto")
Layout = Literal["empty", "dump", "curated"]
Went = Literal["dump", "curate", "switch"]

# The dump's size (KB of its session files) past which a question on it costs more than twice
# what it costs on the curated store; benchmarks/switch_threshold.py derives it from the cost
# curve's run folders (docs/eval.md, "Ingest strategy"). Per question: the bytes a model's search
# is sent (system prompt, tool schemas, core memory, question) plus the bytes its tools read. The
# dump's session files are all core memory, so every prompt carries them and its cost grows with
# them, while the curated store's stays flat; tool reads alone never reach twice (the searcher
# reads its top files whatever the size). The points and the fit:
# benchmarks/results/2026-12-06-adaptive-shape-threshold.md, "The switch point, 5.3 KB".
SWITCH_KB = 5.3
STATE_FILE = "strategy.json"
OLD_STATE_FILE = "shape.json"
INDEX = "/memories/MEMORY.md"


class SwitchRecord(TypedDict):
    """A switch point as `strategy.json` and the run record keep it."""

    turns: int
    new_turns: int
    locator: str | None
    session: int | None
    chunk: int | None
    dump_kb: float
    threshold_kb: float
    time: str


class StrategyState(TypedDict, total=False):
    """`.memdir/strategy.json`: the store's layout, the threshold it was judged by, and, once it
    switched, where and what the curated files kept (session file -> turns)."""

    layout: Layout
    threshold_kb: float
    dump_kb: float
    switched_at: SwitchRecord
    kept: dict[str, list[str]]


@dataclass(frozen=True)
class SwitchPoint:
    """Where a store went from dump to curation."""

    turns: int  # turns the dump held: the backlog curated at the switch
    new_turns: int  # the batch's turns curated with it
    locator: str | None  # the batch's first turn: where the dump would have passed the threshold
    session: int | None
    chunk: int | None  # the curation chunk holding that turn
    dump_kb: float  # the dump's KB with the batch: what passed the threshold
    threshold_kb: float
    time: str

    def as_dict(self) -> SwitchRecord:
        return {
            "turns": self.turns,
            "new_turns": self.new_turns,
            "locator": self.locator,
            "session": self.session,
            "chunk": self.chunk,
            "dump_kb": self.dump_kb,
            "threshold_kb": self.threshold_kb,
            "time": self.time,
        }


@dataclass
class StrategyResult:
    """What one batch did: the strategy asked, where the batch went, and the figures to say so."""

    strategy: Strategy
    went: Went
    threshold_kb: float
    turns: int
    dump_kb: float = 0.0  # the dump after the batch (dump), or the size that passed (switch)
    merge: Merge | None = None  # dump: the files and turns written
    ingest: IngestResult | None = None  # curate, switch
    switch: SwitchPoint | None = None  # switch: this batch's; curate: the store's, when recorded
    verbatim: int = 0  # switch: the dump's turn lines a curated file keeps as written
    by_locator: int = 0  # switch: the others, whose locator a curated file cites
    kept: dict[str, list[str]] = field(default_factory=dict)  # switch: session file -> turns kept

    @property
    def wrote_nothing(self) -> bool:
        return self.went == "dump" and self.merge is not None and not self.merge.fresh

    def summary(self) -> str:
        """The line the CLI prints: where the batch went, and the switch point."""
        if self.went == "dump":
            return f"strategy {self.strategy}: dump ({self._of()}): {self._wrote()}"
        if self.went == "switch" and self.switch is not None:
            s = self.switch
            if self.strategy == "curate":
                return (
                    f"strategy curate: the store held a verbatim dump ({s.dump_kb:.1f} KB with this batch): "
                    f"curated its {s.turns} turns + {s.new_turns} new"
                )
            at = f"at {s.locator}: session {s.session}, chunk {s.chunk}" if s.locator else "no new turn"
            return (
                f"strategy {self.strategy}: switched to curation at {s.dump_kb:.1f} KB of "
                f"{s.threshold_kb:g} KB (after {s.turns} dumped turns; {at}): "
                f"curated {s.turns} backlog turns + {s.new_turns} new"
            )
        was = (
            f" (it switched at {self.switch.dump_kb:.1f} KB, after {self.switch.turns} turns)"
            if self.switch
            else ""
        )
        return f"strategy {self.strategy}: curate{was}"

    def _of(self) -> str:
        return f"{self.dump_kb:.1f} KB" + (f" of {self.threshold_kb:g} KB" if self.strategy == "auto" else "")

    def _wrote(self) -> str:
        m = self.merge
        if m is None:
            return ""
        if not m.fresh:
            return f"wrote nothing: all {m.skipped} turn(s) were already in the dump"
        skipped = f"; {m.skipped} already in the dump" if m.skipped else ""
        return (
            f"wrote {len(m.fresh)} turn(s) into {len(m.changed)} session file(s) "
            f"({len(m.created)} new, {len(m.appended)} appended to){skipped}"
        )

    def landing(self) -> str:
        """What became of the dump at a switch: removed, or which turns stayed and where."""
        line = f"the dump's turn lines, the batch's included: {self.verbatim} kept verbatim by the "
        line += f"curated store, {self.by_locator} cited by locator"
        if not self.kept:
            return line + "; its session files removed"
        n = sum(map(len, self.kept.values()))
        named = "; ".join(
            f"{p} ({', '.join(locs[:5])}{' ...' if len(locs) > 5 else ''})" for p, locs in self.kept.items()
        )
        return line + f"; {n} turn(s) no curated file cites stay in {len(self.kept)} session file(s): {named}"


# -- the store's layout, from its files -----------------------------------------------------
def layout(store: Store) -> Layout:
    """`dump` when the store holds only session files and a dump's (or the stock) root index,
    `empty` when it holds at most the stock index, `curated` otherwise."""
    sessions = False
    for e in store.walk():  # stops at the first file of another layout
        if e.is_dir:
            continue
        if is_session_file(e.path):
            sessions = True
        elif e.path.text != INDEX:
            return "curated"
    if store.exists(INDEX):
        text = store.read_text(INDEX)
        if text != spec.INIT_INDEX and not is_dump_index(text):
            return "curated"
    return "dump" if sessions else "empty"


def read_state(store: Store) -> StrategyState | None:
    """The recorded layout and switch (`.memdir/strategy.json`, or an older store's `shape.json`),
    or None when there is none or it is unreadable."""
    for name in (STATE_FILE, OLD_STATE_FILE):
        try:
            data: StrategyState = json.loads((store.state_dir / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None  # memdir's own record, or not one at all
    return None


def write_state(store: Store, state: StrategyState) -> None:
    write_atomic(store.state_dir / STATE_FILE, (json.dumps(state, indent=2) + "\n").encode("utf-8"))


def recorded_switch(store: Store) -> SwitchPoint | None:
    state = read_state(store) or StrategyState()
    try:
        return SwitchPoint(**state["switched_at"]) if state.get("switched_at") else None
    except TypeError:
        return None


# -- the one entry point --------------------------------------------------------------------
async def ingest_by_strategy(
    model: Model,
    store: Store,
    turns: list[Turn],
    *,
    strategy: Strategy = "curate",
    threshold_kb: float = SWITCH_KB,
    variant: str | None = None,
    record: RunRecord | None = None,
    profile: str | None = None,
    feedback: Feedback = "none",
    on_chunk: Callable[[RoleOutput], None] | None = None,
    on_curate: Callable[[int], None] | None = None,
    curation: Curation = "auto",
    on_landed: Callable[[list[Turn]], None] | None = None,
) -> StrategyResult:
    """Integrate a batch of turns by the strategy asked. `dump`: append them to the verbatim dump
    (one step, no model call). `curate`: the management role (a store that holds a dump is
    switched first, so no store is half dump, half curated). `auto`: dump while the dump stays
    within `threshold_kb`, else switch. `on_curate` is told how many chunks curation will run;
    `curation` is how each chunk is curated (agents/curation.py). `on_landed` is told the turns
    that are in the store, as they land: each chunk curated in place, the dump's batch, or the
    whole batch once a switch lands (the ingest ledger records them then)."""
    if strategy not in STRATEGIES:
        raise MemdirError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if threshold_kb < 0:
        raise MemdirError(f"the switch threshold must be at least 0 KB, not {threshold_kb:g}")
    kind = layout(store)
    if strategy == "dump" and kind == "curated":
        raise MemdirError(
            f"{store.root} holds a curated store (files beyond the dump's session files and index); "
            "a verbatim dump goes into an empty store or a dump: use --strategy curate or auto"
        )
    result = StrategyResult(strategy, "curate", threshold_kb, len(turns))
    manager = _Manager(model, variant, record, profile, feedback, on_chunk, on_curate, curation)
    if kind == "curated" or (strategy == "curate" and kind == "empty"):
        result.switch = recorded_switch(store)
        result.ingest = await manager.curate(store, turns, on_landed)
        _note(store, record, result, "curated")
        return result
    live = landing.digests(store)  # what the batch is decided on: checked again when it lands
    dumped = read_dump(store)
    merge = merge_turns(dumped, turns)
    kb = _dump_kb(store, merge)
    if strategy == "dump" or (strategy == "auto" and kb <= threshold_kb):
        result.went, result.merge, result.dump_kb = "dump", merge, kb
        _write_dump(store, merge, live)
        if on_landed is not None:
            on_landed(turns)
        _note(store, record, result, "dump")
        return result
    result.went, result.dump_kb = "switch", kb
    backlog = [t for s in dumped.values() for t in s.turns]
    result.switch = _switch_point(backlog, merge.fresh, kb, threshold_kb)
    if backlog:
        await manager.switch(store, live, result, backlog, merge)
        if on_landed is not None:
            on_landed(turns)
    else:  # nothing dumped yet: curating the batch is the whole switch
        result.ingest = await manager.curate(store, turns, on_landed)
    _note(store, record, result, "curated")
    return result


def _dump_kb(store: Store, merge: Merge) -> float:
    """KB of the session files once the batch is in: rendered for the files it changes, as they
    are on disk for the others."""
    changed = set(merge.changed)
    sizes = {e.path.text: e.size for e in store.files() if is_session_file(e.path)}
    total = sum(len(merge.text(p).encode()) if p in changed else sizes.get(p, 0) for p in merge.sessions)
    return total / 1024


def _write_dump(store: Store, merge: Merge, live: dict[str, str]) -> None:
    """The batch's session files and the root index, in one step, if the store is still `live`."""
    if not merge.fresh:
        return
    with store.step("verbatim_dump", role="builder", strategy="dump", turns=len(merge.fresh)):
        _unchanged(
            store, live, "the store changed while the batch was merged into its dump; nothing was written"
        )
        for path in merge.created:
            store.create(path, merge.text(path))
        for path in merge.appended:
            store.write(path, merge.text(path))
        index = merge.index()
        if not store.exists(INDEX):
            store.create(INDEX, index)
        elif store.read_text(INDEX) != index:
            store.write(INDEX, index)


def _switch_point(backlog: list[Turn], fresh: list[Turn], kb: float, threshold_kb: float) -> SwitchPoint:
    first = fresh[0] if fresh else None
    chunk = None
    if first is not None:
        seen = 0
        for c in chunk_stream([*backlog, *fresh]):
            seen += len(c.turns)
            if seen > len(backlog):
                chunk = c.id
                break
    return SwitchPoint(
        len(backlog),
        len(fresh),
        first.locator if first else None,
        first.session if first else None,
        chunk,
        round(kb, 2),
        threshold_kb,
        datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _note(store: Store, record: RunRecord | None, result: StrategyResult, now: Layout) -> None:
    """Record the layout in `.memdir/strategy.json` (keeping an earlier switch point) and the run record."""
    state = read_state(store) or StrategyState()
    state["layout"], state["threshold_kb"] = now, result.threshold_kb
    if result.went == "dump":
        state["dump_kb"] = round(result.dump_kb, 2)
    if result.went == "switch" and result.switch is not None:
        state["switched_at"], state["kept"] = result.switch.as_dict(), result.kept
        state.pop("dump_kb", None)
    write_state(store, state)
    plain = result.strategy == "curate" and result.went == "curate"  # its call log stays as it was
    if record is not None and not plain:
        record.write(
            "strategy",
            strategy=result.strategy,
            went=result.went,
            turns=result.turns,
            dump_kb=round(result.dump_kb, 2),
            threshold_kb=result.threshold_kb,
            switch=result.switch.as_dict() if result.went == "switch" and result.switch else None,
        )


@dataclass
class _Manager:
    """The management role as the caller set it up: curating in place, and the switch (the
    dump's turns and the batch curated on a fresh store, landed on the dump)."""

    model: Model
    variant: str | None
    record: RunRecord | None
    profile: str | None
    feedback: Feedback
    on_chunk: Callable[[RoleOutput], None] | None
    on_curate: Callable[[int], None] | None
    curation: Curation = "auto"

    async def curate(
        self, store: Store, turns: list[Turn], on_landed: Callable[[list[Turn]], None] | None = None
    ) -> IngestResult:
        """`on_landed` only for curation in place: a switch curates on a copy first."""
        if self.on_curate is not None:
            self.on_curate(len(chunk_stream(turns)))
        return await ingest(
            self.model, store, turns, variant=self.variant, record=self.record, profile=self.profile,
            on_chunk=self.on_chunk, feedback=self.feedback, curation=self.curation, on_landed=on_landed,
        )  # fmt: skip

    async def switch(
        self, store: Store, live: dict[str, str], result: StrategyResult, backlog: list[Turn], merge: Merge
    ) -> None:
        guards = store.guards if isinstance(store, GuardedStore) else None
        with tempfile.TemporaryDirectory(prefix="memdir-switch-") as tmp:
            work = open_store(Path(tmp) / "store", create=True, init=True, journal=False, guards=guards)
            work.safe.allowed = store.safe.allowed  # the store's allowlist holds where it is curated
            result.ingest = await self.curate(work, [*backlog, *merge.fresh])
            if result.ingest.changed_nothing:
                raise MemdirError(
                    "curating the dump changed nothing (every management episode wrote nothing); "
                    "the dump stays as it was"
                )
            target = {p: work.read_bytes(p) for p in landing.digests(work)}
            _gate(merge, work, Path(tmp) / "dump", result, target)
        self._land(store, live, target, result)

    def _land(
        self, store: Store, live: dict[str, str], target: dict[str, bytes], result: StrategyResult
    ) -> None:
        """The curated files in, the dump out, in one step, if the store is still the dump read."""
        ops = landing.plan(live, {p: landing.sha256(b) for p, b in target.items()})
        old = landing.read(store, ops.old_side)
        s = result.switch
        meta: dict[str, Any] = {"role": "management", "variant": self.variant, "model": self.model.name}
        if s is not None:
            meta |= {"backlog_turns": s.turns, "new_turns": s.new_turns, "dump_kb": s.dump_kb}
        with store.step("strategy_switch", **meta):
            _unchanged(
                store, live, "the store changed while its dump was being curated; nothing was landed (the "
                "dump stays as it was)",
            )  # fmt: skip
            landing.apply(store, ops, {p: target[p] for p in ops.needed}, old)


def _gate(merge: Merge, work: Store, where: Path, result: StrategyResult, target: dict[str, bytes]) -> None:
    """Count the dump's turn lines (the batch's included) the curated store keeps verbatim or cites
    by locator. The others stay: their session files, trimmed to them, join `target`."""
    os.mkdir(where, DIR_MODE)
    for path in merge.sessions:
        write_atomic(where / path.removeprefix("/memories/"), merge.text(path).encode("utf-8"))
    diff = diff_facts(Store(where), work)
    cited: set[str] = set()
    for data in target.values():
        cited.update(locators(data.decode("utf-8", "replace")))
    unfiled: dict[str, set[str]] = {}
    for f in diff.missing:
        if not set(f.locators) <= cited:
            unfiled.setdefault(f.path, set()).update(f.locators)
    result.verbatim = diff.old_facts - len(diff.missing)
    result.by_locator = len(diff.missing) - sum(map(len, unfiled.values()))
    for path, locs in sorted(unfiled.items()):
        if path in target:
            raise MemdirError(
                f"the curated store wrote {path}, where the dump's turns no curated file cites "
                f"({', '.join(sorted(locs))}) would stay; nothing was landed, the dump stays as it was"
            )
        s = merge.sessions[path]
        kept = DumpedSession(s.session, s.name, s.date, tuple(t for t in s.turns if t.locator in locs))
        target[path] = Merge({path: kept}).text(path).encode()
        result.kept[path] = list(dict.fromkeys(t.locator for t in kept.turns))


def _unchanged(store: Store, live: dict[str, str], what: str) -> None:
    """Refuse, inside the writing step, a store another writer changed since it was read."""
    if landing.digests(store) != live:
        raise MemdirError(f"{what}: run the ingest again")
