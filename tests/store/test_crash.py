"""Crash consistency (fast subset): a writer killed with SIGKILL mid-edit never leaves a torn
file and never loses an acknowledged edit, and its journal holds every acknowledged edit, in a
commit or in its step log (which the next writer commits, a step each, with its tool); an edit
written but not acknowledged is committed by the next writer as a `recovered` step.
Full run: benchmarks/reliability/crash_consistency.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO, flock_held
from tests.waits import HANG_GUARD_S
from tests.workers import (
    N_FILES,
    crash_campaign,
    journal_behind,
    logged_versions,
    parse_version,
    seed_crash_store,
    version_text,
)

from memdir.store.journal import Journal
from memdir.store.journal.catch_up import LOCK
from memdir.store.journal.log import HEADER, RECORDS
from memdir.tools.base import ToolResult
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def test_version_texts_detect_tearing() -> None:
    text = version_text(3, 41)
    assert parse_version(3, text) == 41
    assert parse_version(3, text[: len(text) // 2]) is None
    assert parse_version(2, text) is None


@pytest.mark.slow
def test_sigkill_mid_edit(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    seed_crash_store(root)
    result = crash_campaign(root, edits=60, seed=1, repo=REPO)
    assert result["kills"] >= 1
    assert result["edits_acknowledged"] >= 60
    assert result["torn_files"] == 0, result["mismatches"]
    assert result["lost_acknowledged_edits"] == 0, result["mismatches"]
    for f in range(N_FILES):
        assert parse_version(f, (root / f"f{f}.md").read_text()) is not None
    # The journal: after every kill it held every acknowledged edit (committed, or logged and
    # committed by the first read), and the files were ahead of it by at most the edit in
    # flight; each such edit was committed by the next writer as a recovered step (its first
    # step, before it wrote anything). A logged step became a commit of its own, with its tool.
    assert result["acknowledged_missing_from_journal"] == 0
    assert result["journal_ahead_beyond_in_flight"] == 0
    assert result["journal_warnings"] == 0
    assert result["logged_not_landed"] == 0
    ahead_at_end = journal_behind(root)
    steps_before = Journal(root).steps()
    assert not _edit_once(root).is_error
    steps = Journal(root).steps()
    assert journal_behind(root) == []
    # The last kill's edit in flight (recovered) first, then the new step.
    expected = ["recovered"] * bool(ahead_at_end) + ["str_replace"]
    assert [s.tool for s in steps[len(steps_before) :]] == expected
    assert sum(s.tool == "recovered" for s in steps) == result["recovered_steps"] + bool(ahead_at_end)
    assert result["recovered_steps"] + bool(ahead_at_end) <= result["kills_between_write_and_commit"]


def _edit_once(root: Path) -> ToolResult:
    k = parse_version(0, (root / "f0.md").read_text())
    assert k is not None
    old, new = (version_text(0, v).split("---\n", 2)[2] for v in (k, k + 1))
    h = Harness(open_store(root), "manage")
    return h.call("str_replace", {"path": "/memories/f0.md", "old_str": old, "new_str": new})


def _one_file_store(tmp_path: Path) -> Path:
    """A journaled store holding f0.md (version 1), written through the tools."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "manage", role="t")
    assert not h.call("create", {"path": "/memories/f0.md", "file_text": version_text(0, 1)}).is_error
    return root


def _writer(code: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    """Run `code` as a writer process of its own, on this checkout's memdir."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    return subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True)


def _killed_mid_step(root: Path, path: str, text: str) -> subprocess.CompletedProcess[bytes]:
    """A real writer process killed with SIGKILL right after its file write, inside the step:
    the exact moment between a write and its journal commit."""
    code = (
        "import os, signal, sys\n"
        "from memdir.tools.wiring import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "with store.step('str_replace', role='killed'):\n"
        "    store.write(sys.argv[2], sys.argv[3])\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    return _writer(code, str(root), path, text)


def test_a_write_killed_before_its_commit_is_recovered_by_the_next_writer(tmp_path: Path) -> None:
    root = _one_file_store(tmp_path)
    before = Journal(root).steps()
    proc = _killed_mid_step(root, "/memories/f0.md", version_text(0, 2))
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert parse_version(0, (root / "f0.md").read_text()) == 2  # written, never acknowledged
    assert Journal(root).steps() == before and journal_behind(root) == ["f0.md"]
    assert (root / ".memdir" / "journal.git" / "memdir-in-flight").read_bytes() == b"1"

    # The next writer, in a new process (here: a new store), commits it before its own step.
    again = Harness(open_store(root), "manage", role="t")
    assert not again.call("create", {"path": "/memories/f1.md", "file_text": version_text(1, 1)}).is_error
    steps = Journal(root).steps()
    assert [s.tool for s in steps[len(before) :]] == ["recovered", "create"]
    rec = steps[len(before)]
    assert "stopped between writing files and journaling them" in rec.meta["recovered"]
    assert [(c.kind, c.path) for c in rec.changes] == [("modify", "/memories/f0.md")]
    assert "f1.md" not in Journal(root).files_at(rec.commit)  # recovered before the new step wrote
    assert journal_behind(root) == []
    assert (root / ".memdir" / "journal.git" / "memdir-in-flight").read_bytes() == b"0"


def _acknowledged_then_killed(root: Path, path: str, text: str) -> subprocess.CompletedProcess[bytes]:
    """A real writer process whose call returned (its step logged: acknowledged) while no
    committer could commit it (the test holds the journal lock), then killed with SIGKILL,
    its committer process with it. Its first call (a process's first step checks the whole
    tree and commits in the call) makes `a.md` before the lock is taken."""
    code = (
        "import os, signal, sys\n"
        "from memdir.tools.profiles import Harness\n"
        "from memdir.tools.wiring import open_store\n"
        "h = Harness(open_store(sys.argv[1]), 'manage', role='killed')\n"
        "text = '---\\nname: a\\ndescription: a\\n---\\n'\n"
        "assert not h.call('create', {'path': '/memories/a.md', 'file_text': text}).is_error\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
        "res = h.call('create', {'path': sys.argv[2], 'file_text': sys.argv[3]}, chunk=7)\n"
        "print('acknowledged' if not res.is_error else res.text, flush=True)\n"
        "os.killpg(0, signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(root), path, text],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the kill takes its committer too
    )
    assert proc.stdin is not None and proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n", proc.communicate()[1].decode()
    with flock_held(root / ".memdir" / "journal.git" / LOCK):
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=HANG_GUARD_S)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_an_acknowledged_step_killed_before_its_commit_lands_as_its_own_step(tmp_path: Path) -> None:
    root = _one_file_store(tmp_path)
    proc = _acknowledged_then_killed(root, "/memories/f1.md", version_text(1, 1))
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert proc.stdout == b"acknowledged\n"
    git_dir = root / ".memdir" / "journal.git"
    assert [(f, k) for f, k in logged_versions(root)] == [(1, 1)]  # logged, not committed ...
    # ... until the next writer (or, as here, any reader) commits it, as the step it was.
    steps = Journal(root).steps()
    assert [s.tool for s in steps[-3:]] == ["create", "create", "create"]  # f0, a.md, f1: none recovered
    landed = steps[-1]
    assert landed.meta["role"] == "killed" and landed.meta["chunk"] == "7"
    assert [(c.kind, c.path) for c in landed.changes] == [("create", "/memories/f1.md")]
    assert set(Journal(root).files_at(landed.commit)) == {"f0.md", "a.md", "f1.md"}
    assert logged_versions(root) == []
    again = Harness(open_store(root), "manage", role="t")
    assert not again.call("delete", {"path": "/memories/f0.md"}).is_error
    assert [s.tool for s in Journal(root).steps()[len(steps) :]] == ["delete"]
    assert (git_dir / "memdir-in-flight").read_bytes() == b"0"
    assert journal_behind(root) == []


def test_a_record_cut_by_a_kill_mid_append_is_not_replayed(tmp_path: Path) -> None:
    """A kill in the middle of the log append: that step never returned, so it is not in the
    log; its file write is reconciled as a `recovered` step (the in-flight mark is set)."""
    root = _one_file_store(tmp_path)
    killed = _acknowledged_then_killed(root, "/memories/f1.md", version_text(1, 1))
    assert killed.returncode == -signal.SIGKILL
    git_dir = root / ".memdir" / "journal.git"
    log = git_dir / RECORDS
    os.truncate(log, log.stat().st_size - 3)  # as if the kill had come 3 bytes before the end
    (git_dir / "memdir-in-flight").write_bytes(b"1")  # as it is when a kill comes mid-append
    assert logged_versions(root) == []
    before = Journal(root).steps()

    again = Harness(open_store(root), "manage", role="t")
    assert not again.call("delete", {"path": "/memories/f0.md"}).is_error
    steps = Journal(root).steps()
    assert [s.tool for s in steps[len(before) :]] == ["recovered", "delete"]
    assert [(c.kind, c.path) for c in steps[len(before)].changes] == [("create", "/memories/f1.md")]
    assert log.stat().st_size == HEADER.size  # the cut record went with the recovery
    assert journal_behind(root) == []


def test_a_reader_waits_for_the_commits_of_a_step_that_has_returned(tmp_path: Path) -> None:
    """In the writer's process, a read of the journal right after a call sees that call's
    step: a reader first commits what is still logged, whether or not the committer process
    has got to it."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "manage", role="t")
    for k in range(20):
        assert not h.call("create", {"path": f"/memories/f{k}.md", "file_text": version_text(k, 1)}).is_error
        assert len(Journal(root).steps()) == k + 2  # the baseline, then one step per call
    assert journal_behind(root) == []


def test_a_writer_killed_before_writing_leaves_no_recovered_step(tmp_path: Path) -> None:
    """The in-flight mark is set for every step; when the kill came before any write, the
    check finds the files equal to the journal and commits nothing."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "manage")
    assert not h.call("create", {"path": "/memories/f0.md", "file_text": version_text(0, 1)}).is_error
    code = (
        "import os, signal, sys\n"
        "from memdir.tools.wiring import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "with store.step('create'):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = _writer(code, str(root))
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    n = len(Journal(root).steps())
    assert not Harness(open_store(root), "manage").call("delete", {"path": "/memories/f0.md"}).is_error
    assert [s.tool for s in Journal(root).steps()[n:]] == ["delete"]


def test_the_next_writer_sweeps_temp_files_a_killed_writer_left(tmp_path: Path) -> None:
    """A kill between writing a temp file and renaming it leaves `.memdir-tmp-*` behind; the
    next Store's first step removes those (old enough, regular files, inside the root only)."""
    import os
    import time

    from memdir.api import Memory

    root = tmp_path / "mem"
    mem = Memory(root)
    mem.call("create", {"path": "/memories/a/x.md", "file_text": "---\nname: x\ndescription: x\n---\nbody\n"})
    old = time.time() - 3600
    orphans = [root / ".memdir-tmp-dead1", root / "a" / ".memdir-tmp-dead2"]
    for p in orphans:
        p.write_bytes(b"half a write")
        os.utime(p, (old, old))
    fresh = root / "a" / ".memdir-tmp-fresh"
    fresh.write_bytes(b"just now")
    outside = tmp_path / ".memdir-tmp-outside"
    outside.write_bytes(b"not ours")
    os.utime(outside, (old, old))
    (root / "a" / ".memdir-tmp-link").symlink_to(outside)
    state = root / ".memdir" / ".memdir-tmp-state"
    state.write_bytes(b"derived")
    os.utime(state, (old, old))

    again = Memory(root)  # a new writer, as after a restart
    assert not again.call(
        "str_replace", {"path": "/memories/a/x.md", "old_str": "body", "new_str": "new body"}
    ).is_error
    assert not any(p.exists() for p in orphans)
    assert fresh.exists() and outside.exists() and state.exists()
    assert (root / "a" / ".memdir-tmp-link").is_symlink()  # links are never followed or removed
