"""The generated benchmark's `bench writes` build, a session at a time: update accuracy after each
session (`updates.py`), saved as a row as the session ends, so a stopped run resumes.

Why a session at a time: update accuracy is a figure of the store *between* sessions (is the key
that changed in session 4 served right after session 4, and still after session 9?), so each
session's store is scored as it stands, before the next session's turns reach it. The store is
the one `writes_run.build_and_score` builds with one `ingest` over the turns; `SessionRows` only
watches its chunks end (`chunk_done`), scoring at each session's last chunk.

Its rows are `updates.jsonl` in the run folder, one per (conversation, session), each with the
session's cost (chunks, seconds, usage: the conversation's row is their sum, whichever run built
them), its update counts, and where the store stood: the journal step it ended at and a digest of
its files. A rerun resumes a conversation whose row was never written (`resume`): the store is
put back at the newest saved session's step (`agents.revert.revert`: the steps a stopped session
left are undone as one new step) and, when its files then match that session's digest, ingest
goes on from the next session; otherwise it is built again from nothing. A resumed ingest numbers
its chunks from 1 again (in the run record and the journal's labels).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from pathlib import Path
from typing import TypedDict

from memdir.agents.landing import digests
from memdir.agents.output import RoleOutput
from memdir.agents.revert import revert
from memdir.jsontypes import JsonObject, JsonValue, array, count, number, obj, record_json, text
from memdir.models import Model
from memdir.models.usage import Usage, UsageRecord, spent
from memdir.store.journal import Journal
from memdir.store.store import Store
from memdir.stream import Turn, chunk_stream
from memdir.tools.wiring import open_store, release_store
from memdir_study.bench.types import Sample
from memdir_study.eval import updates
from memdir_study.eval.stale_first import stale_first
from memdir_study.eval.writes import store_fact_lines
from memdir_study.runfolder import JsonlTable

UPDATES = "updates.jsonl"
FIRST_COUNTS = ("keys", "stale", "live", "missed", "not_current")  # stale_first's counts, which add up


def store_digest(store: Store) -> str:
    """One digest of the store's plain files (their memory paths and bytes)."""
    text = json.dumps(sorted(digests(store).items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def newest_step(root: Path) -> int:
    """The index of the journal's newest step (0: the baseline alone)."""
    steps = Journal(root).steps()
    return steps[-1].index if steps else 0


class SessionRow(TypedDict):
    """A session's row of `sessions.jsonl`: the store scored after the session's last chunk,
    the chunks' cost, and the journal step and digest a resume puts the store back to."""

    conversation: str
    session: int
    date: str | None
    chunks: int
    chunks_unchanged: int
    seconds: float
    chunk_seconds: list[float]
    usage: UsageRecord
    updates: JsonObject  # UpdateScore.as_json
    step: int
    digest: str


def session_row(row: JsonObject) -> SessionRow:
    """A stored row read back, each field narrowed to what `chunk_done` writes."""
    return {
        "conversation": text(row.get("conversation")),
        "session": count(row.get("session")),
        "date": date if isinstance(date := row.get("date"), str) else None,
        "chunks": count(row.get("chunks")),
        "chunks_unchanged": count(row.get("chunks_unchanged")),
        "seconds": number(row.get("seconds")),
        "chunk_seconds": [number(s) for s in array(row.get("chunk_seconds"))],
        "usage": Usage.from_dict(obj(row.get("usage"))).as_dict(),
        "updates": dict(obj(row.get("updates"))),
        "step": count(row.get("step")),
        "digest": text(row.get("digest")),
    }


class SessionRows:
    """One conversation's session rows: what is saved, what is left to ingest, the totals."""

    def __init__(self, table: JsonlTable, sample: Sample, model: Model) -> None:
        self.table, self.sample, self.model = table, sample, model
        self.dates = {t.locator: t.date for t in sample.turns}
        mine = (session_row(r) for r in table.rows() if r.get("conversation") == sample.id)
        self.rows = sorted(mine, key=lambda r: r["session"])
        self._sessions: list[int | None] = []  # each chunk still to ingest: its session if it ends one
        self._seen = 0  # chunks ingested by this run
        self._outputs: list[RoleOutput] = []  # this session's chunks
        self._stamps: list[float] = []
        self._mark = (time.perf_counter(), model.usage)  # where this session's cost starts

    def resume(self, where: Path, say: Callable[[str], None] | None = None) -> list[Turn]:
        """The turns still to ingest into the store at `where`: after the newest saved session
        when the store can be put back where that session left it, else all of them (the store
        and the saved rows removed)."""
        if self.rows and where.exists():
            last = self.rows[-1]
            store = open_store(where)
            try:
                if newest_step(where) > last["step"]:
                    revert(store, last["step"] + 1, force=True)
                same = store_digest(store) == last["digest"]
            finally:
                release_store(store)
            if same:
                if say:
                    say(f"generated {self.sample.id}: resuming after session {last['session']}")
                return self._start([t for t in self.sample.turns if t.session > last["session"]])
            if say:
                say(f"generated {self.sample.id}: {where} is not as session {last['session']} left it")
        if where.exists():
            if say:
                say(f"generated {self.sample.id}: rebuilding {where}, left unfinished by an earlier run")
            shutil.rmtree(where)
        self.table.withdraw({"conversation": self.sample.id})
        self.rows = []
        return self._start(list(self.sample.turns))

    def _start(self, turns: list[Turn]) -> list[Turn]:
        chunks = chunk_stream(turns)
        self._seen = 0
        self._sessions = [
            c.session if i + 1 == len(chunks) or chunks[i + 1].session != c.session else None
            for i, c in enumerate(chunks)
        ]
        self._mark = (time.perf_counter(), self.model.usage)
        return turns

    def chunk_done(self, store: Store, out: RoleOutput) -> None:
        """After each chunk of the ingest: at a session's last, score the store and save the row."""
        self._outputs.append(out)
        self._stamps.append(time.perf_counter())
        session = self._sessions[self._seen]
        self._seen += 1
        if session is None:
            return
        began, before = self._mark
        now = self.model.usage
        scored = updates.score_updates(store_fact_lines(store), self.sample.facts, session, self.dates)
        row: SessionRow = {
            "conversation": self.sample.id,
            "session": session,
            "date": self.sample.session_dates.get(session),
            "chunks": len(self._outputs),
            "chunks_unchanged": sum(int(o.extra.get("writes", 0)) == 0 for o in self._outputs),
            "seconds": round(self._stamps[-1] - began, 3),
            "chunk_seconds": [
                round(b - a, 3) for a, b in zip([began, *self._stamps], self._stamps, strict=False)
            ],
            "usage": spent(before, now).as_dict(),
            "updates": scored.as_json(),
            "step": newest_step(store.root),
            "digest": store_digest(store),
        }
        self.table.append([row])
        self.rows.append(row)
        self._outputs, self._stamps = [], []
        self._mark = (time.perf_counter(), self.model.usage)

    def cost(self) -> JsonObject:
        """The build's cost: the sum over every saved session (this run's and earlier runs')."""
        return {
            "chunks": sum(r["chunks"] for r in self.rows),
            "chunks_unchanged": sum(r["chunks_unchanged"] for r in self.rows),
            "seconds": round(sum(r["seconds"] for r in self.rows), 3),
            "chunk_seconds": [s for r in self.rows for s in r["chunk_seconds"]],
            "usage": record_json(
                reduce(
                    lambda a, b: a + b, (Usage.from_dict(r["usage"]) for r in self.rows), Usage()
                ).as_dict()
            ),
        }

    def figures(self, store: Store) -> JsonObject:
        """The conversation row's update figures: pooled over sessions, the last session's, each
        session's counts, and the built store's stale-first rate."""
        last = max(t.session for t in self.sample.turns)
        keys = updates.changed_keys(self.sample.facts, last)
        return {**update_figures(self.rows), "stale_first": first_hits(store, self.sample, keys)}


def first_hits(store: Store, sample: Sample, keys: Sequence[updates.ChangedKey]) -> JsonObject | None:
    """The stale-first rate of the built store over the changed keys (`stale_first.stale_first`,
    BM25): each key searched by the benchmark's question about its current value, and read under
    the store's own key for it (`updates.store_keys`: `home` for the true `home city`, a key
    with a live line first; with none, the true key, which is then missed). None: no key
    changed."""
    if not keys:
        return None
    lines = store_fact_lines(store)
    asked = {q.evidence: q.question for q in sample.questions if q.category == "current"}
    pairs, queries, current = [], {}, {}
    for key in keys:
        pair = next(iter(updates.store_keys(lines, key)), (key.subject, key.attribute))
        pairs.append(pair)
        queries[pair] = asked.get((key.locator,), f"{key.subject} {key.attribute}")
        current[pair] = key.current
    found = stale_first(store, pairs, queries=queries, current=current)
    stale = [f"{r.where}: {r.value} for {r.query!r}" for r in found.rows if r.status == "past"]
    counts = {"keys": found.keys, "stale": found.stale, "live": found.live, "missed": found.missed}
    return {
        **counts,
        "not_current": found.not_current,
        "stale_first_rate": found.rate,
        "mode": found.mode,
        "examples": stale[:5],
    }


def update_figures(rows: Sequence[SessionRow]) -> JsonObject:
    """Update accuracy over session rows: pooled (ratios of sums), after the last, per session."""
    scores = [updates.UpdateScore.from_json(r["updates"]) for r in rows]
    pooled = reduce(lambda a, b: a + b, scores, updates.UpdateScore())
    return {
        "updates": pooled.as_json(),
        "updates_final": scores[-1].as_json() if scores else None,
        "updates_by_session": [
            {"session": r["session"], **{k: v for k, v in r["updates"].items() if k != "examples"}}
            for r in rows
        ],
    }


def pooled(rows: Sequence[Mapping[str, JsonValue]]) -> JsonObject:
    """The update figures of some conversation rows together (`writes_report.figures`): counts
    summed over conversations, pooled over sessions and after each one's last; one conversation's
    rows also keep its per-session counts. Nothing for rows without them (LoCoMo, REALTALK)."""
    scored = [r for r in rows if "updates" in r]
    if not scored:
        return {}

    def total(field: str) -> JsonObject:
        found = [updates.UpdateScore.from_json(obj(r.get(field))) for r in scored if r.get(field)]
        return reduce(lambda a, b: a + b, found, updates.UpdateScore()).as_json()

    out: JsonObject = {"updates": total("updates"), "updates_final": total("updates_final")}
    if len(rows) == 1:
        out["updates_by_session"] = rows[0].get("updates_by_session")
    firsts = [obj(r.get("stale_first")) for r in scored if r.get("stale_first")]
    if firsts:
        counts = {k: sum(count(f.get(k)) for f in firsts) for k in FIRST_COUNTS}
        out["stale_first"] = {**counts, "stale_first_rate": round(counts["stale"] / counts["keys"], 4)}
    return out


def summary_line(figures: Mapping[str, JsonValue]) -> str | None:
    """One line for the table's reader: update accuracy pooled over sessions and after the last."""
    if "updates" not in figures:
        return None
    u, last = obj(figures.get("updates")), obj(figures.get("updates_final"))
    first = obj(figures.get("stale_first"))
    line = (
        f"update accuracy {u['update_accuracy']} over {u['scored']} key-sessions (correct {u['correct']}, "
        f"hallucinated {u['hallucinated']}, omitted {u['omitted']}); after the last session "
        f"{last['update_accuracy']} of {last['scored']} changed keys"
    )
    if first:
        line += f"; stale-first rate {first['stale_first_rate']} ({first['stale']} of {first['keys']} keys)"
    return line
