"""One way to name the root (issue 35, item 5): every command over a store takes it as ROOT, its
first argument, and `--root ROOT` as the same thing (configs already written use it); both ways
at once must name one folder. The guards are one option set on every command that opens a store
for tool writes, and the old names of renamed options are gone."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from tests.conftest import fm, snapshot

from memdir.cli.main import cli
from memdir.cli.root_opts import StoreCommand
from memdir_study.cli.study_cmds import study_group

# Every command that works on one store; `diff` compares two (OLD NEW) and takes neither form.
STORE_COMMANDS = {
    "adopt", "ask", "check", "consolidate", "context", "demo", "forget", "growth", "history", "ingest",
    "init", "mcp-config", "reindex", "revert", "search", "serve", "stats", "sync", "tool", "ui",
    "validate",
}  # fmt: skip
# `clone REMOTE ROOT` makes a store rather than working on one: its ROOT comes second, as git's


def memdir(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args))


def _commands(group: click.Group) -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found |= {f"{name} {sub}": c for sub, c in _commands(command).items()}
        else:
            found[name] = command
    return found


def test_every_command_over_a_store_takes_root_first_and_as_an_option() -> None:
    commands = _commands(cli)
    over_a_store = {name for name, c in commands.items() if isinstance(c, StoreCommand)}
    assert over_a_store == STORE_COMMANDS | {"token add", "secrets allow"}
    for name in sorted(over_a_store):
        command = commands[name]
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        assert arguments[0].name == "root", name
        assert any("--root" in p.opts for p in command.params), name
        usage = memdir(*name.split(), "--help").output.splitlines()[0]
        assert " [OPTIONS] ROOT" in usage or " [OPTIONS] [ROOT]" in usage, usage
        if " [OPTIONS] ROOT" in usage:  # a ROOT named neither way is missing, said as such
            missing = memdir(*name.split())
            assert missing.exit_code == 2 and "Missing argument 'ROOT'" in missing.output, name
    # the study's commands read benchmarks and run folders, not a user's store
    assert not [n for n, c in _commands(study_group).items() if isinstance(c, StoreCommand)]


def test_root_and_the_option_are_one_thing(root: Path) -> None:
    (root / "a.md").write_text(fm("a", "a note", "- Vegan [S1T1]\n"), encoding="utf-8")
    for argv in (
        ["check", str(root), "--json"],
        ["check", "--root", str(root), "--json"],
        ["check", "--json", "--root", str(root)],
        ["check", str(root), "--root", str(root), "--json"],  # the same folder twice: fine
    ):
        res = memdir(*argv)
        assert res.exit_code == 0, (argv, res.output)
        assert json.loads(res.output)["counts"]["files"] == 2  # MEMORY.md and a.md
    view = '{"path": "/memories/a.md"}'
    positional = memdir("tool", str(root), "view", view)
    optional = memdir("tool", "view", view, "--root", str(root))
    assert positional.exit_code == optional.exit_code == 0
    assert positional.output == optional.output and "Vegan" in positional.output
    found = memdir("search", "--root", str(root), "vegan")  # QUERY moves up: --root filled ROOT
    assert found.exit_code == 0 and "/memories/a.md" in found.output


def test_two_different_roots_are_refused_and_nothing_is_written(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert memdir("init", str(other)).exit_code == 0
    before = (snapshot(root), snapshot(other))
    create = json.dumps({"path": "/memories/x.md", "file_text": fm("x", "x")})
    res = memdir("tool", str(root), "create", create, "--root", str(other))
    assert res.exit_code == 2
    assert "given twice" in res.output and str(root) in res.output and str(other) in res.output
    assert (snapshot(root), snapshot(other)) == before
    res = memdir("validate", "--root", str(other), str(root))
    assert res.exit_code == 2 and "give it once" in res.output


def test_a_typo_is_refused_whichever_way_the_root_is_named(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": "I am vegan now."}) + "\n", encoding="utf-8")
    typo = tmp_path / "nope"
    for argv in (
        ["ingest", str(typo), str(chat), "--model", "offline"],
        ["ingest", "--root", str(typo), str(chat), "--model", "offline"],
        ["serve", str(typo)],
        ["mcp-config", str(typo), "--client", "cursor"],
    ):
        res = memdir(*argv)
        assert res.exit_code == 2 and f"memdir init {typo}" in res.output, (argv, res.output)
        assert not typo.exists()


def test_tool_takes_the_guards_serve_and_ingest_take(root: Path) -> None:
    """`memdir tool` had no guard flags, so an operator could not hold a shell write to the
    fanout cap the server enforces."""
    for i in range(2):
        (root / f"n{i}.md").write_text(fm(f"n{i}", "a note"), encoding="utf-8")
    before = snapshot(root)
    create = json.dumps({"path": "/memories/n2.md", "file_text": fm("n2", "a note")})
    res = memdir("tool", str(root), "create", create, "--fanout-cap", "2")
    assert res.exit_code == 1 and "fanout" in res.output.lower(), res.output
    assert snapshot(root) == before
    flags = ("--core-budget", "--fanout-cap", "--preserve-facts", "--one-live-value")
    for command in ("tool", "serve", "ingest"):
        shown = memdir(command, "--help").output
        assert all(flag in shown for flag in flags), command


def test_preserve_facts_holds_in_a_reorganization_or_is_refused(root: Path) -> None:
    (root / "a.md").write_text(fm("a", "a note", "- Vegan [S1T1]\n"), encoding="utf-8")
    drop = json.dumps({"path": "/memories/a.md", "old_str": "- Vegan [S1T1]\n", "new_str": ""})
    before = snapshot(root)
    unmarked = memdir("tool", str(root), "str_replace", drop, "--preserve-facts")
    assert unmarked.exit_code == 2 and "--reorganize" in unmarked.output  # it would refuse nothing
    held = memdir("tool", str(root), "str_replace", drop, "--preserve-facts", "--reorganize")
    assert held.exit_code == 1 and "fact" in held.output
    assert snapshot(root) == before
    served = memdir("serve", str(root), "--preserve-facts")
    assert served.exit_code == 2 and "--reorganize" in served.output


@pytest.mark.parametrize(
    "argv",
    [
        ["study", "eval", "-b", "generated", "--out", "x", "--harness", "center"],
        ["study", "eval", "-b", "generated", "--out", "x", "--limit", "3"],
        ["study", "skills", "--variants", "no-store", "--out", "x", "--harness", "shell"],
        ["study", "data", "show", "--sample", "conv-50"],  # one name: --conversation, as eval's
    ],
)
def test_old_option_names_are_gone(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = memdir(*argv)
    assert res.exit_code == 2 and "No such option" in res.output
    assert not (tmp_path / "x").exists()


def test_study_report_redraws_a_run_folder_and_refuses_another_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ["study", "eval", "-b", "generated", "-c", "gen-s3-p2-n4-t3-a2-c1", "-v", "closed-book"]
    assert memdir(*argv, "--questions", "2", "--no-progress", "--out", str(run)).exit_code == 0
    drawn = (run / "report.md").read_text(encoding="utf-8")
    (run / "report.md").unlink()
    res = memdir("study", "report", str(run))
    assert res.exit_code == 0 and str(run / "report.md") in res.output
    assert (run / "report.md").read_text(encoding="utf-8") == drawn
    res = memdir("study", "report", str(tmp_path))
    assert res.exit_code == 1 and "not a run folder" in res.output
