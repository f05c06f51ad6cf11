"""`memdir study data show` on the real data, and the import rule of the bench package."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("MEMDIR_DATA") or REPO.parent / "shared" / "data")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMDIR_OFFLINE", "1")
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMDIR_DATA", str(DATA))


@pytest.mark.skipif(
    not (DATA / "locomo").is_dir(), reason=f"benchmark data not found at {DATA}; set MEMDIR_DATA"
)
def test_data_show_prints_counts_for_the_default_locomo_sample() -> None:
    out = CliRunner().invoke(
        cli, ["study", "data", "show", "--benchmark", "locomo", "--conversation", "conv-50", "--json"]
    )
    assert out.exit_code == 0, out.output
    info = json.loads(out.output)
    assert (info["turns"], info["sessions"], info["chunks"], info["questions"]) == (568, 30, 85, 158)
    assert info["by_category"]["single-hop"] == 87 and info["defective_golds"] == [20, 64, 112, 138]


def test_data_show_generated_with_head_and_a_missing_file_error() -> None:
    out = CliRunner().invoke(
        cli, ["study", "data", "show", "-b", "generated", "-c", "gen-s1-p2-n3-t4", "--head", "2"]
    )
    assert out.exit_code == 0, out.output
    assert "sessions: 3" in out.output and "[S1T1] (2023-01-09)" in out.output
    bad = CliRunner().invoke(
        cli, ["study", "data", "show", "-b", "personamem", "-c", "pm_128k_18_43642c89_e784"]
    )
    assert bad.exit_code != 0 and "questions_128k.csv" in str(bad.exception)


def test_bench_imports_nothing_of_memdir_but_store_chatlogs_and_the_leaves() -> None:
    # The leaves anyone may import (ARCHITECTURE.md): the locator grammar lives in conventions;
    # the turns of a LoCoMo or REALTALK file are the product's chat-log readers' (chatlogs); a
    # dataset file is JSON read through jsontypes.
    allowed = ("memdir_study.bench", "memdir.stream", "memdir.errors", "memdir.store", "memdir.conventions")
    allowed += ("memdir.chatlogs", "memdir.jsontypes")
    loaders = sorted((REPO / "src" / "memdir_study" / "bench").glob("*.py"))
    assert len(loaders) >= 8  # the loaders are where this looks, not an empty folder
    for path in loaders:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name.startswith("memdir"):
                    assert name.startswith(allowed), f"{path.name} imports {name}"
