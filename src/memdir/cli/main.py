"""The `memdir` command: a thin layer over the library. Each topic lives in its own module
and registers its commands on :data:`cli` here.

A topic module is imported when one of its commands runs (or `--help` lists them all), not at
start: the agent topics bring the agents, numpy, scipy and libgit2 (about 50 MB), which
`memdir check` and `memdir stats` never use, and a check of a 50 MB core file has 200 MB."""

from __future__ import annotations

import importlib
from types import ModuleType

import click

from memdir import __version__
from memdir.errors import MemdirError

# Each topic module (under memdir.cli) and the commands its `register(cli)` adds;
# tests/test_cli_topics.py holds this table to what each module registers.
COMMAND_MODULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("store_cmds", ("init", "validate", "context", "tool")),
    ("serve_cmd", ("serve",)),
    ("mcp_config_cmd", ("mcp-config",)),
    ("demo_cmd", ("demo",)),
    ("data_cmd", ("data",)),
    ("agent_cmds", ("ingest", "ask")),
    ("adopt_cmd", ("adopt",)),
    ("health_cmds", ("stats", "history", "growth", "check", "diff")),
    ("consolidate_cmd", ("consolidate", "revert")),
    ("search_cmds", ("search", "reindex")),
    ("token_cmd", ("token",)),
    ("eval_cmd", ("eval",)),
    ("skills_cmd", ("skills", "skills-report")),
    ("local_cmd", ("local-model",)),
    ("bench_cmd", ("bench",)),
    ("ui_cmd", ("ui",)),
)


def topic(module: str) -> ModuleType:
    return importlib.import_module(f"memdir.cli.{module}")


_TOPIC = {name: module for module, names in COMMAND_MODULES for name in names}


class _TopicGroup(click.Group):
    """A group whose commands are registered by their topic module when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_TOPIC)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _TOPIC.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            topic(module).register(self)
        return self.commands.get(cmd_name)


@click.group(
    cls=_TopicGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(__version__, prog_name="memdir")
def cli() -> None:
    """memdir: long-term memory for LLM agents as a folder of markdown files."""


def main() -> None:
    try:
        cli(standalone_mode=True)
    except MemdirError as exc:
        click.echo(f"memdir: {exc}", err=True)
        raise SystemExit(2) from None
