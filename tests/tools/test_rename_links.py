"""rename checks before it moves (an error means nothing changed), and the journal never reads
through a link: a hard-linked file (another tenant's content), a symlink or a FIFO is left out
of every commit and named in a `Memdir-Skipped` trailer."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.conftest import fm, snapshot

from memdir.store.journal import Journal
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

SECRET = "other-tenant-secret-41d9"


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(root / ".memdir" / "journal.git"), *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def every_object(root: Path) -> str:
    """The content of every object in the journal, so no commit, tree or blob can hide it."""
    return subprocess.run(
        [
            "git",
            "--git-dir",
            str(root / ".memdir" / "journal.git"),
            "cat-file",
            "--batch-all-objects",
            "--batch",
        ],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")


@pytest.fixture
def neighbour(tmp_path: Path) -> Path:
    """A file of another tenant, outside this store."""
    other = tmp_path / "tenant-b"
    other.mkdir()
    secret = other / "secret.md"
    secret.write_text(fm("secret", body=SECRET + "\n"))
    return secret


@pytest.mark.parametrize("kind", ["hardlink", "fifo", "symlink"])
def test_rename_of_a_file_the_store_refuses_moves_nothing(
    manage: Harness, root: Path, neighbour: Path, kind: str
) -> None:
    assert not manage.call("create", {"path": "/memories/a.md", "file_text": fm("a")}).is_error
    target = root / "odd.md"
    if kind == "hardlink":
        os.link(neighbour, target)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(neighbour)
    steps = len(Journal(root).steps())
    listing = sorted(os.listdir(root))
    before = snapshot(root) if kind != "fifo" else None
    res = manage.call("rename", {"old_path": "/memories/odd.md", "new_path": "/memories/moved.md"})
    assert res.is_error, res.text
    assert sorted(os.listdir(root)) == listing  # the entry stayed where it was
    assert not (root / "moved.md").exists() and not (root / "moved.md").is_symlink()
    if before is not None:
        assert snapshot(root) == before
    assert len(Journal(root).steps()) == steps  # nothing was journaled
    assert SECRET not in every_object(root)


def test_moving_a_folder_never_journals_a_hard_linked_file(
    manage: Harness, root: Path, neighbour: Path
) -> None:
    assert not manage.call("create", {"path": "/memories/box/own.md", "file_text": fm("own")}).is_error
    os.link(neighbour, root / "box" / "shared.md")
    # A second writing step: staged by its own paths (not the whole tree), the path that broke.
    res = manage.call("rename", {"old_path": "/memories/box", "new_path": "/memories/crate"})
    assert not res.is_error, res.text
    assert (root / "crate" / "shared.md").read_text() == neighbour.read_text()  # moved: it is a name here
    last = Journal(root).steps()[-1]  # a reader lands the step log first (the committer may still hold it)
    assert sorted(git(root, "ls-tree", "-r", "--name-only", "HEAD").split()) == ["MEMORY.md", "crate/own.md"]
    assert [u.path for u in last.skipped] == ["/memories/crate/shared.md"]
    assert "2 hard links" in last.skipped[0].reason
    assert SECRET not in every_object(root)


def test_whole_tree_staging_skips_links_and_special_files(root: Path, neighbour: Path) -> None:
    os.link(neighbour, root / "shared.md")
    (root / "link.md").symlink_to(neighbour)
    os.mkfifo(root / "pipe.md")
    h = Harness(open_store(root), "manage")  # a fresh process's first step stages the whole tree
    assert not h.call("create", {"path": "/memories/a.md", "file_text": fm("a")}).is_error
    assert sorted(git(root, "ls-tree", "-r", "--name-only", "HEAD").split()) == ["MEMORY.md", "a.md"]
    skipped = {u.path: u.reason for s in Journal(root).steps() for u in s.skipped}
    assert "hard links" in skipped["/memories/shared.md"]
    assert "symbolic link" in skipped["/memories/link.md"]
    assert "not a regular file" in skipped["/memories/pipe.md"]
    assert SECRET not in every_object(root)
    history = [s.as_dict() for s in Journal(root).steps()]
    assert any(
        ["/memories/shared.md", skipped["/memories/shared.md"]] in s.get("skipped", []) for s in history
    )


def test_a_file_that_became_hard_linked_leaves_the_index(root: Path, neighbour: Path) -> None:
    h = Harness(open_store(root), "manage")
    assert not h.call("create", {"path": "/memories/a.md", "file_text": fm("a")}).is_error
    assert "a.md" in git(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    os.unlink(root / "a.md")
    os.link(neighbour, root / "a.md")  # swapped for another tenant's file, by hand
    store = open_store(root)  # a new process: its first step stages the whole tree
    assert (
        not Harness(store, "manage").call("create", {"path": "/memories/b.md", "file_text": fm("b")}).is_error
    )
    assert sorted(git(root, "ls-tree", "-r", "--name-only", "HEAD").split()) == ["MEMORY.md", "b.md"]
    assert SECRET not in every_object(root)
