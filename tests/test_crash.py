"""Crash consistency (fast subset): a writer killed with SIGKILL mid-edit never leaves a torn
file and never loses an acknowledged edit. Full run: benchmarks/reliability/crash_consistency.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import REPO
from tests.workers import N_FILES, crash_campaign, parse_version, seed_crash_store, version_text


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
