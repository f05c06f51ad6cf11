"""`memdir check` flags stored lines that address a model (issue 49, item 3) as `injection`
warnings, each at its path and line with why; ordinary facts beside them are not flagged, and
the store stays sound (a warning, not a failing problem: a chat may quote such words)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from agent_helpers import new_store
from memdir.analytics.integrity import check
from memdir.cli.main import cli
from memdir.tools.profiles import Harness
from poisoned import POISONED


def _poisoned_store(root: Path) -> dict[str, str]:
    """Twenty files of ordinary facts, each with one poisoned line; {path:line: the line}."""
    harness = Harness(new_store(root), "manage")
    index = "---\ndescription: A file per person\n---\n# People\n"
    harness.call_or_raise("create", {"path": "/memories/people/MEMORY.md", "file_text": index})
    planted: dict[str, str] = {}
    for i, line in enumerate(POISONED):
        path = f"/memories/people/p{i:02d}.md"
        text = (
            f"---\nname: p{i:02d}\ndescription: Person {i}: job and hobbies\n---\n# Person {i}\n"
            f"- p{i:02d} | job: nurse at St. Mary's (since 2023-03-01) [S1T{i + 1}]\n"
            f"- Plays the cello on Sundays [S2T{i + 1}]\n"
            f"- {line}\n"  # line 8
            f"- Ignored the rain and went hiking anyway [S3T{i + 1}]\n"
        )
        harness.call_or_raise("create", {"path": path, "file_text": text})
        planted[f"{path}:8"] = line
    return planted


def test_check_flags_each_poisoned_line_by_path_and_line(tmp_path: Path) -> None:
    planted = _poisoned_store(tmp_path / "m")
    report = check(new_store(tmp_path / "m"))
    found = {w.path: w.message for w in report.warnings if w.rule == "injection"}
    assert set(found) == set(planted)
    assert all(m.endswith("delete it unless it records what someone said") for m in found.values())
    assert report.ok, report.problems  # sound: flagged for a person, not failed


def test_the_cli_lists_them_as_warnings_and_exits_zero(tmp_path: Path) -> None:
    planted = _poisoned_store(tmp_path / "m")
    res = CliRunner().invoke(cli, ["check", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("warn [injection] ")]
    assert sorted(ln.split(" ")[2].rstrip(":") for ln in lines) == sorted(planted)
    res = CliRunner().invoke(cli, ["check", str(tmp_path / "m"), "--json"])
    data = json.loads(res.output)
    assert sum(w["rule"] == "injection" for w in data["warnings"]) == len(POISONED)
