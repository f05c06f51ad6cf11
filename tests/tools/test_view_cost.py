"""What a folder listing costs in calls (issue 47: as fast as the SDK helper it replaces).

A root view of 1,000 notes spent a fifth of its time making its data printable string by
string, and a sixth checking each entry's every name again for each entry below it. These hold
a listing to one check per name and no call per ASCII string, with its reply unchanged."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memdir.store.store import Store
from memdir.tools.base import printable_data
from memdir.tools.profiles import Harness


def _calls_of(run: Callable[[], object], name: str) -> int:
    """How many times `run` calls the Python function `name` (counted by the profiler)."""
    prof = cProfile.Profile()
    prof.runcall(run)
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    return sum(v[1] for (_, _, fn), v in stats.items() if fn == name)


def _store(tmp_path: Path, n: int) -> Harness:
    folder = tmp_path / "mem" / "deep-folder" / "notes"
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"note-{i}.md").write_text(f"---\nname: note-{i}\ndescription: note {i} ✓\n---\nbody\n")
    return Harness(Store(tmp_path / "mem"), "manage")


def test_a_listings_ascii_strings_are_kept_without_a_call_each(tmp_path: Path) -> None:
    h = _store(tmp_path, 40)
    result = h.call("view", {"path": "/memories"})
    calls = _calls_of(lambda: h.call("view", {"path": "/memories"}), "printable_text")
    assert not result.is_error and result.data is not None
    rows = result.data["entries"]
    assert len(rows) == 42 and rows[2]["description"] == "note 0 ✓"  # the non-ASCII text is kept
    # 42 rows of 4 keys and 3 strings: 294 calls before; now only the 40 non-ASCII descriptions
    assert calls <= 41, calls


def test_printable_data_still_escapes_every_lone_surrogate() -> None:
    data = {"a": ["x", "\udcff", 1.5, None, True], "\udcfe": {"k": "é\udcfd"}, 2: "ok"}
    escaped = {"a": ["x", "\\xff", 1.5, None, True], "\\xfe": {"k": "é\\xfd"}, "2": "ok"}
    assert printable_data(data) == escaped


def test_a_listing_checks_each_name_once(tmp_path: Path) -> None:
    h = _store(tmp_path, 30)
    calls = _calls_of(lambda: h.call("view", {"path": "/memories"}), "_plain")
    # 32 names (two folders, 30 notes): 92 checks before, the folders' names again for each entry
    assert calls <= 32, calls
