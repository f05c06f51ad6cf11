"""The pieces that make a landing whole under SIGKILL (issue 33, defect 1), in the quick loop:
one kill in the middle of a merge's landing, the sweep of a killed process's scratch copies, and
a damaged intent record. The kill at every write point is `test_crash_landing.py`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

from tests.conftest import REPO, fm
from tests.landing_kills import kill_once

from memdir.store.landing_intent import INTENT
from memdir.store.scratch import SCRATCH
from memdir.store.workcopy import scratch_copy
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def test_a_merge_killed_in_the_middle_of_its_landing_is_rolled_forward_as_its_own_step(
    tmp_path: Path,
) -> None:
    points, o = kill_once("consolidate", tmp_path)
    assert o.killed and points >= 6
    assert o.facts_lost == [] and o.state == "new" and o.half_steps == [] and not o.journal_behind
    assert o.tools[0] == "consolidate" and "recovered" not in o.tools
    assert o.stray_copies == []
    assert not (tmp_path / "template" / ".memdir" / INTENT).exists()


def test_the_next_writer_sweeps_the_scratch_copies_of_a_killed_process_and_keeps_live_ones(
    tmp_path: Path,
) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    with store.step("seed"):
        store.create("/memories/a.md", fm("a", "a note", "- a fact [S1T1]\n"))
    code = (
        "import os, signal, sys\n"
        "from memdir.store.workcopy import scratch_copy\n"
        "from memdir.tools.wiring import open_store\n"
        "with scratch_copy(open_store(sys.argv[1])):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    proc = subprocess.run([sys.executable, "-c", code, str(root)], env=env, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    scratch = root / ".memdir" / SCRATCH
    dead = sorted(p.name for p in scratch.iterdir())
    assert len(dead) == 2  # the copy's folder and its lock, left by the kill
    with scratch_copy(store) as live:
        h = Harness(open_store(root), "manage", role="next")  # a new store: its first step sweeps
        assert not h.call(
            "create", {"path": "/memories/b.md", "file_text": fm("b", "b", "- b [S1T2]\n")}
        ).is_error
        left = sorted(p.name for p in scratch.iterdir())
        assert not set(dead) & set(left)  # the killed process's copy is gone
        assert len(left) == 2 and (live.root / "a.md").is_file()  # the live one is kept
    assert list(scratch.iterdir()) == []


def test_a_damaged_intent_record_is_set_aside_with_a_warning_and_writes_go_on(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    with store.step("seed"):
        store.create("/memories/a.md", fm("a", "a note", "- a fact [S1T1]\n"))
    (root / ".memdir" / INTENT).write_bytes(b"not a record")
    h = Harness(open_store(root), "manage", role="next")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = h.call("create", {"path": "/memories/b.md", "file_text": fm("b", "b", "- b [S1T2]\n")})
    assert not res.is_error and (root / "b.md").is_file()
    said = [str(w.message) for w in seen if "intent" in str(w.message)]
    assert len(said) == 1 and "damaged" in said[0] and "not rolled forward" in said[0]
    assert not (root / ".memdir" / INTENT).exists()
    assert (root / ".memdir" / (INTENT + ".damaged")).read_bytes() == b"not a record"
