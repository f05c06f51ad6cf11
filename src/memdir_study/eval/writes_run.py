"""`memdir study bench writes`: build each conversation's store with a curator, score what it wrote.

A run folder (over `memdir_study/runfolder.py`, like the eval's):
- `manifest.json`: the settings (benchmark, model, curation, sessions, the scoring thresholds); a
  resumed run must share them (`require_same`);
- `stores/<conversation>/`: the store the curator built, journaled like a real `memdir ingest`
  (`tools.wiring.open_store`), with its call log in `.memdir/calls.jsonl`;
- `writes.jsonl`: one row per conversation, appended as each finishes, so a rerun skips the
  finished ones (a store left half built by a stopped run is built again from nothing);
- `updates.jsonl` (the generated benchmark): one row per session, its update accuracy scored as
  the session ends (`updates_run.py`), so a rerun resumes a stopped conversation at a session;
- `summary.json`: per conversation and pooled, derived from the rows alone (`writes_report`).

The figures are `eval/writes.py` (what a store says) plus the cost of saying it: the model's
usage over the ingest (every call goes through the one `Model` wrapper, so its totals are the
run's), wall seconds per chunk, and the store's bytes and `check` findings.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.agents.curation import Curation, resolve
from memdir.agents.ingest import NoOpWarning, ingest
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.analytics.integrity import check
from memdir.errors import MemdirError
from memdir.fact_quality import SUPPORTED
from memdir.jsontypes import JsonObject, JsonValue, record_json
from memdir.models import Model
from memdir.models.usage import spent
from memdir.store.store import Store
from memdir.stream import Turn, chunk_stream
from memdir.tools.wiring import open_store
from memdir_study.bench import DEFAULTS, load_sample, locomo, realtalk, truthkey
from memdir_study.bench.types import Sample, parse_sessions
from memdir_study.eval import keyscore, updates, writes
from memdir_study.eval.updates_run import UPDATES, SessionRows
from memdir_study.runfolder import JsonlTable, read_manifest, require_same, write_manifest

BENCHMARKS = ("locomo", "realtalk", "generated", "key")
ROWS = "writes.jsonl"
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class WritesRun:
    """The settings a run folder is made under (its manifest)."""

    benchmark: str
    model: str
    curation: Curation = "auto"
    sessions: str | None = None  # "A-B": only these sessions of each conversation
    base_url: str | None = None
    tool_protocol: str | None = None

    def settings(self, model: Model) -> JsonObject:
        return {
            "benchmark": self.benchmark,
            "model": self.model,
            "curation": self.curation,
            "curates": resolve(self.curation, model),
            "sessions": self.sessions,
            "base_url": self.base_url,
            "tool_protocol": self.tool_protocol,
            "scoring": {
                "verbatim_f1": writes.VERBATIM,
                "kept_f1": writes.KEPT,
                "supported": SUPPORTED,
                **({"update_match_f1": updates.MATCH} if self.benchmark == "generated" else {}),
            },
        }


def conversation_ids(benchmark: str, chosen: Sequence[str] | None) -> list[str]:
    """The benchmark's conversations (all, or `chosen` in the benchmark's order); an unknown id
    is refused with the known ones. The generated benchmark's ids name their parameters, so any
    well-formed id is one (`gen-s42` by default)."""
    if benchmark not in BENCHMARKS:
        raise MemdirError(f"bench writes scores {', '.join(BENCHMARKS)}, not {benchmark!r}")
    if benchmark == "generated":
        ids = list(dict.fromkeys(chosen or [DEFAULTS["generated"]]))
        for cid in ids:
            load_sample(benchmark, cid)  # a malformed id refused (UnknownSample) before any build
        return ids
    listers = {"locomo": locomo.sample_ids, "key": truthkey.conversation_ids}
    known = listers.get(benchmark, realtalk.sample_ids)()
    if not chosen:
        return known
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise MemdirError(f"{benchmark} has no {', '.join(unknown)}; choose from {', '.join(known)}")
    return [c for c in known if c in chosen]


def load(benchmark: str, cid: str) -> Sample:
    """One conversation of the benchmark; for the truth key, the key's turns of one source
    conversation (`truthkey.load`)."""
    return truthkey.load(cid) if benchmark == "key" else load_sample(benchmark, cid)


def reference(benchmark: str, sample: Sample, sessions: tuple[int, int] | None) -> locomo.Observations | None:
    """LoCoMo's observations for the sample, or the truth key's facts as observations (cut to
    the sessions); None where there are none."""
    if benchmark not in ("locomo", "key"):
        return None
    found = locomo.observations(sample.id) if benchmark == "locomo" else truthkey.observations(sample.id)
    return found.sliced(*sessions) if sessions else found


Tick = Callable[[str, int, int], None]  # (conversation, chunks done, chunks in all)


def run_writes(
    run: WritesRun,
    model: Model,
    conversations: Sequence[str] | None,
    out: Path,
    *,
    tick: Tick | None = None,
    say: Callable[[str], None] | None = None,
    rescore: bool = False,
) -> list[JsonObject]:
    """Build and score every conversation not yet in `out/writes.jsonl`; return all the folder's
    rows (finished earlier or now: the folder is the run's record). `rescore`: the finished
    conversations' stores are scored again under today's rules (a rule of `fact_quality`
    changed), their build cost kept, so two curators built months apart compare on one rule."""
    ids = conversation_ids(run.benchmark, conversations)
    span = parse_sessions(run.sessions) if run.sessions else None
    settings = run.settings(model)
    out.mkdir(parents=True, exist_ok=True)
    require_same(out, read_manifest(out / MANIFEST), settings)
    write_manifest(out / MANIFEST, settings)
    table = JsonlTable(out / ROWS)
    table.repair()
    done = {r["conversation"] for r in table.rows()}
    for cid in ids:
        sample = load(run.benchmark, cid)
        sample = sample.sliced(*span) if span else sample
        where = out / "stores" / cid
        if cid in done:
            if rescore:
                old = next(r for r in table.rows() if r["conversation"] == cid)
                row = old | scored_row(Store(where), sample, reference(run.benchmark, sample, span))
                table.withdraw({"conversation": cid})
                table.append([row])
            if say:
                say(f"{run.benchmark} {cid}: {'scored again' if rescore else 'already'} in {out / ROWS}")
            continue
        ref = reference(run.benchmark, sample, span)
        if run.benchmark == "generated":  # built a session at a time, resumed at one
            sessions = SessionRows(JsonlTable(out / UPDATES), sample, model)
            row = build_and_score(run, model, sample, ref, where, tick, sessions, sessions.resume(where, say))
            table.append([row])
            continue
        if where.exists():  # a build a stopped run left half done: its row was never written
            if say:
                say(f"{run.benchmark} {cid}: rebuilding {where}, left unfinished by an earlier run")
            shutil.rmtree(where)
        row = build_and_score(run, model, sample, ref, where, tick)
        table.append([row])
    return table.rows()


def build_and_score(
    run: WritesRun,
    model: Model,
    sample: Sample,
    ref: locomo.Observations | None,
    where: Path,
    tick: Tick | None = None,
    sessions: SessionRows | None = None,
    turns: list[Turn] | None = None,
) -> JsonObject:
    """One conversation: ingest its turns (or only `turns`, those a resumed build has left) into
    the store at `where`, then its row. With `sessions` (the generated benchmark), each session's
    update accuracy is scored and saved as its last chunk lands, and the build's cost is the sum
    of the saved sessions'."""
    store = open_store(where, create=True, init=True)
    record = RunRecord(store.state_dir / "calls.jsonl", command="bench writes", conversation=sample.id)
    turns = sample.turns if turns is None else turns
    n_chunks = len(sample.chunks())
    done = n_chunks - len(chunk_stream(turns))
    stamps: list[float] = []
    before = model.usage
    began = time.perf_counter()

    def on_chunk(out: RoleOutput) -> None:
        stamps.append(time.perf_counter())
        if sessions is not None:
            sessions.chunk_done(store, out)
        if tick is not None:
            tick(sample.id, done + len(stamps), n_chunks)

    if tick is not None:
        tick(sample.id, done, n_chunks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoOpWarning)  # counted in the row instead
        result = asyncio.run(
            ingest(
                model,
                store,
                turns,
                variant="agent-curated-keyed",
                record=record,
                on_chunk=on_chunk,
                curation=run.curation,
            )
        )
    seconds = time.perf_counter() - began
    used = spent(before, model.usage)
    cost: JsonObject = {
        "chunks": len(result.chunks),
        "chunks_unchanged": len(result.unchanged),
        "seconds": round(seconds, 3),
        "chunk_seconds": [round(b - a, 3) for a, b in zip([began, *stamps], stamps, strict=False)],
        "usage": record_json(used.as_dict()),
    }
    return {
        "benchmark": run.benchmark,
        "conversation": sample.id,
        "model": run.model,
        "curation": run.curation,
        "curates": resolve(run.curation, model),
        "sessions": run.sessions,
        "turns": len(sample.turns),
        **(sessions.cost() if sessions else cost),
        **scored_row(store, sample, ref),
        **(sessions.figures(store) if sessions else {}),
    }


def scored_row(store: Store, sample: Sample, ref: locomo.Observations | None) -> JsonObject:
    """The part of a row read from the built store alone: its size, `check`, and its score."""
    facts = ref.facts if ref else None
    scored = writes.score(writes.store_fact_lines(store), sample.turns, facts, sample.speakers)
    return {
        "store": store_size(store),
        "check": findings(store),
        "reference_skipped": dict(ref.skipped) if ref else {},
        "score": scored.as_json(),
        **({"key": key_score(store, sample).as_json()} if sample.benchmark == truthkey.BENCHMARK else {}),
    }


def key_score(store: Store, sample: Sample) -> keyscore.KeyScore:
    """The store against the truth key's facts of the sample's turns (`eval/keyscore.py`)."""
    turns = [t for t in truthkey.turns_of(sample.id) if t.locator in sample.locators()]
    lines = writes.store_fact_lines(store)
    return keyscore.score(lines, sample.turns, turns, sample.speakers, sample.session_dates)


def store_size(store: Store) -> dict[str, int]:
    """The store's plain files (what the agent tools see; `.memdir/` left out): count and bytes."""
    files = [e for e in store.walk() if not e.is_dir]
    return {"files": len(files), "bytes": sum(e.size for e in files)}


def findings(store: Store) -> JsonObject:
    """`memdir check` on the built store: problems and warnings, counted by rule."""
    report = check(store)
    rules = Counter(p.rule for p in report.problems)
    return {
        "problems": len(report.problems),
        "warnings": len(report.warnings),
        "rules": dict(sorted(rules.items())),
    }


def median_chunk_seconds(rows: Sequence[JsonObject]) -> float | None:
    every = [s for r in rows for s in _numbers(r.get("chunk_seconds"))]
    return round(statistics.median(every), 3) if every else None


def _numbers(value: JsonValue) -> list[float]:
    """A row's list of numbers (a chunk's seconds); none when the row has no such list."""
    return [v for v in value if isinstance(v, int | float)] if isinstance(value, list) else []
