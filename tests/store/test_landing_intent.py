"""The pieces that make a landing whole under SIGKILL (issue 33, defect 1), in the quick loop:
one kill in the middle of a merge's landing, the sweep of a killed process's scratch copies, and
a damaged intent record; and the readers that finish a stopped landing before they read (issue
46, item 1): `check`, `history` and `search` processes, a Harness and a Memory held open across
the kill, a bare reader, a reader that cannot write, and the roll-forward's order. The kill at
every write point of every landing is `test_crash_landing.py`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from tests.conftest import REPO, fm
from tests.landing_kills import MERGE, cited, kill_once, plain, prepare, run

from memdir.agents.consolidate import consolidate
from memdir.analytics.integrity import check
from memdir.api import Memory
from memdir.models import get_model
from memdir.store.journal import Journal
from memdir.store.landing_intent import INTENT, Intent, pending, write
from memdir.store.scratch import SCRATCH
from memdir.store.store import Store
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
    with warnings.catch_warnings(record=True) as seen:  # said once, when the store is opened
        warnings.simplefilter("always")
        h = Harness(open_store(root), "manage", role="next")
        res = h.call("create", {"path": "/memories/b.md", "file_text": fm("b", "b", "- b [S1T2]\n")})
    assert not res.is_error and (root / "b.md").is_file()
    said = [str(w.message) for w in seen if "intent" in str(w.message)]
    assert len(said) == 1 and "damaged" in said[0] and "not rolled forward" in said[0]
    assert not (root / ".memdir" / INTENT).exists()
    assert (root / ".memdir" / (INTENT + ".damaged")).read_bytes() == b"not a record"


# -- issue 46, item 1: readers, before any write, finish a landing a kill stopped -------------
def _killed_adopt(tmp: Path, notes: int = 4) -> tuple[Path, dict[str, bytes], set[str]]:
    """An adopt --rename killed in the middle of its landing: (its root, the state it lands,
    the facts it keeps), with the files on disk holding every one of them already."""
    root = tmp / "template"
    before, after = prepare("adopt-rename", root, tmp, notes)
    points = int((tmp / "points").read_text().split()[0])
    proc = run("adopt-rename", root, (points + 1) // 2, tmp)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    kept = cited(before) & cited(after)
    assert len(kept) == notes and kept <= cited(plain(root))  # new files in place before old go
    assert plain(root) != after  # stopped part way
    return root, after, kept


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    code = "from memdir.cli.main import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)


def test_check_history_and_search_processes_after_a_kill_each_find_every_fact(tmp_path: Path) -> None:
    root, after, _kept = _killed_adopt(tmp_path)
    checked = _cli("check", str(root), "--json")  # a bare store: the files, not the journal
    assert json.loads(checked.stdout)["counts"]["files"] == len(after), checked.stdout + checked.stderr
    assert plain(root) == after
    listed = _cli("history", str(root), "--json")  # journaled: the landing is listed as itself
    assert listed.returncode == 0, listed.stderr
    assert [op["kind"] for op in json.loads(listed.stdout)][-1] == "adopt"
    assert "recovered" not in listed.stdout and not (root / ".memdir" / INTENT).exists()
    found = _cli("search", str(root), "walker2 ridge2", "--top-k", "2")
    assert found.returncode == 0 and "[S2T1]" in found.stdout, found.stdout + found.stderr


def test_a_reader_opened_before_the_kill_sees_every_fact_at_its_next_read(tmp_path: Path) -> None:
    root = tmp_path / "template"
    _before, after = prepare("adopt-rename", root, tmp_path, 4)
    points = int((tmp_path / "points").read_text().split()[0])
    reader = Harness(open_store(root), "search", role="reader")  # a server's, say: open all along
    proc = run("adopt-rename", root, (points + 1) // 2, tmp_path)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    shown = reader.call("view", {"path": "/memories/notes"})
    assert not shown.is_error and "note-001.md" in shown.text and "Note 001.md" not in shown.text
    assert plain(root) == after
    tools = [s.tool for s in Journal(root).steps()]
    assert tools[-1] == "adopt" and "recovered" not in tools


def test_a_memory_opened_before_the_kill_finds_every_fact_at_its_next_search(tmp_path: Path) -> None:
    root = tmp_path / "template"
    _before, after = prepare("adopt-rename", root, tmp_path, 4)
    points = int((tmp_path / "points").read_text().split()[0])
    with Memory(root, create=False) as memory:  # an agent's, open all along
        proc = run("adopt-rename", root, (points + 1) // 2, tmp_path)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
        hits = memory.search("walker3 ridge3", k=1, mode="bm25")
        assert hits and hits[0].path == "/memories/notes/note-003.md"
        assert any("[S3T1]" in line for _, line in hits[0].snippet)
        assert plain(root) == after and memory.history()[-1].tool == "adopt"


def test_a_bare_reader_finishes_the_files_and_leaves_the_journal_record_to_the_next_store(
    tmp_path: Path,
) -> None:
    root, after, _kept = _killed_adopt(tmp_path)
    steps = len(Journal(root).steps())
    report = check(Store(root))  # no journal follows a bare store (the UI's pages read through one)
    assert report.counts["files"] == len(after) and plain(root) == after
    left = pending(root / ".memdir")
    assert left is not None and left.landed and len(Journal(root).steps()) == steps
    edited = root / "notes" / "note-001.md"  # the person edits a landed file before any write
    edited.write_text(edited.read_text() + "- 2023-05-02: walker1 rested [S1T3]\n")
    Harness(open_store(root), "search").call("view", {"path": "/memories"})
    assert "[S1T3]" in edited.read_text()  # the landed record rewrote nothing
    last = Journal(root).steps()[-1]
    assert last.tool == "adopt" and len(Journal(root).steps()) == steps + 1
    assert not (root / ".memdir" / INTENT).exists()


def test_a_reader_that_cannot_write_the_store_reads_it_with_a_warning(tmp_path: Path) -> None:
    root, after, kept = _killed_adopt(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(ro)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"no read-only bind mount here: {mounted.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True, capture_output=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            h = Harness(open_store(ro), "search", role="reader")
            shown = h.call("view", {"path": "/memories/notes"})
        assert not shown.is_error, shown.text
        said = [str(w.message) for w in seen if "could not be finished" in str(w.message)]
        assert said and "run any memdir command that can write the store" in said[0]
        assert kept <= cited(plain(ro))  # every fact is there to read all the same
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)
    assert Store(root).finish_landing() and plain(root) == after  # its owner's next open finishes it


def test_a_roll_forward_moves_a_file_keeping_its_mode_and_clears_a_path_before_placing_there(
    tmp_path: Path,
) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    a, y = fm("a", "a note", "- a fact [S1T1]\n"), fm("y", "y", "- y fact [S1T2]\n")
    with store.step("seed"):
        store.create("/memories/a.md", a)
        store.create("/memories/x.md", y)  # a file where the landing puts a folder
    os.chmod(root / "a.md", 0o640)
    target: dict[str, bytes | None] = {
        "/memories/a.md": None,
        "/memories/b.md": a.encode(),
        "/memories/x.md": None,
        "/memories/x.md/y.md": y.encode(),
    }
    rows = (
        ("rename", "/memories/a.md", "/memories/b.md"),
        ("rename", "/memories/x.md", "/memories/x.md/y.md"),
    )
    write(root / ".memdir", Intent("consolidate", {}, target, rows))  # as a kill before any file left it
    nxt = Harness(open_store(root), "manage", role="next")
    assert not nxt.call("view", {"path": "/memories"}).is_error
    assert (root / "b.md").stat().st_mode & 0o777 == 0o640 and not (root / "a.md").exists()
    assert (root / "x.md" / "y.md").read_text() == y
    assert Journal(root).steps()[-1].tool == "consolidate" and not (root / ".memdir" / INTENT).exists()


def test_a_consolidate_started_after_a_kill_works_on_the_landed_store(tmp_path: Path) -> None:
    root = tmp_path / "template"
    before, _after = prepare("revert", root, tmp_path, 0)  # the merge landed; its revert to kill
    points = int((tmp_path / "points").read_text().split()[0])
    store = open_store(root)  # opened before the kill, as a long-running process holds it
    proc = run("revert", root, (points + 1) // 2, tmp_path)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    report = asyncio.run(consolidate(get_model("scripted", script=list(MERGE)), store, passes=1))
    assert report.landed, report.verdict()  # its copy was the reverted store, whole
    assert plain(root) == before and [s.tool for s in Journal(root).steps()][-2:] == ["revert", "consolidate"]
