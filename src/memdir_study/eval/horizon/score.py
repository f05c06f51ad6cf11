"""What one checkpoint of the year measures on the store as it stands (docs/horizon.md).

Every figure reuses the definition the rest of the study holds, so a year's curve and a single
conversation's figure mean the same thing:
- **retention**: the share of the facts stated in month 1 (the life's and the real sessions'
  reference facts) the store still keeps, by `bench writes`' kept rule (`eval/writes.score`);
  and `retention_of_month1_kept`, the share of those month 1 itself kept that are still kept:
  the first bounds the second by what the curator ever wrote (a fact said in a long turn kept
  only verbatim falls under the rule's content F1), the second is what the year took away;
- **current-state / previous-state accuracy**: each key of the life asked "what is X's A now?"
  and "what was it before it last changed?", answered from the store by the product's answering
  role (the offline lexical searcher with the offline model); an answer is right when the first
  value of the key it names is the true one (`first_said`);
- **stale-first rate** (`eval/stale_first.py`) and **update accuracy** (`eval/updates.py`) over
  the keys changed by then;
- the **shape and taxonomy panel** (`analytics/stats.py`: dirs, files, depth, fanout, B1-B4),
  **core memory** tokens against the context budget (`store/spec.context`), and the **folder
  indexes'** size (every `MEMORY.md`);
- **search bytes read** per question (the harness meter of each answer's record line).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from memdir.agents.read_search import ask
from memdir.agents.record import RunRecord
from memdir.analytics.facts import FactLine
from memdir.analytics.stats import KEYS, store_stats
from memdir.jsontypes import JsonObject
from memdir.models import Model
from memdir.store import spec
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.store import Store
from memdir_study.bench.horizon import Year
from memdir_study.bench.locomo import Observation
from memdir_study.bench.types import Fact
from memdir_study.eval import stale_first, updates, writes

QUESTIONS = {
    "current": "What is {name}'s {attribute} now?",
    "previous": "What was {name}'s {attribute} before it last changed?",
}


def checkpoint(
    store: Store,
    year: Year,
    month: int,
    model: Model,
    record: Path,
    month1_kept: Sequence[int] | None,
    loop: asyncio.Runner,
) -> JsonObject:
    """Every figure of the store after `month` (the sessions through it ingested); `month1_kept`:
    the month-1 facts the month-1 checkpoint found kept (None at month 1 itself)."""
    sessions = year.through(month)
    through = sessions[-1].number
    lines = writes.store_fact_lines(store)
    first = {s.number for s in year.month_sessions(1)}
    month1 = [o for o in year.observations if o.session in first]
    kept = kept_facts(lines, year, month1)
    base = kept if month1_kept is None else month1_kept
    facts = [f for f in year.facts if updates.session_of(f.locator) <= through]
    answered = answers(store, facts, model, record, loop)
    upd = updates.score_updates(lines, year.facts, through, year.dates())
    stats = store_stats(store).as_json()
    core = spec.context(store)
    indexes = [e for e in store.walk() if not e.is_dir and e.path.name == MEMORY_INDEX]
    return {
        "month": month,
        "sessions": len(sessions),
        "turns": sum(len(s.turns) for s in sessions),
        "retention": _share([i in kept for i in range(len(month1))]),
        "retention_of_month1_kept": _share([i in kept for i in base]),
        "month1_facts": len(month1),
        "month1_kept": len(kept),
        "month1_kept_ids": list(kept),
        **answered,
        "stale_first": stale(store, lines, year.facts, through),
        "updates": upd.as_json(),
        "update_accuracy": upd.rate(upd.correct),
        "hallucinated": upd.hallucinated,
        "shape": {k: stats.get(k) for k in KEYS},
        "core_tokens": core.tokens,
        "core_budget": core.budget,
        "core_within_budget": not core.over_budget,
        "index_files": len(indexes),
        "index_bytes": sum(e.size for e in indexes),
        "store_bytes": sum(e.size for e in store.walk() if not e.is_dir),
        "fact_lines": len(lines),
    }


def kept_facts(lines: Sequence[FactLine], year: Year, facts: Sequence[Observation]) -> list[int]:
    """The indexes of `facts` the store keeps, each by `bench writes`' kept rule (`writes.score`
    over the lines citing one of its evidence turns: the rule reads no other line)."""
    turns, speakers = year.turns(1), year.speakers()
    found = []
    for i, o in enumerate(facts):
        near = [ln for ln in lines if set(ln.locators) & set(o.evidence)]
        if near and writes.score(near, turns, [o], speakers).kept["all"]:
            found.append(i)
    return found


def first_said(answer: str, said: Sequence[str]) -> str | None:
    """The value among `said` that `answer` names first (case folded), or None."""
    text = answer.casefold()
    found = [(text.find(v.casefold()), v) for v in said if v.casefold() in text]
    return min(found)[1] if found else None


def answers(
    store: Store, facts: Sequence[Fact], model: Model, record: Path, loop: asyncio.Runner
) -> JsonObject:
    """Current- and previous-state accuracy over the keys `facts` hold, and the bytes each answer
    read; the answers' record lines go to `record`."""
    keys: dict[tuple[str, str], list[Fact]] = {}
    for f in facts:
        keys.setdefault((f.subject, f.attribute), []).append(f)
    right: dict[str, list[bool]] = {"current": [], "previous": []}
    read: list[int] = []
    seconds: list[float] = []
    wrong: list[str] = []
    log = RunRecord(record, command="bench horizon")
    for (subject, attribute), held in keys.items():
        held.sort(key=lambda f: f.since)
        said = [f.value for f in held]
        golds = {"current": said[-1], **({"previous": said[-2]} if len(said) > 1 else {})}
        for kind, gold in golds.items():
            question = QUESTIONS[kind].format(name=subject, attribute=attribute)
            began = time.perf_counter()
            before = len(log.entries)
            out = loop.run(ask(model, store, question, record=log))
            seconds.append(time.perf_counter() - began)
            read.append(sum(int(e.get("harness", {}).get("bytes_read", 0)) for e in log.entries[before:]))
            answer = out.answer or ""
            ok = first_said(answer, said) == gold
            right[kind].append(ok)
            if not ok and len(wrong) < 5:
                wrong.append(f"{kind}: {question} gold {gold!r}, answered {answer[:120]!r}")
    return {
        "current_state": _share(right["current"]),
        "previous_state": _share(right["previous"]),
        "questions": {k: len(v) for k, v in right.items()},
        "search_bytes_per_question": round(statistics.mean(read)) if read else None,
        "search_seconds_per_question": round(statistics.mean(seconds), 4) if seconds else None,
        "wrong_answers": wrong,
    }


def stale(store: Store, lines: Sequence[FactLine], facts: Sequence[Fact], through: int) -> JsonObject:
    """The stale-first rate over the keys changed by session `through`, each searched under the
    store's own key for it (`updates.store_keys`) and its current-state question."""
    changed = updates.changed_keys(facts, through)
    if not changed:
        return {"keys": 0, "stale": 0, "stale_first_rate": None}
    keys, queries, current = [], {}, {}
    for k in changed:
        own = updates.store_keys(lines, k)
        key = own[0] if own else (k.subject, k.attribute)
        keys.append(key)
        queries[key] = QUESTIONS["current"].format(name=k.subject, attribute=k.attribute)
        current[key] = k.current
    found = stale_first.stale_first(store, keys, queries=queries, current=current).as_dict()
    return {k: found[k] for k in ("keys", "stale", "live", "missed", "not_current", "stale_first_rate")}


def _share(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
