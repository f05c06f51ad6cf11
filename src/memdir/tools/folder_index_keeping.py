"""Folder index keeping: the harness's switch, and a write landed with the folder indexes it needs.

`keep_indexes` (`Harness(..., keep_indexes=True)`, the tool setting `KEEP_INDEXES`) is memdir's
extension of the base tool contract (docs/study.md, Tool contracts): with it, a file tool's
write also brings the folder indexes to what `store/folder_index_plan.py` plans, so the store
stays a valid memory after every call (a `MEMORY.md` in each memory directory, entries moved and
removed with their files). The product turns it on (the Python API, `memdir tool`, the MCP
server, the Anthropic drop-in). It is off for a harness built without it, as the roles' are: the
base contract's tools write only what they are told, and a store laid out as the paper lays it
out has no such indexes.

A write and its indexes land as one journaled step, whole or not at all: the plan is made and
checked first, then written as the store's intent record (`store/landing_intent.py`, which the
next writer rolls forward if a kill stops the call part way), then the indexes are written and
the tool's own write last, so a refusal of that write (a guard, a race) is the usual failure,
and undoing it puts back only the small index files; the step then records nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from memdir.errors import MemdirError
from memdir.store import folder_index_plan, landing_intent
from memdir.store.folder_index_plan import Event, Upkeep
from memdir.store.paths import STATE_DIR
from memdir.store.retarget import retarget
from memdir.store.store import Store
from memdir.tools.base import ToolContext

KEEP_INDEXES: Final = "keep_indexes"  # the tool setting (`ToolContext.config`) that turns it on

Row = landing_intent.ChangeRow
Target = Callable[[], tuple[dict[str, bytes | None], list[Row]]]


def keeping(ctx: ToolContext) -> bool:
    return bool(ctx.config.get(KEEP_INDEXES))


def land(
    ctx: ToolContext, event: Event, write: Callable[[], object], target: Target, *, many: bool = False
) -> list[str]:
    """Carry out `write` (the tool's own write, every check of it already made), with the
    indexes `event` needs when folder index keeping is on; returns what was done to the indexes.
    `target` gives the write's own effect (each path's bytes after it, None: gone; the changes
    its step records), asked for only when indexes change or the write itself changes `many`
    files (a rename and the references to it, `references.py`). The indexes a rename rewrites
    have their `see` references to it retargeted too (`store/retarget.py`)."""
    if not keeping(ctx):
        write()
        return []
    store = ctx.store
    upkeep = folder_index_plan.plan(store, event)
    if event.kind == "rename" and event.new is not None:
        moves = {event.path.text: event.new.text}
        upkeep.writes = {p: t if t is None else retarget(t, moves) for p, t in upkeep.writes.items()}
    if upkeep.empty and not many:
        write()
        return []
    step = store.current_step()
    if step is None:
        raise RuntimeError("folder index keeping runs inside the tool's step")
    old = {p: store.read_bytes(p) if store.exists(p) else None for p in upkeep.writes}
    own, rows = target()
    if event.kind == "rename":  # an index holding a reference to what moved: the upkeep's row says it
        rows = [r for r in rows if not (r[0] == "modify" and r[1] in upkeep.writes)]
    state = store.root / STATE_DIR
    intent = landing_intent.Intent(
        step.tool, dict(step.meta), _final(upkeep, own, rows), (*_rows(upkeep, old), *rows)
    )
    landing_intent.write(state, intent)
    recorded = len(step.changes)
    try:
        _write_plan(store, upkeep, old)
        write()
    except BaseException:
        _undo(ctx, old, state, step.tool, dict(step.meta))
        del step.changes[recorded:]
        raise
    for folder in upkeep.prune:  # emptied by the write: nothing in them, hidden entries included
        mp = store.parse(folder)
        with contextlib.suppress(MemdirError, OSError):
            if store.is_dir(mp) and next(iter(store.safe.scan(mp.parts, mp.text, hidden=True)), None) is None:
                store.delete(mp)
    step.landed_intent = True  # `Store.step` removes the record once the journal has the step
    return upkeep.said


def settle(ctx: ToolContext) -> list[str]:
    """With folder index keeping on, bring the indexes in line with what the call's step already
    changed outside the file tools (the shell's writes, carried back whole before anything can
    plan them), in the same step; returns what was done. Only the index writes are covered by
    the intent record here: the shell's own changes had landed before."""
    if not keeping(ctx):
        return []
    store = ctx.store
    step = store.current_step()
    if step is None:
        raise RuntimeError("folder index keeping runs inside the tool's step")
    upkeep = folder_index_plan.after(store, [(c.kind, c.path, c.new_path) for c in step.changes])
    if upkeep.empty:
        return []
    old = {p: store.read_bytes(p) if store.exists(p) else None for p in upkeep.writes}
    state = store.root / STATE_DIR
    final = {p: None if t is None else t.encode("utf-8") for p, t in upkeep.writes.items()}
    landing_intent.write(
        state, landing_intent.Intent(step.tool, dict(step.meta), final, tuple(_rows(upkeep, old)))
    )
    recorded = len(step.changes)
    try:
        _write_plan(store, upkeep, old)
    except BaseException:
        _undo(ctx, old, state, step.tool, dict(step.meta))
        del step.changes[recorded:]
        raise
    step.landed_intent = True
    return upkeep.said


def _write_plan(store: Store, upkeep: Upkeep, old: dict[str, bytes | None]) -> None:
    """The planned index writes, each as what it is to the store (a new index is a create, so
    the step records it as one; a stale one is a write; a needless one a delete)."""
    for p, text in upkeep.writes.items():
        if text is None:
            store.delete(p)
        elif old[p] is None:
            store.create(p, text)
        else:
            store.write(p, text)


def _final(upkeep: Upkeep, own: dict[str, bytes | None], rows: list[Row]) -> dict[str, bytes | None]:
    """Every path the call touches with its bytes once it has landed: an index rewritten inside
    a folder that then moves lands at its new path."""
    moved = {a: b for kind, a, b in rows if kind == "rename" and b is not None}
    final = dict(own)
    for p, text in upkeep.writes.items():
        final[moved.get(p, p)] = None if text is None else text.encode("utf-8")
    return final


def _rows(upkeep: Upkeep, old: dict[str, bytes | None]) -> list[Row]:
    return [
        ("delete" if text is None else "modify" if old[p] is not None else "create", p, None)
        for p, text in upkeep.writes.items()
    ]


def _undo(
    ctx: ToolContext, old: dict[str, bytes | None], state: Path, tool: str, meta: dict[str, Any]
) -> None:
    """Put every index back as it was (and remove the folders a new index made), unrecorded:
    the record is first rewritten to that old state, so a kill during the undo still ends whole."""
    back = landing_intent.Intent(tool, dict(meta), dict(old))
    with contextlib.suppress(MemdirError, OSError):
        landing_intent.write(state, back)
    with contextlib.suppress(MemdirError, OSError):
        landing_intent.roll_forward(ctx.store.safe, back)
    with contextlib.suppress(OSError):
        landing_intent.clear(state)


def reply(said: list[str]) -> str:
    """The sentence a tool's reply ends with when it kept indexes."""
    return f" Indexes: {'; '.join(said)}." if said else ""
