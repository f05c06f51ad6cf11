"""The run record stays one whole JSON line per entry with several processes appending at once
(the workers of a Ray run share one `record.jsonl`)."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from memdir.agents.record import RunRecord, read_record

LINES = 40
FILL = 200_000  # far past any buffer and pipe size, so a line must go out in several writes


def _writer(path: str, worker: int) -> None:
    record = RunRecord(path, worker=worker)
    for i in range(LINES):
        record.write("call", i=i, text=chr(ord("a") + worker) * FILL)


def test_concurrent_processes_never_cut_a_line(tmp_path: Path) -> None:
    path = tmp_path / "record.jsonl"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    entries = read_record(path)  # a cut line would fail to parse here
    assert len(entries) == 4 * LINES
    for e in entries:
        assert e["text"] == chr(ord("a") + e["worker"]) * FILL
    for w in range(4):
        assert [e["i"] for e in entries if e["worker"] == w] == list(range(LINES))
