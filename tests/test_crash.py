"""Crash consistency (fast subset): a writer killed with SIGKILL mid-edit never leaves a torn
file and never loses an acknowledged edit. Full run: benchmarks/reliability/crash_consistency.py."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO
from tests.workers import N_FILES, crash_campaign, parse_version, seed_crash_store, version_text


def test_version_texts_detect_tearing() -> None:
    text = version_text(3, 41)
    assert parse_version(3, text) == 41
    assert parse_version(3, text[: len(text) // 2]) is None
    assert parse_version(2, text) is None


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
