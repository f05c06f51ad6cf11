"""`sync` and `clone` when only one side changed: plain push and pull through a real bare git
remote, the remote remembered, and the errors a person meets (issue 50, item 1)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import fm
from memdir.api import Memory
from memdir.cli.main import cli
from memdir.store.journal import Journal, group
from memdir.sync import SyncError, clone, sync
from sync_helpers import bare_remote, create, memory_files, new_store, remote_files

ALICE = "# Alice\n- Alice | city: Lisbon (since 2024-01-05) [S1T2]\n"


def test_first_sync_pushes_the_memory_files_as_a_plain_branch(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    create(a, "/memories/people/alice.md", ALICE, "alice")
    report = sync(a, remote)
    assert report.pushed and not report.pulled
    assert report.branch
    files = remote_files(remote, report.branch)
    assert files == memory_files(a)  # the memory files and nothing of memdir's state
    assert not any(name.startswith(".memdir") for name in files)
    again = sync(a)  # remembered
    assert again.in_sync and "already in sync" in again.verdict()


def test_clone_then_pull_what_the_other_pushed(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    create(a, "/memories/people/alice.md", ALICE, "alice")
    sync(a, remote)
    b = tmp_path / "b"
    cloned = clone(remote, b)
    assert cloned.pulled
    assert memory_files(b) == memory_files(a)
    create(a, "/memories/people/bob.md", "# Bob\n- Bob | job: nurse (since 2024-02-01) [S2T1]\n", "bob")
    sync(a)
    pulled = sync(b)
    assert "/memories/people/bob.md" in pulled.pulled and not pulled.pushed
    assert memory_files(b) == memory_files(a)
    ops = group(Journal(b).steps())
    assert ops[-1].id == pulled.operation and ops[-1].operation.kind == "sync"


def test_each_side_changed_other_files(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    sync(a, remote)
    b = tmp_path / "b"
    clone(remote, b)
    create(a, "/memories/a.md", "- from a [S1T1]\n", "a")
    create(b, "/memories/b.md", "- from b [S1T2]\n", "b")
    sync(a)
    sync(b)
    sync(a)
    assert memory_files(a) == memory_files(b) == remote_files(remote)
    assert sync(b).in_sync


def test_clear_errors(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    with pytest.raises(SyncError, match="no remote known"):
        sync(a)
    with pytest.raises(SyncError, match="cannot be reached"):
        sync(a, str(tmp_path / "nowhere.git"))
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(SyncError, match="not a memdir store"):
        sync(plain, bare_remote(tmp_path))
    with pytest.raises(SyncError, match="holds no memory"):
        clone(bare_remote(tmp_path, "empty.git"), tmp_path / "c")
    assert not (tmp_path / "c").exists()
    with pytest.raises(SyncError, match="not an empty folder"):
        clone(bare_remote(tmp_path, "other.git"), a)


def test_cli_and_memory_sync(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    runner = CliRunner()
    first = runner.invoke(cli, ["sync", str(a), remote])
    assert first.exit_code == 0, first.output
    assert "synced with" in first.output
    assert (
        runner.invoke(cli, ["sync", str(a)]).output.strip().endswith(f"already in sync with {remote} (main)")
    )
    cloned = runner.invoke(cli, ["clone", remote, str(tmp_path / "b"), "--json"])
    assert cloned.exit_code == 0, cloned.output
    assert json.loads(cloned.output)["pulled"]
    refused = runner.invoke(cli, ["sync", str(tmp_path / "b"), str(tmp_path / "nowhere.git")])
    assert refused.exit_code == 2 and "cannot be reached" in refused.output
    with Memory(tmp_path / "b") as memory:
        made = memory.call(
            "create", {"path": "/memories/c.md", "file_text": fm("c", body="- from memory [S3T1]\n")}
        )
        assert not made.is_error, made.text
        report = memory.sync()
    assert "/memories/c.md" in report.pushed
    assert b"- from memory [S3T1]" in remote_files(remote)["c.md"]


def test_what_a_person_keeps_beside_the_memory_stays_on_the_remote(tmp_path: Path) -> None:
    """A hidden file and a link pushed by hand are never landed in the store, and the store's
    next push keeps them on the remote."""
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    create(a, "/memories/people/alice.md", ALICE, "alice")
    sync(a, remote)
    work = tmp_path / "hand"
    subprocess.run(["git", "clone", "--quiet", "-b", "main", remote, str(work)], check=True)
    (work / ".gitattributes").write_text("*.md text\n")
    (work / "alias.md").symlink_to("people/alice.md")
    who = ["-c", "user.name=someone", "-c", "user.email=someone@example.com"]
    subprocess.run(["git", "-C", str(work), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(work), *who, "commit", "--quiet", "-m", "notes"], check=True)
    subprocess.run(["git", "-C", str(work), "push", "--quiet", "origin", "main"], check=True)
    report = sync(a)
    assert report.in_sync
    assert not (a / ".gitattributes").exists() and not (a / "alias.md").exists()
    create(a, "/memories/people/bob.md", "# Bob\n- Bob | job: nurse (since 2024-02-01) [S2T1]\n", "bob")
    assert sync(a).pushed == ["/memories/people/bob.md"]
    listing = subprocess.run(
        ["git", f"--git-dir={remote}", "ls-tree", "main"], capture_output=True, text=True, check=True
    ).stdout
    assert "\t.gitattributes" in listing and "120000 blob" in listing and "\talias.md" in listing
