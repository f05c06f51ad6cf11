"""Deep folders: the tools cannot make a path deeper than MAX_DEPTH folder levels, and a tree
made deeper by hand gets a bounded walk and a finding everywhere (listing, validate, check,
stats, search, journal, delete), never a hang, a RecursionError or a silent wrong answer."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import fm, snapshot

from memdir.analytics.integrity import check
from memdir.analytics.stats import store_stats
from memdir.cli.main import cli
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.store.paths import MAX_DEPTH
from memdir.store.safefs import REMOVE_WINDOW, remove_tree
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

DEEP = 1300  # past Python's recursion limit: the depth that broke search and delete


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path: Path) -> Iterator[None]:
    """Remove the chains a test made: pytest's own clean-up (shutil.rmtree) recurses per level
    and would fail on them in a later session."""
    yield
    for base in (tmp_path, tmp_path / "mem"):
        for top in ("deep", "gone"):
            if (base / top).is_dir():
                parent = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    remove_tree(parent, top)
                finally:
                    os.close(parent)


def chain(base: Path, top: str, levels: int, leaf: str | None = "leaf.md") -> None:
    """`top/d/d/.../d` with `levels` folders below `top`, and a file at the bottom, made by
    descriptor (the path is far longer than the system's path limit)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    os.mkdir(top, dir_fd=fd)
    name = top
    for _ in range(levels):
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd, name = nfd, "d"
        os.mkdir(name, dir_fd=fd)
    if leaf is not None:
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
        out = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, fm("leaf", body="zyzzyva deep down\n").encode())
        os.close(out)
    os.close(fd)


def folders(n: int) -> str:
    return "/memories" + "".join(f"/f{i}" for i in range(n))


def test_creates_deeper_than_the_limit_are_refused(manage: Harness, root: Path) -> None:
    before = snapshot(root)
    for path in (folders(MAX_DEPTH + 1), "/memories" + "/d" * DEEP):
        res = manage.call("create", {"path": path + "/x.md", "file_text": fm("x")})
        levels = path.count("/") - 1
        assert res.is_error, res.text
        assert f"{levels} folder levels deep; memory holds at most {MAX_DEPTH} levels" in res.text
    assert snapshot(root) == before
    res = manage.call("create", {"path": folders(MAX_DEPTH) + "/x.md", "file_text": fm("x")})
    assert not res.is_error, res.text


def test_rename_cannot_push_a_folder_past_the_limit(manage: Harness, root: Path) -> None:
    assert not manage.call("create", {"path": folders(30) + "/x.md", "file_text": fm("x")}).is_error
    before = snapshot(root)
    res = manage.call("rename", {"old_path": "/memories/f0", "new_path": "/memories/g/h/i/f0"})
    assert res.is_error and f"would put folders 33 levels deep; memory holds at most {MAX_DEPTH}" in res.text
    assert "nothing was moved" in res.text
    assert snapshot(root) == before
    res = manage.call("rename", {"old_path": "/memories/f0", "new_path": "/memories/g/h/f0"})
    assert not res.is_error, res.text
    assert (root / "g" / "h").joinpath(*[f"f{i}" for i in range(30)], "x.md").is_file()


@pytest.mark.slow
def test_a_tree_made_deep_by_hand_is_walked_bounded_with_findings(root: Path) -> None:
    chain(root, "deep", DEEP)
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text(fm("alice", body="zyzzyva up here\n"))
    store = open_store(root)
    h = Harness(store, "manage-bm25", role="test")
    deepest_read = "/memories/deep" + "/d" * (MAX_DEPTH - 1)
    start = time.monotonic()

    res = h.call("view", {"path": "/memories"})
    assert not res.is_error
    assert f"not read: {deepest_read}/d: folders deeper than {MAX_DEPTH} levels are not read" in res.text

    res = h.call("bm25_full_search", {"query": "zyzzyva"})
    assert not res.is_error and "/memories/people/alice.md" in res.text and "leaf.md" not in res.text
    res = h.call("grep", {"pattern": "zyzzyva"})
    assert not res.is_error and "/memories/people/alice.md:5" in res.text

    violations = [v for v in spec.validate(store).violations if v.rule == "unread"]
    assert [v.path for v in violations] == [deepest_read + "/d"]
    problems = [p for p in check(store).problems if p.rule == "unread"]
    assert [p.path for p in problems] == [deepest_read + "/d"]
    stats = store_stats(store).as_json()
    assert stats["memdir_files"] == 2 and any(deepest_read + "/d" in u for u in stats["details"]["unread"])

    res = h.call("create", {"path": "/memories/people/bob.md", "file_text": fm("bob")})
    assert not res.is_error, res.text
    steps = Journal(root).steps()
    assert any(u.path == deepest_read + "/d" for s in steps for u in s.skipped)

    res = h.call("delete", {"path": "/memories/deep"})
    assert not res.is_error, res.text
    assert sorted(os.listdir(root)) == [".memdir", "MEMORY.md", "people"]
    assert not h.call("bm25_full_search", {"query": "zyzzyva"}).is_error
    assert time.monotonic() - start < 60  # a hang guard, not a speed target


@pytest.mark.slow
def test_cli_validate_and_check_name_the_deep_folder(root: Path) -> None:
    chain(root, "deep", DEEP)
    runner = CliRunner()
    for argv in (["validate", str(root)], ["check", str(root)]):
        res = runner.invoke(cli, argv)
        assert res.exit_code == 1, res.output
        assert f"folders deeper than {MAX_DEPTH} levels are not read" in res.output


def test_view_of_a_too_deep_folder_says_so(manage: Harness, root: Path) -> None:
    chain(root, "deep", MAX_DEPTH + 3, leaf=None)
    too_deep = "/memories/deep" + "/d" * MAX_DEPTH  # MAX_DEPTH + 1 levels
    res = manage.call("view", {"path": too_deep})
    assert not res.is_error and f"not read: {too_deep}: folders deeper than" in res.text
    res = manage.call("rename", {"old_path": too_deep, "new_path": "/memories/shallow"})
    assert res.is_error and "holds folders deeper than" in res.text and (root / "deep").is_dir()


def test_remove_tree_removes_any_depth_and_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.md").write_text("keep")
    chain(tmp_path, "gone", REMOVE_WINDOW * 3 + 5)
    wide = tmp_path / "gone" / "d" / "wide"
    wide.mkdir()
    for i in range(50):
        (wide / f"{i}.md").write_text("x")
    (wide / "link").symlink_to(outside)
    (wide / ".hidden").write_text("x")
    parent = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        remove_tree(parent, "gone")
    finally:
        os.close(parent)
    assert sorted(os.listdir(tmp_path)) == ["outside"]
    assert (outside / "keep.md").read_text() == "keep"


def test_a_parked_folder_of_a_killed_removal_is_swept(root: Path) -> None:
    parked = root / ".memdir-tmp-0123456789abcdef"
    (parked / "a").mkdir(parents=True)
    (parked / "a" / "x.md").write_text("x")
    old = time.time() - 3600
    os.utime(parked, (old, old))
    store = open_store(root)
    with store.step("test"):
        pass
    assert not parked.exists()


def test_journal_history_shows_the_skipped_trailer(root: Path) -> None:
    chain(root, "deep", MAX_DEPTH + 2)
    h = Harness(open_store(root), "manage")
    assert not h.call("create", {"path": "/memories/a.md", "file_text": fm("a")}).is_error
    log = subprocess.run(
        ["git", "--git-dir", str(root / ".memdir" / "journal.git"), "log", "--format=%B"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Memdir-Skipped: /memories/deep" in log and "folders deeper than" in log
    files = subprocess.run(
        ["git", "--git-dir", str(root / ".memdir" / "journal.git"), "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(files) == ["MEMORY.md", "a.md"]


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, MAX_DEPTH])
def test_files_at_the_limit_are_read_everywhere(root: Path, levels: int) -> None:
    chain(root, "deep", levels - 1)  # the file lies in a folder `levels` levels down
    store = open_store(root)
    h = Harness(store, "manage-bm25")
    leaf = "/memories/deep" + "/d" * (levels - 1) + "/leaf.md"
    assert leaf in h.call("bm25_full_search", {"query": "zyzzyva"}).text
    assert f"{leaf}:5" in h.call("grep", {"pattern": "zyzzyva"}).text
    assert not h.call("view", {"path": leaf}).is_error
    assert not [v for v in spec.validate(store).violations if v.rule == "unread"]
