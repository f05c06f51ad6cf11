"""Never lose a fact under SIGKILL (issue 50, item 3): 20 syncs of two stores through a real
bare remote, each killed in a real process at a random write point of its own (the seed is
fixed; `tests/sync_kills.py` counts the points), both stores learning new facts, sometimes in
the same file, in between. After each kill the store opens whole with every fact it held, the
remote's branch is a whole git history holding every fact it held, and the next sync
completes; at the end both stores and the remote hold the same files and every fact."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memdir.conventions import Fact, fact_identity
from memdir.store.store import Store
from memdir.sync import clone, sync
from sync_helpers import bare_remote, call, create, memory_files, new_store, remote_files

REPO = Path(__file__).resolve().parents[2]
KILLS = 20
SEED = 50


def _facts(files: dict[str, bytes]) -> set[Fact]:
    out: set[Fact] = set()
    for data in files.values():
        for line in data.decode().split("\n"):
            fact = fact_identity(line)
            if fact is not None:
                out.add(fact)
    return out


def _run(root: Path, kill_at: int, points: Path) -> int:
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests" / "sync_kills.py"), str(root), str(kill_at), str(points)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode in (0, -9), proc.stderr
    return proc.returncode


def _points(root: Path, remote: str, tmp: Path) -> int:
    """The write points the next sync of `root` meets: counted on copies of the store and the
    remote, so the kill can fall on any of them."""
    for name in ("copy", "copy.git"):
        shutil.rmtree(tmp / name, ignore_errors=True)
    shutil.copytree(root, tmp / "copy", symlinks=True)
    shutil.copytree(remote, tmp / "copy.git", symlinks=True)
    sync_git = tmp / "copy" / ".memdir" / "sync.git"
    subprocess.run(
        ["git", f"--git-dir={sync_git}", "config", "remote.origin.url", str(tmp / "copy.git")], check=True
    )
    assert _run(tmp / "copy", 0, tmp / "points") == 0
    return int((tmp / "points").read_text())


def _learn(root: Path, who: str, n: int) -> Fact:
    """A new fact in one of three files, the same ones on both stores, so merges meet."""
    path = f"/memories/people/p{n % 3}.md"
    line = f"- {who} learned fact {n} [S{n + 1}T{1 if who == 'a' else 2}]"
    call(root, "str_replace", path=path, old_str="# Person\n", new_str=f"# Person\n{line}\n")
    fact = fact_identity(line)
    assert fact is not None
    return fact


@pytest.mark.slow
def test_twenty_killed_syncs_lose_nothing(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    for k in range(3):
        create(a, f"/memories/people/p{k}.md", "# Person\n", f"p{k}")
    sync(a, remote)
    b = tmp_path / "b"
    clone(remote, b)
    points = tmp_path / "points"
    rng = random.Random(SEED)
    held = {a: _facts(memory_files(a)), b: _facts(memory_files(b))}
    kills, n = 0, 0
    while kills < KILLS:
        mine, other = (a, b) if n % 2 == 0 else (b, a)
        held[mine].add(_learn(mine, "a" if mine == a else "b", n))
        held[other].add(_learn(other, "a" if other == a else "b", n + 1))
        sync(other)
        held[other] = _facts(memory_files(other))
        on_remote = _facts(remote_files(remote))
        most = _points(mine, remote, tmp_path / "counted")
        assert _run(mine, rng.randint(1, most), points) != 0
        kills += 1
        # whole: the store opens (a stopped landing rolled forward) holding every fact it held
        Store(mine)
        assert held[mine] <= _facts(memory_files(mine)), f"kill {kills}: the store lost a fact"
        fsck = subprocess.run(["git", f"--git-dir={remote}", "fsck", "--no-dangling"], capture_output=True)
        assert fsck.returncode == 0, fsck.stderr
        assert on_remote <= _facts(remote_files(remote)), f"kill {kills}: the remote lost a fact"
        report = sync(mine)  # the next sync completes
        assert report.commit is not None
        held[mine] = _facts(memory_files(mine))
        assert held[other] <= held[mine]
        n += 2
    sync(a)
    sync(b)
    sync(a)
    assert memory_files(a) == memory_files(b) == remote_files(remote)
    assert held[a] | held[b] <= _facts(memory_files(a))
