"""The `memdir` command: a thin layer over the library. Each topic lives in its own module
and registers its commands on :data:`cli` here: the product's commands at the top level, the
study's (those that need the study's data or run folders) under `memdir study`.

A topic module is imported when one of its commands runs (or `--help` lists them all), not at
start (cli/topics.py): `memdir check` and `memdir stats` load no agents, and a check of a 50 MB
core file has 200 MB."""

from __future__ import annotations

import click

from memdir import __version__
from memdir.cli.topics import TopicGroup, Topics, topic
from memdir.errors import MemdirError
from memdir.store.private import tighten_umask

# Each topic module (under memdir.cli) and the commands its `register(cli)` adds;
# tests/test_cli_topics.py holds this table to what each module registers.
COMMAND_MODULES: Topics = (
    ("store_cmds", ("init", "validate", "context", "tool")),
    ("serve_cmd", ("serve",)),
    ("mcp_config_cmd", ("mcp-config",)),
    ("demo_cmd", ("demo",)),
    ("agent_cmds", ("ingest", "ask")),
    ("adopt_cmd", ("adopt",)),
    ("health_cmds", ("stats", "history", "growth", "check", "diff")),
    ("consolidate_cmd", ("consolidate", "revert")),
    ("search_cmds", ("search", "reindex")),
    ("token_cmd", ("token",)),
    ("local_cmd", ("local-model",)),
    ("ui_cmd", ("ui",)),
    ("study_cmds", ("study",)),
)
__all__ = ["COMMAND_MODULES", "cli", "main", "topic"]


@click.group(
    cls=TopicGroup,
    topics=COMMAND_MODULES,
    last=("study",),
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="memdir")
def cli() -> None:
    """memdir: long-term memory for LLM agents as a folder of markdown files."""


def main() -> None:
    tighten_umask()  # what memdir and its children (git, tantivy, SQLite) make is private (private.py)
    try:
        cli(standalone_mode=True)
    except MemdirError as exc:
        click.echo(f"memdir: {exc}", err=True)
        raise SystemExit(2) from None
