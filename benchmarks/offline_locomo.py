"""Offline baselines on LoCoMo conv-50: the deterministic curator builds a store, the lexical
searcher answers the 158 non-adversarial questions. Prints build and search effort (tool calls,
bytes returned, bytes read, seconds), token F1 against the gold, and how often the cited line's
locator is among the gold evidence; writes a table and a PNG under runs/offline_locomo/.

    PYTHONPATH=src python benchmarks/offline_locomo.py [--conv conv-50]

The small LoCoMo reader here only serves this script; the benchmark loaders own the real one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import string
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memdir.agents import RunRecord, manage_chunk, read_record, search
from memdir.models import get_model
from memdir.store import spec
from memdir.store.store import Store
from memdir.stream import Turn, chunk_stream

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def data_dir() -> Path:
    return Path(os.environ.get("MEMDIR_DATA", ROOT.parent / "shared" / "data"))


def load(conv_id: str) -> tuple[list[Turn], list[dict[str, object]]]:
    convs = json.loads((data_dir() / "locomo" / "locomo10.json").read_text())
    conv = next(c for c in convs if c["sample_id"] == conv_id)
    c = conv["conversation"]
    turns: list[Turn] = []
    n = 1
    while f"session_{n}" in c:
        raw = c.get(f"session_{n}_date_time", "")
        try:
            date = datetime.strptime(raw, "%I:%M %p on %d %B, %Y").date().isoformat()
        except ValueError:
            date = ""
        for t in c[f"session_{n}"]:
            s, k = t["dia_id"][1:].split(":")
            text = t["text"] + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")
            turns.append(Turn(f"S{int(s)}T{int(k)}", t["speaker"], text, date))
        n += 1
    qa = [q for q in conv["qa"] if q["category"] in CATEGORIES]
    return turns, qa


def normalize(text: str) -> list[str]:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    return [w for w in text.split() if w not in ("a", "an", "the", "and")]


def f1(pred: str, gold: str) -> float:
    p, g = normalize(pred), normalize(gold)
    common = sum((Counter(p) & Counter(g)).values())
    if not p or not g or common == 0:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conv", default="conv-50")
    args = ap.parse_args()
    turns, qa = load(args.conv)
    chunks = chunk_stream(turns)
    work = Path(tempfile.mkdtemp(prefix="memdir-offline-"))
    store = Store(work / "mem", create=True)
    spec.init(store)
    out_dir = ROOT / "runs" / "offline_locomo"
    out_dir.mkdir(parents=True, exist_ok=True)
    record = RunRecord(out_dir / "calls.jsonl")
    (out_dir / "calls.jsonl").write_text("")
    model = get_model("offline")

    async def run() -> list[Row]:
        t0 = time.perf_counter()
        for ch in chunks:
            await manage_chunk(model, store, ch, variant="agent-curated", record=record)
        build_s = time.perf_counter() - t0
        rows: list[Row] = []
        for i, q in enumerate(qa):
            t1 = time.perf_counter()
            res = await search(model, store, str(q["question"]), question_id=str(i), record=record)
            evidence = [str(e) for e in q["evidence"]]  # type: ignore[attr-defined]
            cat = CATEGORIES[int(q["category"])]  # type: ignore[call-overload]
            rows.append(Row(i, cat, str(q["question"]), str(q["answer"]), res.answer or "", res.citations,
                            evidence, time.perf_counter() - t1))  # fmt: skip
        print(f"build: {len(turns)} turns, {len(chunks)} chunks, {build_s:.2f} s")
        return rows

    rows = asyncio.run(run())
    steps = read_record(out_dir / "calls.jsonl")
    build = [e["harness"] for e in steps if e["role"] == "management"]
    srch = [e["harness"] for e in steps if e["role"] == "search"]
    files = {e.path.text: e.disk.read_text() for e in store.files()}
    for r in rows:
        r.f1 = f1(r.answer, r.gold)
        r.evidence_hit = evidence_hit(files, r.citations, r.evidence)
    by_cat: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_cat[r.category].append(r)
    lines = [
        f"# Offline baselines on LoCoMo {args.conv} (curator + lexical searcher; model: offline, baseline)",
        "",
        "| category | n | token F1 | cited line in gold evidence |",
        "|---|---|---|---|",
    ]
    for cat, rs in [*sorted(by_cat.items()), ("all", rows)]:
        hit = mean([r.evidence_hit for r in rs])
        lines.append(f"| {cat} | {len(rs)} | {mean([r.f1 for r in rs]):.3f} | {hit:.3f} |")
    b_calls = sum(b["calls"] for b in build)
    kb_turns = sum(len(t.text) for t in turns) / 1024
    kb_store = sum(len(t.encode()) for t in files.values()) / 1024
    lines += [
        "",
        f"store: {len(files)} files, {kb_store:.1f} KB from {kb_turns:.1f} KB of turns",
        f"build effort: {b_calls} tool calls over {len(chunks)} chunks "
        f"({b_calls / len(chunks):.1f} per chunk), "
        f"{sum(b['bytes_read'] for b in build) / 1e6:.2f} MB read",
        f"search effort per question: {mean([b['calls'] for b in srch]):.1f} tool calls, "
        f"{mean([b['bytes_read'] for b in srch]) / 1024:.1f} KB read, "
        f"{mean([b['bytes_returned'] for b in srch]) / 1024:.1f} KB returned, "
        f"{mean([r.seconds for r in rows]) * 1000:.1f} ms",
    ]
    table = "\n".join(lines)
    print(table)
    (out_dir / "summary.md").write_text(table + "\n")
    (out_dir / "answers.jsonl").write_text("\n".join(json.dumps(r.__dict__) for r in rows) + "\n")
    plot(by_cat, out_dir / "f1_by_category.png", args.conv)


@dataclass
class Row:
    i: int
    category: str
    question: str
    gold: str
    answer: str
    citations: list[str]
    evidence: list[str]
    seconds: float
    f1: float = 0.0
    evidence_hit: float = 0.0


def evidence_hit(files: dict[str, str], citations: list[str], evidence: list[str]) -> float:
    gold = set()
    for ev in evidence:
        m = re.match(r"D(\d+):(\d+)", ev)
        if m:
            gold.add(f"S{int(m[1])}T{int(m[2])}")
    for c in citations:
        path, _, line = c.rpartition(":")
        if path in files and line.isdigit():
            text = files[path].split("\n")[int(line) - 1] if int(line) <= files[path].count("\n") + 1 else ""
            if gold & set(re.findall(r"S\d+T\d+", text)):
                return 1.0
    return 0.0


def mean(xs: list[float] | list[int]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def plot(by_cat: dict[str, list[Row]], path: Path, conv: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cats = sorted(by_cat)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = range(len(cats))
    ax.bar([i - 0.2 for i in x], [mean([r.f1 for r in by_cat[c]]) for c in cats], 0.4, label="token F1")
    ax.bar(
        [i + 0.2 for i in x],
        [mean([r.evidence_hit for r in by_cat[c]]) for c in cats],
        0.4,
        label="cited line in gold evidence",
    )
    ax.set_xticks(list(x), cats)
    ax.set_ylim(0, 1)
    ax.set_title(f"Offline baseline on LoCoMo {conv}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
