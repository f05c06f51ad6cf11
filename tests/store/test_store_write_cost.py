"""What one store write costs in system calls (issue 47: as fast as the SDK helper it replaces).

The Anthropic SDK's helper moves or removes a file with one rename or unlink; memdir walks to it
through folder descriptors (`safefs.py`, no link followed) and checks it first, and each check
that walks the chain again from the root is three or four more opens per call. These hold a
delete and a rename to one look at each path they refuse on."""

from __future__ import annotations

import cProfile
import os
import pstats
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memdir.errors import NotFoundError
from memdir.store import dirsync
from memdir.store.journal import Journal, JournalObserver
from memdir.store.journal.tree import IN_FLIGHT
from memdir.store.store import Change, Step, Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

NOTE = "---\nname: note\ndescription: a note\n---\nbody\n"


def md(name: str) -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\nbody\n"


def _calls(run: Callable[[], object]) -> dict[str, int]:
    """How many times `run` calls each system call wrapper of `os` (open, fsync, ...), counted
    by the profiler."""
    prof = cProfile.Profile()
    prof.runcall(run)
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    prefix = "<built-in method posix."
    return {fn[len(prefix) : -1]: v[1] for (_, _, fn), v in stats.items() if fn.startswith(prefix)}


def _store(tmp_path: Path) -> Store:
    root = tmp_path / "mem"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "note.md").write_text(NOTE)
    return Store(root)


def test_a_delete_walks_to_the_file_twice_at_most(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with store.step("delete"):
        assert store.exists("/memories/a/b/note.md")  # the lock and state are open before counting

        def delete() -> None:
            assert store.delete("/memories/a/b/note.md") == ["/memories/a/b/note.md"]

        opens = _calls(delete)["open"]
    assert not (tmp_path / "mem" / "a" / "b" / "note.md").exists()
    assert opens <= 2 * 3, f"{opens} opens: the chain /memories/a/b was walked more than twice"


def test_a_rename_looks_at_the_source_once_and_syncs_its_folder_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with store.step("rename"):
        assert store.exists("/memories/a/b/note.md")
        calls = _calls(lambda: store.rename("/memories/a/b/note.md", "/memories/a/b/moved.md"))
    assert (tmp_path / "mem" / "a" / "b" / "moved.md").read_text() == NOTE
    assert not (tmp_path / "mem" / "a" / "b" / "note.md").exists()
    # source (3 opens), destination (3), its parent's parent (2), then the move's two folders (6)
    assert calls["open"] <= 14, f"{calls['open']} opens: the source was looked at more than once"
    # one folder holds both names: one fsync of it makes the move durable (docs/reliability.md)
    assert calls["fsync"] == 1, f"{calls['fsync']} fsyncs of the one folder"


def test_the_journal_opens_its_in_flight_mark_once_a_step_and_looks_for_its_head_once(
    tmp_path: Path,
) -> None:
    """A journaled step reads the in-flight mark, sets it and clears it through one open, and
    looks for the journal's HEAD and a repair's note once each (they were 3 opens of the mark
    and 2 looks at HEAD a step); what it records is unchanged."""
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage")
    for name in ("warm", "warm2"):  # the first step's whole-tree check, then the committer's start
        assert not h.call("create", {"path": f"/memories/{name}.md", "file_text": md(name)}).is_error
    journal = next(o for o in store.observers if isinstance(o, JournalObserver))
    (root / "note.md").write_text(md("note"))
    step = Step("create", {})
    step.changes.append(Change("create", "/memories/note.md"))

    def journaled_step() -> None:
        journal.before_step(store, step)
        assert (journal.journal.git_dir / IN_FLIGHT).read_bytes() == b"1"
        journal.on_step(store, step)
        journal.after_step(store, step)

    with store.writer_lock.hold():
        calls = _calls(journaled_step)
    # the mark (1), the file as it is now (3: its folder to lstat it, its folder and itself to read)
    assert calls["open"] <= 4, calls
    # HEAD, the repair note, the file's lstat
    assert calls["stat"] <= 3, calls
    assert (journal.journal.git_dir / IN_FLIGHT).read_bytes() == b"0"
    assert journal.settled()
    head = Journal(root).head()
    assert head is not None
    blob = Journal(root).files_at(head)["note.md"]
    assert dict(Journal(root).blobs([blob]))[blob] == md("note").encode()


def test_a_rewrite_walks_to_its_folder_once(tmp_path: Path) -> None:
    """`Store.write` refuses a missing file from the one walk that writes it (it walked the
    chain once more to ask first); the refusal is unchanged."""
    store = _store(tmp_path)
    with store.step("str_replace"):
        assert store.exists("/memories/a/b/note.md")
        calls = _calls(lambda: store.write("/memories/a/b/note.md", md("note")))
        try:
            store.write("/memories/a/b/gone.md", md("gone"))
        except NotFoundError as exc:
            assert str(exc) == "/memories/a/b/gone.md does not exist"
        else:
            raise AssertionError("a rewrite of a missing file was not refused")
    assert (tmp_path / "mem" / "a" / "b" / "note.md").read_text() == md("note")
    # the chain /memories/a/b (3 opens) and the temp file (1)
    assert calls["open"] <= 4, calls
    assert not [p.name for p in (tmp_path / "mem" / "a" / "b").iterdir() if p.name != "note.md"]


def test_the_journal_looks_at_a_written_file_on_one_walk(tmp_path: Path) -> None:
    """The journal's look at a file a step wrote (its lstat, then its bytes) walks to its
    folder once, not once for each; what it records is unchanged."""
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage")
    for name in ("warm", "warm2"):  # the first step's whole-tree check, then the committer's start
        assert not h.call("create", {"path": f"/memories/{name}.md", "file_text": md(name)}).is_error
    journal = next(o for o in store.observers if isinstance(o, JournalObserver))
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "note.md").write_text(md("note"))
    step = Step("create", {})
    step.changes.append(Change("create", "/memories/a/b/note.md"))

    def journaled_step() -> None:
        journal.before_step(store, step)
        journal.on_step(store, step)
        journal.after_step(store, step)

    with store.writer_lock.hold():
        calls = _calls(journaled_step)
    # the mark (1), the chain /memories/a/b (3), the file (1)
    assert calls["open"] <= 5, calls
    assert journal.settled()
    head = Journal(root).head()
    assert head is not None
    blob = Journal(root).files_at(head)["a/b/note.md"]
    assert dict(Journal(root).blobs([blob]))[blob] == md("note").encode()


def test_a_rename_between_folders_has_both_on_disk_before_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a disk (a folder fsync that waits), the two folders of a move are fsynced at once
    (`dirsync.py`): each fsync here goes on only once the other has started, which one after the
    other never does. Both have returned when the rename does."""
    store = _store(tmp_path)
    (tmp_path / "mem" / "c").mkdir()
    folders = {os.stat(tmp_path / "mem" / f).st_ino: f for f in ("a/b", "c")}
    both = threading.Barrier(2, timeout=10)
    done: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        both.wait()  # raises BrokenBarrierError after 10 s alone
        real(fd)
        done.append(folders.get(os.fstat(fd).st_ino, "other"))

    monkeypatch.setattr(dirsync, "_last_fsync_s", 1.0)  # as after a folder fsync that waited
    monkeypatch.setattr(os, "fsync", fsync)
    with store.step("rename"):
        store.rename("/memories/a/b/note.md", "/memories/c/note.md")
        assert sorted(done) == ["a/b", "c"], done  # both, before the call returned
    assert (tmp_path / "mem" / "c" / "note.md").read_text() == NOTE
    assert not (tmp_path / "mem" / "a" / "b" / "note.md").exists()
