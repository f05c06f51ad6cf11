"""The command's topic modules are imported when one of their commands runs: the tables in
`memdir/cli/main.py` and `memdir_study/cli/study_cmds.py` name what each registers, `memdir
check` runs without the agents, numpy, libgit2, tantivy or rich, and `memdir stats` without
libgit2, tantivy or scikit-learn (a command's peak memory and time count every import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner
from tests.conftest import fm

from memdir.cli.main import COMMAND_MODULES, cli
from memdir.cli.topics import topic
from memdir_study.cli.study_cmds import STUDY_MODULES


def test_the_tables_name_what_each_module_registers() -> None:
    tables = (
        (COMMAND_MODULES, "memdir.cli", ["--help"]),
        (STUDY_MODULES, "memdir_study.cli", ["study", "--help"]),
    )
    for table, package, argv in tables:
        listed: list[str] = []
        for module, names in table:
            group = click.Group()
            topic(module, package).register(group)
            assert sorted(group.commands) == sorted(names), module
            listed.extend(names)
        assert len(listed) == len(set(listed))
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 0
        assert all(f"  {name} " in result.output for name in listed)
        assert CliRunner().invoke(cli, [*argv[:-1], "no-such-command"]).exit_code == 2


def test_every_topic_module_is_in_a_table() -> None:
    src = Path(__file__).resolve().parents[2] / "src"
    for folder, table in (
        (src / "memdir" / "cli", COMMAND_MODULES),
        (src / "memdir_study" / "cli", STUDY_MODULES),
    ):
        registering = {
            f.stem for f in folder.glob("*.py") if "\ndef register(" in f.read_text(encoding="utf-8")
        }
        assert registering == {module for module, _ in table}


def test_the_product_commands_are_listed_first_then_the_study() -> None:
    """`memdir --help` lists what a user runs over a store; the study's commands are one group,
    last, and none of them stands at the top level any more."""
    listing = CliRunner().invoke(cli, ["--help"]).output.split("Commands:")[1].splitlines()
    names = [line.split()[0] for line in listing if line.startswith("  ") and not line.startswith("   ")]
    assert names[-1] == "study" and names[:-1] == sorted(names[:-1])
    for gone in ("eval", "skills", "skills-report", "bench", "data"):
        assert CliRunner().invoke(cli, [gone, "--help"]).exit_code == 2
        assert gone not in names


_PROBE = """
import json, sys
from click.testing import CliRunner
from memdir.cli.main import cli
res = CliRunner().invoke(cli, sys.argv[1:])
print(json.dumps({"exit": res.exit_code, "modules": sorted({m.split(".")[0] for m in sys.modules}),
                  "memdir": sorted(m for m in sys.modules if m.startswith("memdir."))}))
"""
HEAVY = {"numpy", "scipy", "sklearn", "pygit2", "tantivy", "rich", "mcp", "starlette"}


def _modules_after(*argv: str) -> tuple[int, set[str], list[str]]:
    """The exit code, the top-level packages and the memdir modules loaded by one command run
    in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    return int(found["exit"]), set(found["modules"]), list(found["memdir"])


def test_check_loads_no_agent_numpy_git_index_or_rich(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(fm("MEMORY", "index", "# Memory\n"))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "MEMORY.md").write_text(fm("MEMORY", "notes"))
    (tmp_path / "notes" / "a.md").write_text(fm("a", "a note", "fact [S1T1]\n"))
    code, packages, ours = _modules_after("check", "--json", str(tmp_path))
    assert code == 0
    assert not HEAVY & packages
    assert not [m for m in ours if m.startswith(("memdir.agents", "memdir.tools."))]
    code, packages, _ = _modules_after("stats", "--json", str(tmp_path))
    assert code == 0
    assert not {"pygit2", "tantivy", "mcp", "sklearn"} & packages  # TF-IDF is analytics/tfidf.py
