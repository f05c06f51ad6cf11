"""One spelling per concept in the CLI's options (ARCHITECTURE.md, "Names"): every command that
takes a concept names it with the same long option, no option spelling means two things, and a
retired spelling still parses, hidden from --help."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner
from tests.conftest import fm

from memdir.cli.main import cli

# Options whose Python names differ across commands while the concept and spelling are one.
SAME_CONCEPT = {
    "--model": {"model", "model_name"},
    "--conversation": {"conversation", "conversations", "sample_id"},
}
# One Python name, two spellings: `serve --http PORT` turns HTTP on and gives its port; `search
# --path` (where to search) and `mcp-config --scope` (the client's config scope) are two concepts
# whose Python names happen to coincide.
TWO_SPELLINGS = {"port": {"--port", "--http"}, "scope": {"--path", "--scope"}}
# One spelling, two concepts: each is the name of the one entry its command makes (the tenant
# `token add` adds, the server entry `mcp-config` prints); left as is, listed here.
TWO_CONCEPTS = {"--name": {"name", "tenant"}}


def _options() -> Iterator[tuple[str, click.Option]]:
    def walk(cmd: click.Command, path: str) -> Iterator[tuple[str, click.Option]]:
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd, info_name=path)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, name
                yield from walk(sub, f"{path} {name}")
        else:
            yield from ((path, p) for p in cmd.params if isinstance(p, click.Option))

    yield from walk(cli, "memdir")


def _shown(option: click.Option) -> list[str]:
    """The long spellings `--help` shows for an option."""
    record = option.get_help_record(click.Context(click.Command("x")))
    assert record is not None
    return [w.strip(",") for w in record[0].split() if w.startswith("--")]


def test_each_concept_has_one_spelling_and_each_spelling_one_concept() -> None:
    spellings: dict[str, set[str]] = defaultdict(set)
    names: dict[str, set[str]] = defaultdict(set)
    for _, option in _options():
        assert option.name is not None
        for flag in _shown(option)[:1]:
            spellings[option.name].add(flag)
            names[flag].add(option.name)
    assert len(names) > 80  # the walk reached every command, the study's included
    two = {name: flags for name, flags in spellings.items() if len(flags) > 1}
    assert two == TWO_SPELLINGS
    several = {flag: pythons for flag, pythons in names.items() if len(pythons) > 1}
    assert several == {**SAME_CONCEPT, **TWO_CONCEPTS}


def test_the_core_budget_is_spelled_as_the_guard_spells_it() -> None:
    for path, option in _options():
        if option.name in ("budget", "core_budget"):
            assert _shown(option) == ["--core-budget"], path


def test_a_retired_spelling_still_parses_and_is_not_shown(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(fm("MEMORY", "index") + "# Memory\n", encoding="utf-8")
    (tmp_path / "core.md").write_text(fm("core", "core") + "word " * 400, encoding="utf-8")
    runner = CliRunner()
    for command in ("check", "context"):
        new = runner.invoke(cli, [command, str(tmp_path), "--core-budget", "10"])
        old = runner.invoke(cli, [command, str(tmp_path), "--budget", "10"])
        assert new.output == old.output and "10" in new.output, command
        assert new.exit_code == old.exit_code
        shown = runner.invoke(cli, [command, "--help"]).output
        assert "--core-budget" in shown and "--budget" not in shown
    shown = runner.invoke(cli, ["study", "data", "show", "--help"]).output
    assert "--json" in shown and "--as-json" not in shown
    shown = runner.invoke(cli, ["study", "bench", "retrieval", "--help"]).output
    assert "--conversation " in shown and "--conversations" not in shown
    assert "some of files, bm25" in shown and "bm25-files" not in shown  # `search --mode files`


def test_a_long_option_has_the_same_short_form_wherever_it_appears() -> None:
    shorts: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for _, option in _options():
        long = _shown(option)[0]
        shorts[long].add(tuple(sorted(o for o in option.opts if not o.startswith("--"))))
    assert {flag: forms for flag, forms in shorts.items() if len(forms) > 1} == {}
    assert shorts["--out"] == {("-o",)} and shorts["--model"] == {("-m",)}
