"""`memdir study bench horizon`: one store built over a simulated year, scored at checkpoints.

The run folder (over `memdir_study/runfolder.py`, like the other benches):
- `manifest.json`: the settings (seed, months, sessions per month, model, curation,
  consolidation); a resumed run must share them (`require_same`);
- `store/`: the one store, built session by session through the product's one ingest
  (`agents/ingest_batch.py`, as `Memory.add` and `memdir ingest` take it), journaled;
- `months.jsonl`: a row per month ingested: its sessions' ingest seconds (wall and this
  process's CPU), and with
  `--consolidate monthly` what the month's consolidation did and the facts it lost;
- `checkpoints.jsonl`: a row per checkpoint month (`CHECKPOINTS`): every figure of
  `score.checkpoint` and the month's cost;
- `checkpoints/mNN/`: the store as it stood at checkpoint NN, its files and ledger (its
  journal and search index left out: the journal is the store's history, not its state, and the
  index is rebuilt by the next search). A rerun restores the last one and continues from the
  month after it; months ingested after it are ingested again, unless they end with a
  checkpoint month whose scoring was all that was left (`_built_unscored`). The restored
  store's journal starts at the checkpoint (its step 0 is the store as restored).
- `answers.jsonl`: the answering role's record lines of every checkpoint's questions;
  `consolidation.jsonl`, those of every monthly consolidation's passes.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memdir.agents.baselines import require_model
from memdir.agents.consolidate import consolidate
from memdir.agents.curation import Curation, resolve
from memdir.agents.ingest import NoOpWarning
from memdir.agents.ingest_batch import IngestSettings, ingest_batch
from memdir.agents.record import RunRecord
from memdir.analytics.integrity import diff_facts
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject, array, count
from memdir.models import Model
from memdir.store.store import Store
from memdir.tools.wiring import open_store
from memdir_study.bench.horizon import Year, build_year
from memdir_study.eval.horizon.score import checkpoint
from memdir_study.runfolder import JsonlTable, read_manifest, require_same, write_manifest

CHECKPOINTS = (1, 2, 3, 6, 9, 12)
CONSOLIDATE = ("never", "monthly")
MANIFEST = "manifest.json"
MONTHS = "months.jsonl"
ROWS = "checkpoints.jsonl"
CONSOLIDATION = "consolidation.jsonl"
_NOT_STATE = shutil.ignore_patterns("journal.git", "index", "*.lock")


@dataclass(frozen=True)
class HorizonRun:
    """The settings a run folder is made under (its manifest)."""

    seed: int
    months: int = 12
    sessions_per_month: int = 20
    model: str = "offline"
    curation: Curation = "auto"
    consolidate: str = "never"
    base_url: str | None = None
    tool_protocol: str | None = None

    def settings(self, model: Model) -> JsonObject:
        return {
            **asdict(self),
            "curates": resolve(self.curation, model),
            "checkpoints": list(self.checkpoints()),
        }

    def checkpoints(self) -> tuple[int, ...]:
        """The checkpoint months within the run, and its last month always."""
        return tuple(sorted({m for m in CHECKPOINTS if m <= self.months} | {self.months}))


Say = Callable[[str], None]
Tick = Callable[[int, int, int], None]  # (month, sessions done in it, sessions in it)


def run_year(
    run: HorizonRun, model: Model, out: Path, *, say: Say | None = None, tick: Tick | None = None
) -> list[JsonObject]:
    """Build the year's store in `out` from its last checkpoint on, score every checkpoint not
    yet scored, and return the folder's checkpoint rows."""
    if run.consolidate not in CONSOLIDATE:
        raise MemdirError(f"--consolidate is one of {', '.join(CONSOLIDATE)}, not {run.consolidate!r}")
    if run.consolidate == "monthly":
        why = "--consolidate monthly reorganizes the store with a model, which the offline baselines cannot"
        require_model("reorganize", model, f"{why}; name one with --model, or use --consolidate never")
    year = build_year(run.seed, run.months, run.sessions_per_month)
    settings = run.settings(model)
    out.mkdir(parents=True, exist_ok=True)
    require_same(out, read_manifest(out / MANIFEST), settings)
    write_manifest(out / MANIFEST, settings)
    rows, months = JsonlTable(out / ROWS), JsonlTable(out / MONTHS)
    rows.repair()
    months.repair()
    last = max((count(r["month"]) for r in rows.rows()), default=0)
    where = out / "store"
    built = _built_unscored(run, months.rows(), last, where)
    if built:
        if say:
            say(f"month {built} was built and not yet scored: scoring it from {where}")
    else:
        if where.exists():
            shutil.rmtree(where)
        if last:
            shutil.copytree(_snapshot(out, last), where)
            if say:
                say(f"resuming after month {last} from {_snapshot(out, last)}")
        for row in months.rows():
            if count(row["month"]) > last:
                months.withdraw({"month": row["month"]})
    store = open_store(where, create=True, init=True)
    # One event loop for the whole run: a model's client belongs to the loop it was made in, and
    # a loop per session left each old client to be closed on the next, dead loop's sockets.
    with asyncio.Runner() as loop:
        for month in range(last + 1, run.months + 1):
            if month > built:
                row = ingest_month(run, model, store, year, month, tick, loop, out / CONSOLIDATION)
                months.append([row])
            if month in run.checkpoints():
                first = next((r for r in rows.rows() if r["month"] == 1), None)
                kept = None if first is None else [count(i) for i in array(first["month1_kept_ids"])]
                found = checkpoint(store, year, month, model, out / "answers.jsonl", kept, loop)
                rows.append([{**found, **_cost(months.rows(), month)}])
                snap = _snapshot(out, month)
                if snap.exists():
                    shutil.rmtree(snap)
                shutil.copytree(where, snap, ignore=_NOT_STATE)
                if say:
                    say(f"month {month}: checkpoint scored, store kept in {snap}")
    return rows.rows()


def _built_unscored(run: HorizonRun, months: list[JsonObject], last: int, where: Path) -> int:
    """The checkpoint month whose sessions the store at `where` holds, all of them, though its
    checkpoint was never scored (a run stopped while scoring: with a model, the longer part); 0
    when there is none. Months are logged once built, in order, and a checkpoint month's
    scoring comes before any later session, so the store then holds exactly the logged months."""
    logged = sorted(m for m in (count(r["month"]) for r in months) if m > last)
    if not logged or not where.is_dir():
        return 0
    whole = logged == list(range(last + 1, logged[-1] + 1))
    return logged[-1] if whole and logged[-1] in run.checkpoints() else 0


def _snapshot(out: Path, month: int) -> Path:
    return out / "checkpoints" / f"m{month:02d}"


def ingest_month(
    run: HorizonRun,
    model: Model,
    store: Store,
    year: Year,
    month: int,
    tick: Tick | None,
    loop: asyncio.Runner,
    record: Path | None = None,
) -> JsonObject:
    """The month's sessions into the store, one batch each; then, monthly, a consolidation
    (its calls to `record`)."""
    sessions = year.month_sessions(month)
    seconds: list[float] = []
    cpu: list[float] = []  # this process's CPU seconds: what the wall clock is on a quiet machine
    settings = IngestSettings(curation=run.curation)
    for i, s in enumerate(sessions):
        if tick:
            tick(month, i, len(sessions))
        began, began_cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoOpWarning)  # a chit-chat session may file nothing
            loop.run(
                ingest_batch(model, store, list(s.turns), derived=False, kind="horizon", settings=settings)
            )
        seconds.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    if tick:
        tick(month, len(sessions), len(sessions))
    row: JsonObject = {
        "month": month,
        "sessions": len(sessions),
        "ingest_seconds": [round(x, 3) for x in seconds],
        "ingest_seconds_per_session": round(statistics.mean(seconds), 4) if seconds else None,
        "ingest_cpu_seconds_per_session": round(statistics.mean(cpu), 4) if cpu else None,
    }
    if run.consolidate == "monthly":
        row["consolidation"] = consolidate_month(model, store, loop, record)
    return row


def consolidate_month(
    model: Model, store: Store, loop: asyncio.Runner, record: Path | None = None
) -> JsonObject:
    """The product's gated consolidation, and the facts it lost by the fact-level diff of the
    store before and after (the gate's own check, measured again from outside); the passes'
    calls go to `record` (what a pass that changed nothing tried)."""
    with tempfile.TemporaryDirectory(prefix="horizon-before-") as tmp:
        before_dir = Path(tmp) / "store"
        shutil.copytree(store.root, before_dir, ignore=_NOT_STATE)
        log = None if record is None else RunRecord(record, command="bench horizon")
        report = loop.run(consolidate(model, store, record=log))
        lost = diff_facts(Store(before_dir), store)
    found = report.as_json()
    return {
        "verdict": found["verdict"],
        "failed": found["failed"],
        "summary": found["summary"],
        "seconds": found["seconds"],
        "facts_lost": len(lost.missing),
        "facts_before": lost.old_facts,
        "facts_after": lost.new_facts,
    }


def _cost(months: list[dict[str, Any]], month: int) -> JsonObject:
    """The checkpoint month's ingest cost, and what consolidation lost up to it."""
    mine = next(r for r in months if r["month"] == month)
    lost = [r["consolidation"]["facts_lost"] for r in months if r["month"] <= month and "consolidation" in r]
    return {
        "ingest_seconds_per_session": mine["ingest_seconds_per_session"],
        "ingest_cpu_seconds_per_session": mine.get("ingest_cpu_seconds_per_session"),
        "consolidations": len(lost),
        "facts_lost_by_consolidation": sum(lost) if lost else None,
    }
