"""Split curation: one constrained extraction call per chunk, validated, then filed by rule.

*What to write* (`extract.py`: one model call, no tools, its reply held to a JSON schema) is
kept apart from *where to file it* (`filer.py`: the offline curator's filing), with
`validate.py` between them, so nothing a small model gets wrong reaches the store. The rules
and the line forms are docs/curation.md.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Literal

from memdir.agents.output import RoleExtra, RoleOutput
from memdir.agents.record import RecordIds, RunRecord
from memdir.agents.split.extract import Extraction, extract
from memdir.agents.split.filer import Filed, file_chunk
from memdir.agents.split.validate import Checked, Fact, check
from memdir.models import Model
from memdir.stream import Chunk
from memdir.tools.profiles import Harness


async def curate_chunk(
    model: Model, harness: Harness, record: RunRecord | None, ids: RecordIds, chunk: Chunk
) -> RoleOutput:
    """Extract the chunk's facts with one model call, validate them, file what holds (and the
    turns verbatim) as one journaled step. A reply that does not parse files the turns alone,
    and says so in the record and the summary."""
    start = time.perf_counter()
    ex = await extract(model, chunk)
    checked = check(chunk, ex.facts)
    if ex.malformed:
        checked.dropped["malformed"] += ex.malformed
    filed = await asyncio.to_thread(file_chunk, harness, chunk, checked.kept, curation="split")
    counts = _counts(ex, checked, filed, harness, time.perf_counter() - start)
    if record is not None:
        fields = {**ids, "model": model.name, **counts}
        record.write(
            "split_curation",
            role="management",
            **fields,
            reply=ex.reply[:4000],
            error=ex.error,
            kept=[_shown(f) for f in checked.kept],
        )
    summary = (
        f"split curation: {len(ex.facts)} fact(s) proposed, {len(checked.kept)} kept "
        f"({filed.keyed} keyed, {filed.distilled} distilled, {filed.superseded} superseded, "
        f"{filed.withheld} keyed withheld), "
        f"{sum(checked.dropped.values())} dropped; {filed.verbatim} turn(s) kept verbatim"
    )
    if ex.error:
        summary += f"; the reply did not parse: {ex.error}"
    return RoleOutput("management", model.name, summary, extra=counts)


def _counts(ex: Extraction, checked: Checked, filed: Filed, harness: Harness, seconds: float) -> RoleExtra:
    return {
        "curation": "split",
        "writes": harness.meter.writes,
        **checked.counts(len(ex.facts) + ex.malformed),
        "malformed": ex.malformed,
        "keyed_written": filed.keyed,
        "keyed_withheld": filed.withheld,
        "keyed_by_rule": filed.ruled,
        "distilled_written": filed.distilled,
        "superseded": filed.superseded,
        "verbatim_written": filed.verbatim,
        "assistant_facts_dropped": filed.assistant,
        "model_calls": ex.calls,
        "tokens_in": ex.tokens_in,
        "tokens_out": ex.tokens_out,
        "tokens_cached": ex.tokens_cached,
        "model_seconds": round(ex.seconds, 3),
        "seconds": round(seconds, 3),
        "tool_calls": filed.tool_calls,
    }


_Summed = Literal[
    "facts_proposed", "facts_kept", "keyed_written", "distilled_written", "tokens_in", "tokens_out"
]


def split_totals(outputs: list[RoleOutput]) -> str | None:
    """One line over a run's split-curated chunks (None when there were none): what the model
    proposed, what was kept and written, why the rest was dropped, and what it cost."""
    split = [o.extra for o in outputs if o.extra.get("curation") == "split"]
    if not split:
        return None
    dropped: Counter[str] = Counter()
    for e in split:
        dropped.update(e["facts_dropped"])
    seconds = sorted(float(e["seconds"]) for e in split)
    keys: tuple[_Summed, ...] = (
        "facts_proposed",
        "facts_kept",
        "keyed_written",
        "distilled_written",
        "tokens_in",
        "tokens_out",
    )
    total = {k: sum(int(e[k]) for e in split) for k in keys}
    withheld = sum(int(e.get("keyed_withheld", 0)) for e in split)
    why = ", ".join(f"{n} {reason}" for reason, n in dropped.most_common()) or "none"
    return (
        f"split curation: {total['facts_proposed']} fact(s) proposed, {total['facts_kept']} kept "
        f"({total['keyed_written']} keyed, {total['distilled_written']} distilled lines written, "
        f"{withheld} key(s) withheld); "
        f"dropped: {why}; {total['tokens_in']:,} tokens in, {total['tokens_out']:,} out; "
        f"median {seconds[len(seconds) // 2]:.1f} s per chunk"
    )


def _shown(f: Fact) -> str:
    return f"{f.subject} | {f.kind} {f.attribute}: {f.value} [{', '.join(f.locators)}]"


__all__ = ["curate_chunk", "split_totals"]
