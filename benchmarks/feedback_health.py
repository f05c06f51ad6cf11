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
        [--out runs/feedback_health] [--keep DIR]

`--model local` runs the same with the local model (slow: about a minute a chunk on 2 cores, so
160 sessions take hours a setting). Prints one table per sample and writes
`feedback_health.json`, rewritten after each sample and setting. With `--keep DIR` the stores
live in DIR, and after every chunk the store, its run record and the snapshots so far are
checkpointed there as one folder, swapped in by rename: the same command run again resumes
each build after its last whole chunk (the chunk a stop cut short is done again from the
checkpoint's store), and a finished setting is reported from DIR without being run again. The
build seconds add up the runs' own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, table, write_json

from memdir.agents.feedback import feedback_totals
from memdir.agents.record import RunRecord, effort, read_record
from memdir.agents.run import answer_question, manage_chunk
from memdir.analytics.health import health
from memdir.analytics.integrity import check
from memdir.analytics.stats import store_stats
from memdir.models import Model, get_model
from memdir.tools.wiring import open_store
from memdir_study.bench import load_sample
from memdir_study.bench.types import Sample, parse_sessions
from memdir_study.eval.lexical import offline_correctness

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


class Checkpoint:
    """One build's resumable state in `--keep DIR`: `<name>/` is the live store, and
    `<name>.ckpt/` holds a copy of it as the last whole chunk left it (`store/`), the run record
    (`record.jsonl`) and `progress.json` (chunks done, snapshots, build seconds), so the three
    always agree. A new checkpoint is written beside the old and swapped in by two renames."""

    def __init__(self, keep: Path, name: str) -> None:
        self.live, self.dir = keep / name, keep / f"{name}.ckpt"
        self.old, self.tmp = keep / f"{name}.ckpt.old", keep / f"{name}.ckpt.tmp"
        self.result = keep / f"{name}.result.json"
        self.record = keep / f"{name}.record.jsonl"

    def restore(self) -> dict[str, Any]:
        """Put the live store and record back as the last checkpoint left them; its progress."""
        if not self.dir.is_dir() and self.old.is_dir():  # stopped between the two renames
            self.old.rename(self.dir)
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.live, ignore_errors=True)
        self.record.unlink(missing_ok=True)
        if not self.dir.is_dir():
            return {"chunks_done": 0, "along": [], "build_seconds": 0.0}
        shutil.copytree(self.dir / "store", self.live, symlinks=True)
        shutil.copyfile(self.dir / "record.jsonl", self.record)
        progress: dict[str, Any] = json.loads((self.dir / "progress.json").read_text(encoding="utf-8"))
        return progress

    def save(self, progress: dict[str, Any]) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.copytree(self.live, self.tmp / "store", symlinks=True)
        shutil.copyfile(self.record, self.tmp / "record.jsonl")
        write_json(self.tmp / "progress.json", progress)
        shutil.rmtree(self.old, ignore_errors=True)
        if self.dir.is_dir():
            self.dir.rename(self.old)
        self.tmp.rename(self.dir)
        shutil.rmtree(self.old, ignore_errors=True)


async def build_and_ask(
    model: Model, sample: Sample, feedback: str, every: int, questions: int | None, tmp: Path,
    keep: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    name = f"{sample.id}-{feedback}"
    ckpt = Checkpoint(keep, name) if keep is not None else None
    if ckpt is not None and ckpt.result.is_file():
        done: dict[str, Any] = json.loads(ckpt.result.read_text(encoding="utf-8"))
        print(f"  {name}: finished in an earlier run, read from {ckpt.result}", flush=True)
        return done
    progress = ckpt.restore() if ckpt is not None else {"chunks_done": 0, "along": [], "build_seconds": 0.0}
    if progress["chunks_done"]:
        print(f"  {name}: resuming after chunk {progress['chunks_done']}", flush=True)
    store = open_store(ckpt.live if ckpt is not None else tmp / name, create=True, init=True)
    record = RunRecord(ckpt.record if ckpt is not None else None)
    if ckpt is not None and ckpt.record.is_file():
        record.entries = read_record(ckpt.record)
    chunks = sample.chunks()
    along: list[dict[str, Any]] = progress["along"]
    start = time.perf_counter() - progress["build_seconds"]
    for i, chunk in enumerate(chunks, start=1):
        if i <= progress["chunks_done"]:
            continue
        await manage_chunk(model, store, chunk, variant="agent-curated", record=record, feedback=feedback)  # type: ignore[arg-type]
        if i % every == 0 or i == len(chunks):
            along.append(snapshot(store, i))
            print(
                f"  {sample.id} {feedback}: chunk {i}/{len(chunks)}, {time.perf_counter() - start:.0f} s",
                flush=True,
            )
        if ckpt is not None:
            ckpt.save({"chunks_done": i, "along": along, "build_seconds": time.perf_counter() - start})
    build_s = time.perf_counter() - start
    build = effort(record.entries)
    asked = sample.questions[:questions] if questions else sample.questions
    f1: list[float] = []
    read: list[int] = []
    for q in asked:
        qrec = RunRecord(None)
        out = await answer_question(model, store, q.question, question_id=q.id, record=qrec)
        f1.append(offline_correctness(q, out.answer or ""))
        read.append(effort(qrec.entries).bytes_read)
    totals = feedback_totals(record.entries)
    row = {
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
    if ckpt is not None:
        write_json(ckpt.result, row)
    return row


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
    ap.add_argument("--keep", default=None, help="keep the stores here and resume from them")
    args = ap.parse_args()
    keep = Path(args.keep) if args.keep else None
    model = get_model(args.model)
    rows: list[dict[str, Any]] = []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memdir-feedback-") as tmp:
        for sample in samples(args.sizes, args.locomo or None):
            for feedback in args.settings.split(","):
                row = asyncio.run(
                    build_and_ask(model, sample, feedback, args.every, args.questions, Path(tmp), keep)
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
