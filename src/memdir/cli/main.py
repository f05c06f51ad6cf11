"""The `memdir` command: a thin layer over the library. Each topic lives in its own module
and registers its commands on :data:`cli` here."""

from __future__ import annotations

import click

from memdir import __version__
from memdir.cli import (
    agent_cmds,
    bench_cmd,
    consolidate_cmd,
    data_cmd,
    demo_cmd,
    eval_cmd,
    health_cmds,
    local_cmd,
    mcp_config_cmd,
    search_cmds,
    serve_cmd,
    skills_cmd,
    store_cmds,
    token_cmd,
    ui_cmd,
)
from memdir.errors import MemdirError

# Topic modules; each defines `register(cli)`. Listed here so `memdir --help` shows them all.
COMMAND_MODULES = (
    store_cmds,
    serve_cmd,
    mcp_config_cmd,
    demo_cmd,
    data_cmd,
    agent_cmds,
    health_cmds,
    consolidate_cmd,
    search_cmds,
    token_cmd,
    eval_cmd,
    skills_cmd,
    local_cmd,
    bench_cmd,
    ui_cmd,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memdir")
def cli() -> None:
    """memdir: long-term memory for LLM agents as a folder of markdown files."""


for _mod in COMMAND_MODULES:
    _mod.register(cli)


def main() -> None:
    try:
        cli(standalone_mode=True)
    except MemdirError as exc:
        click.echo(f"memdir: {exc}", err=True)
        raise SystemExit(2) from None
