"""The writer lock: processes editing one file through the tools never lose an update."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest
from tests.conftest import fm

from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

N_PROC, N_EDITS = 4, 40


def _worker(root: str, wid: int) -> None:
    h = Harness(open_store(root), "manage", role=f"w{wid}")
    for i in range(N_EDITS):
        # read-modify-write under the harness: insert at the end needs the current line count,
        # which another process may change in between; the lock must keep each call whole.
        text = h.call("view", {"path": "/memories/log.md"}).text
        n = int(text.split("(")[1].split(" ")[0])
        res = h.call("insert", {"path": "/memories/log.md", "insert_line": n, "insert_text": f"w{wid}-{i}"})
        if res.is_error:  # line count moved under us: retry with the fresh count
            text = h.call("view", {"path": "/memories/log.md"}).text
            n = int(text.split("(")[1].split(" ")[0])
            assert not h.call(
                "insert", {"path": "/memories/log.md", "insert_line": n, "insert_text": f"w{wid}-{i}"}
            ).is_error


@pytest.mark.slow
def test_no_lost_updates(root: Path) -> None:
    Harness(open_store(root), "manage").call("create", {"path": "/memories/log.md", "file_text": fm("log")})
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(str(root), w)) for w in range(N_PROC)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    lines = (root / "log.md").read_text().split("\n")[4:-1]
    assert len(lines) == N_PROC * N_EDITS
    assert sorted(lines) == sorted(f"w{w}-{i}" for w in range(N_PROC) for i in range(N_EDITS))


def _replacer(root: str, wid: int) -> None:
    h = Harness(open_store(root), "manage")
    for _ in range(N_EDITS):
        while True:
            text = (Path(root) / "counter.md").read_text()
            value = int(text.rsplit("count=", 1)[1].split("\n")[0])
            res = h.call(
                "str_replace",
                {
                    "path": "/memories/counter.md",
                    "old_str": f"count={value}\n",
                    "new_str": f"count={value + 1}\n",
                },
            )
            if not res.is_error:
                break


@pytest.mark.slow
def test_compare_and_swap_increments_are_exact(root: Path) -> None:
    Harness(open_store(root), "manage").call(
        "create", {"path": "/memories/counter.md", "file_text": fm("counter", body="count=0\n")}
    )
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_replacer, args=(str(root), w)) for w in range(N_PROC)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    assert (root / "counter.md").read_text().endswith(f"count={N_PROC * N_EDITS}\n")
