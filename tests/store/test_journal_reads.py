"""The journal's readers, on libgit2 as its writer is: they read what git itself reads from the
same repository (the journal stays a plain git repository), and a big file at a past step is
still streamed in bounded memory, in a real process whose peak resident size is measured."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.api.memory import Memory
from memdir.store.journal import Journal, JournalStep


def _git(root: Path, *args: str) -> bytes:
    cmd = ["git", "--git-dir", str(root / ".memdir" / "journal.git"), "-c", "core.quotepath=false", *args]
    return subprocess.run(cmd, capture_output=True, check=True).stdout


def _note(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name}\n---\n# {name}\n\n{body}\n"


def _history(root: Path) -> list[JournalStep]:
    with Memory(root) as mem:
        for args in (
            ("create", {"path": "/memories/people/alice.md", "file_text": _note("alice", "- job: baker")}),
            ("create", {"path": "/memories/people/bob.md", "file_text": _note("bob", "- home: Oslo")}),
            ("str_replace", {"path": "/memories/people/alice.md", "old_str": "baker", "new_str": "pilot"}),
            ("rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/friends/bob.md"}),
        ):
            assert not mem.call(*args).is_error
        (root / "café.md").write_text(_note("café", "- a hand edit"))  # found by the next step's check
        (root / "turn.md").write_text(_note("turn", "- a file first"))
    with Memory(root) as mem:
        assert not mem.call("delete", {"path": "/memories/people/alice.md"}).is_error
    (root / "turn.md").unlink()  # by hand: the file becomes a folder, then a file again
    (root / "turn.md").mkdir()
    (root / "turn.md" / "inner.md").write_text(_note("inner", "- then a folder"))
    with Memory(root) as mem:
        assert not mem.call("create", {"path": "/memories/y.md", "file_text": _note("y", "- y")}).is_error
    shutil.rmtree(root / "turn.md")
    (root / "turn.md").write_text(_note("turn", "- a file again"))
    with Memory(root) as mem:
        assert not mem.call("create", {"path": "/memories/z.md", "file_text": _note("z", "- z")}).is_error
    steps = Journal(root).steps(raw=True)
    assert len(steps) >= 9
    kinds = [{(st, p) for st, _, p in s.raw if p.startswith("turn.md")} for s in steps]
    assert {("D", "turn.md"), ("A", "turn.md/inner.md")} in kinds
    assert {("A", "turn.md"), ("D", "turn.md/inner.md")} in kinds
    return steps


def test_the_readers_read_what_git_reads(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    steps = _history(root)
    journal = Journal(root)
    assert journal.head() == _git(root, "rev-parse", "HEAD").decode().strip() == steps[-1].commit
    log = _git(
        root,
        "log",
        "--reverse",
        "--first-parent",
        "--format=%x1e%H",
        "--raw",
        "--no-renames",
        "--no-abbrev",
        "--root",
    )
    for step, record in zip(steps, log.decode().split("\x1e")[1:], strict=True):
        commit, *lines = [line for line in record.split("\n") if line]
        raw = sorted(
            (f[4], f[3], path) for f, path in (line.split("\t") for line in lines) for f in [f.split()]
        )
        assert step.commit == commit and sorted(step.raw) == raw, step.index
        listed = _git(root, "ls-tree", "-r", "-z", "--full-tree", step.commit).split(b"\x00")
        tree = {
            p.decode(): head.split()[2].decode() for head, _, p in (e.partition(b"\t") for e in listed if e)
        }
        files = journal.files_at(step.commit)
        assert files == tree, step.index
        assert {sha: data for sha, data in journal.blobs(sorted(set(files.values())))} == {
            sha: _git(root, "cat-file", "blob", sha) for sha in files.values()
        }
        shown = _git(root, "show", "--format=", "--no-color", "--find-renames", step.commit).decode()
        assert journal.patch(step.commit).splitlines() == shown.splitlines(), step.index
    assert "café.md" in journal.files_at(steps[-1].commit)
    assert any(c.kind == "rename" for s in steps for c in s.changes)


# The peak resident size of this process's memory (VmHWM: begun anew at exec, where
# getrusage's ru_maxrss starts from the parent's peak, pytest's, and would hide the growth).
_PEAK = """
import sys
from pathlib import Path
from memdir.store.journal import Journal
def peak_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
journal = Journal(Path(sys.argv[1]))
journal.steps()  # the repository opened and read once before the measure
before = peak_kb()
first = next(iter(journal.blob_chunks(sys.argv[2])))
print(len(first), (peak_kb() - before) // 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the peak from /proc")
def test_a_big_file_at_a_past_step_is_streamed_not_inflated_whole(tmp_path: Path) -> None:
    """libgit2 inflates an object whole, so a 40 MB file's first page must not come through it:
    the reading process grows by a chunk, not by the file (a real process's peak RSS)."""
    root = tmp_path / "mem"
    root.mkdir()
    line = "a line of the big file, long enough to make forty megabytes soon\n"
    (root / "big.md").write_text(_note("big", line * (40_000_000 // len(line))))
    with Memory(root) as mem:  # the baseline packs it, as a first write into an old folder does
        assert not mem.call(
            "create", {"path": "/memories/small.md", "file_text": _note("small", "- x")}
        ).is_error
    journal = Journal(root)
    sha = journal.files_at(journal.steps()[0].commit)["big.md"]
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(root), sha], capture_output=True, text=True, check=True
    ).stdout.split()
    first, grown_mb = int(out[0]), int(out[1])
    print("GROWN", first, grown_mb)
    assert 0 < first <= 1 << 20
    assert grown_mb < 16, f"reading the first chunk of a 40 MB file grew the process by {grown_mb} MB"
