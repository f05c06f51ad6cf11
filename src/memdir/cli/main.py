"""The `memdir` command: a thin layer over the library. Each topic lives in its own module
and registers its commands on :data:`cli` here."""

from __future__ import annotations

import importlib

import click

from memdir import __version__
from memdir.errors import MemdirError

# Topic modules; each defines `register(cli)`. Listed here so `memdir --help` shows them all.
COMMAND_MODULES = (
    "memdir.cli.store_cmds",
    "memdir.cli.serve_cmd",
    "memdir.cli.demo_cmd",
    "memdir.cli.data_cmd",
    "memdir.cli.agent_cmds",
    "memdir.cli.health_cmds",
    "memdir.cli.search_cmds",
    "memdir.cli.token_cmd",
    "memdir.cli.eval_cmd",
    "memdir.cli.skills_cmd",
    "memdir.cli.local_cmd",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memdir")
def cli() -> None:
    """memdir: long-term memory for LLM agents as a folder of markdown files."""


for _mod in COMMAND_MODULES:
    importlib.import_module(_mod).register(cli)


def main() -> None:
    try:
        cli(standalone_mode=True)
    except MemdirError as exc:
        click.echo(f"memdir: {exc}", err=True)
        raise SystemExit(2) from None
