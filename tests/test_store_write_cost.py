"""What one store write costs in system calls (issue 47: as fast as the SDK helper it replaces).

The Anthropic SDK's helper moves or removes a file with one rename or unlink; memdir walks to it
through folder descriptors (`safefs.py`, no link followed) and checks it first, and each check
that walks the chain again from the root is three or four more opens per call. These hold a
delete and a rename to one look at each path they refuse on."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memdir.store.store import Store

NOTE = "---\nname: note\ndescription: a note\n---\nbody\n"


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
