"""Resource bounds: huge files, huge lines, huge folders, hostile regexes end in a clear error
or a bounded answer, never a hang or a flood. (Full-size runs: benchmarks/reliability.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.conftest import fm, snapshot

from memdir.tools import files, view
from memdir.tools.profiles import Harness


def test_large_file_views_in_ranges(manage: Harness, root: Path) -> None:
    body = "".join(f"line {i} " + "x" * 90 + "\n" for i in range(60_000))  # ~6 MB
    (root / "big.md").write_text(fm("big", body=body))
    res = manage.call("view", {"path": "/memories/big.md"})
    assert res.is_error and "view it in ranges" in res.text and "60004 lines" in res.text
    res = manage.call("view", {"path": "/memories/big.md", "start_line": 30_000, "end_line": 30_002})
    assert not res.is_error and "line 29995 " in res.text
    res = manage.call("grep", {"pattern": "^line 59999 "})
    assert "/memories/big.md:60004: line 59999" in res.text


def test_writes_over_the_file_limit_are_refused(manage: Harness, root: Path) -> None:
    before = snapshot(root)
    huge = fm("huge", body="y" * (files.MAX_FILE_BYTES + 1))
    res = manage.call("create", {"path": "/memories/huge.md", "file_text": huge})
    assert res.is_error and "per-file limit" in res.text
    assert snapshot(root) == before


def test_ten_megabyte_line(manage: Harness, root: Path) -> None:
    (root / "wide.md").write_text(fm("wide", body="start " + "z" * 10_000_000 + " needle\n"))
    res = manage.call("grep", {"pattern": "needle"})
    assert not res.is_error and "more characters]" in res.text and len(res.text) < 2000
    res = manage.call("view", {"path": "/memories/wide.md", "start_line": 5, "end_line": 5})
    assert res.is_error and "grep shows a clipped view" in res.text


def test_listing_is_capped_with_a_notice(manage: Harness, root: Path) -> None:
    folder = root / "many"
    folder.mkdir()
    for i in range(view.MAX_LIST_ENTRIES + 200):
        (folder / f"f{i:05d}.md").write_text(fm(f"f{i:05d}"))
    res = manage.call("view", {"path": "/memories/many"})
    lines = res.text.split("\n")
    assert len(lines) == view.MAX_LIST_ENTRIES + 3
    assert lines[-1].startswith("... 200 more entries not shown")


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.slow
def test_catastrophic_regex_is_bounded(
    manage: Harness, root: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    if engine == "python":
        monkeypatch.setenv("MEMDIR_GREP", "python")
    monkeypatch.setenv("MEMDIR_GREP_TIMEOUT", "1")
    (root / "a.md").write_text(fm("a", body="a" * 5000 + "b\n"))
    start = time.monotonic()
    res = manage.call("grep", {"pattern": "(a|aa)+$"})
    elapsed = time.monotonic() - start
    assert elapsed < 30  # a hang guard, not a speed target: the budget is 1 s
    if engine == "python":
        assert res.is_error and "simplify the pattern" in res.text
    else:  # ripgrep's default engine is linear-time: it simply answers (only "name: a" matches)
        assert not res.is_error and res.text.split("\n")[1:] == ["/memories/a.md:2: name: a"]
    res = manage.call("grep", {"pattern": r"(a+)+$\1"})  # back-reference: PCRE2 with its match limit
    assert res.is_error or res.text.startswith("No lines match")
