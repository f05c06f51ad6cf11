"""Health along the stream, with and without live feedback (`--feedback health`), side by side.

For each sample (the generated benchmark at 10 / 40 / 160 sessions, and a LoCoMo slice), the
management role builds one store per feedback setting in a temp dir, chunk by chunk as the study
feeds it. Every `--every` chunks, and at the end, the store's health is taken: `health`'s
findings by kind (docs/health.md), `check`'s problems, the fanout and B1-B4 of `memdir stats`
(docs/metrics.md). Then every question of the sample is asked with the search role over the
finished store: mean F1 (LoCoMo's token F1, `eval/lexical.py`, what `--judge offline` grades by)
and bytes read per question (the harness meter). The feedback turns sent and what they mended
come from the run record.

    PYTHONPATH=src python benchmarks/feedback_health.py [--model offline] [--sizes 10,40,160]
        [--locomo conv-26:1-3] [--every 10] [--questions N] [--settings none,health]
        [--out runs/feedback_health]

`--model local` runs the same with the local model (slow: minutes per chunk on 2 cores; use a
small size and `--questions`). Prints one table per sample and writes `feedback_health.json`,
rewritten after each sample and setting, so a long run that is stopped keeps what it finished.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, table, write_json

from memdir.agents.feedback import feedback_totals
from memdir.agents.record import RunRecord, effort
from memdir.agents.run import manage_chunk, search
from memdir.analytics.health import health
from memdir.analytics.integrity import check
from memdir.analytics.stats import store_stats
from memdir.bench import load_sample
from memdir.bench.types import Sample, parse_sessions
from memdir.eval.lexical import offline_correctness
from memdir.models import Model, get_model
from memdir.tools.wiring import open_store

PANEL = ("fanout_max", "b1_mean", "b2", "b3", "b4")


def snapshot(store: Any, chunk: int) -> dict[str, Any]:
    h = health(store)
    st = store_stats(store).values
    report = check(store)
    return {
        "chunk": chunk,
        "files": st.get("files"),
        "findings": len(h.findings),
        "by_kind": {k: v for k, v in h.counts.items() if k not in ("files", "units", "units_measured") and v},
        "check_problems": len(report.problems),
        "check_warnings": len(report.warnings),
        **{k: st.get(k) for k in PANEL},
    }


async def build_and_ask(
    model: Model, sample: Sample, feedback: str, every: int, questions: int | None, tmp: Path
) -> dict[str, Any]:
    store = open_store(tmp / f"{sample.id}-{feedback}", create=True, init=True)
    record = RunRecord(None)
    chunks = sample.chunks()
    along: list[dict[str, Any]] = []
    start = time.perf_counter()
    for i, chunk in enumerate(chunks, start=1):
        await manage_chunk(model, store, chunk, record=record, feedback=feedback)  # type: ignore[arg-type]
        if i % every == 0 or i == len(chunks):
            along.append(snapshot(store, i))
            print(
                f"  {sample.id} {feedback}: chunk {i}/{len(chunks)}, {time.perf_counter() - start:.0f} s",
                flush=True,
            )
    build_s = time.perf_counter() - start
    build = effort(record.entries)
    asked = sample.questions[:questions] if questions else sample.questions
    f1: list[float] = []
    read: list[int] = []
    for q in asked:
        qrec = RunRecord(None)
        out = await search(model, store, q.question, question_id=q.id, record=qrec)
        f1.append(offline_correctness(q, out.answer or ""))
        read.append(effort(qrec.entries).bytes_read)
    totals = feedback_totals(record.entries)
    return {
        "sample": sample.id,
        "feedback": feedback,
        "chunks": len(chunks),
        "along": along,
        "end": along[-1],
        "build_seconds": round(build_s, 2),
        "build_tool_calls": build.tool_calls,
        "build_tokens": build.usage.prompt + build.usage.output,
        "feedback_turns": totals.turns,
        "introduced": totals.introduced,
        "mended": totals.mended,
        "undone": totals.undone,  # feedback rounds undone for losing a source (agents/mend_gate.py)
        "questions": len(asked),
        "f1": round(sum(f1) / len(f1), 4) if f1 else None,
        "kb_read_per_q": round(sum(read) / len(read) / 1024, 2) if read else None,
    }


def samples(sizes: str, locomo: str | None) -> list[Sample]:
    out = [load_sample("generated", f"gen-s42-n{n}") for n in (int(x) for x in sizes.split(",") if x)]
    if locomo:
        sid, _, span = locomo.partition(":")
        s = load_sample("locomo", sid)
        out.append(s.sliced(*parse_sessions(span)) if span else s)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="offline")
    ap.add_argument("--sizes", default="10,40,160")
    ap.add_argument("--locomo", default="conv-26:1-3", help="ID[:A-B], or '' for none")
    ap.add_argument("--every", type=int, default=10, help="chunks between health snapshots")
    ap.add_argument("--questions", type=int, default=None)
    ap.add_argument("--settings", default="none,health", help="feedback settings, in order")
    ap.add_argument("--out", default=str(REPO / "runs" / "feedback_health"))
    args = ap.parse_args()
    model = get_model(args.model)
    rows: list[dict[str, Any]] = []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memdir-feedback-") as tmp:
        for sample in samples(args.sizes, args.locomo or None):
            for feedback in args.settings.split(","):
                row = asyncio.run(
                    build_and_ask(model, sample, feedback, args.every, args.questions, Path(tmp))
                )
                rows.append(row)
                write_json(out / "feedback_health.json", {"model": args.model, "rows": rows})
                print(f"{sample.id} feedback={feedback}: {row['build_seconds']} s build", flush=True)
    cols = ["sample", "feedback", "chunks", "findings", "check errors", "fanout max", "B1", "B2", "B3",
            "B4", "turns sent", "mended", "F1", "KB read/q", "build calls", "build s"]  # fmt: skip
    t = table(f"Health at the end of the stream ({args.model})", cols)
    for r in rows:
        e = r["end"]
        t.add_row(
            r["sample"], r["feedback"], str(r["chunks"]), str(e["findings"]), str(e["check_problems"]),
            *(_fmt(e[k]) for k in PANEL), str(r["feedback_turns"]), str(r["mended"]), _fmt(r["f1"]),
            _fmt(r["kb_read_per_q"]), str(r["build_tool_calls"]), _fmt(r["build_seconds"]),
        )  # fmt: skip
    from rich.console import Console

    console = Console(width=200)
    console.print(t)
    for r in rows:
        kinds = "; ".join(
            f"chunk {a['chunk']}: {a['findings']} {json.dumps(a['by_kind'])}" for a in r["along"]
        )
        console.print(f"{r['sample']} {r['feedback']}: {kinds}")
    print(f"wrote {out / 'feedback_health.json'}")


def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    main()
