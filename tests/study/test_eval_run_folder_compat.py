"""A run folder `memdir study eval` wrote before the typed records (tests/fixtures/eval_run: the
offline roles on one generated conversation, stores left out) is still read as it was: the
report redrawn from it, and a resumed run over it, write the same bytes."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from memdir.cli.main import cli

FIXTURE = Path(__file__).parents[1] / "fixtures" / "eval_run"
CELLS = Path("cells/generated/gen-s3-p2-n4-t3-a2-c1")
WRITTEN = ["summary.json", "timings.json", "report.md", "answers.jsonl"]


def _copy(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    return run


def test_study_report_redraws_the_same_report_from_an_older_run_folder(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    (run / "report.md").unlink()
    res = CliRunner().invoke(cli, ["study", "report", str(run)])
    assert res.exit_code == 0, res.output
    assert (run / "report.md").read_bytes() == (FIXTURE / "report.md").read_bytes()


def test_a_resumed_run_over_an_older_folder_rewrites_it_byte_for_byte(tmp_path: Path) -> None:
    run = _copy(tmp_path)
    args = [
        "study",
        "eval",
        "-b",
        "generated",
        "-c",
        "gen-s3-p2-n4-t3-a2-c1",
        "-v",
        "closed-book,verbatim-dump",
    ]
    args += ["--model", "offline", "--judge", "offline", "--out", str(run), "--no-progress"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    for name in [*WRITTEN, str(CELLS / "verbatim-dump.json"), str(CELLS / "closed-book.json")]:
        assert (run / name).read_bytes() == (FIXTURE / name).read_bytes(), name
