"""The `memdir` command: a thin layer over the library. Each topic lives in its own module
and registers its commands on :data:`cli` here; a plugin (`memdir/plugins.py`) adds its own
(e.g. `memdir study`).

A topic module is imported when one of its commands runs (or `--help` lists them all), not at
start (cli/topics.py): `memdir check` and `memdir stats` load no agents, so a check's memory is
what its reads need, not the agents' imports (benchmarks/results/2026-12-06-docstring-figures.md,
"cli/main.py")."""

from __future__ import annotations

import click

from memdir import __version__
from memdir.cli.topics import TopicGroup, Topics, topic
from memdir.errors import MemdirError
from memdir.store.private import tighten_umask

# Each topic module (under memdir.cli) and the commands its `register(cli)` adds;
# tests/cli/test_cli_topics.py holds this table to what each module registers.
COMMAND_MODULES: Topics = (
    ("store_cmds", ("init", "validate", "context", "tool")),
    ("serve_cmd", ("serve",)),
    ("mcp_config_cmd", ("mcp-config",)),
    ("demo_cmd", ("demo",)),
    ("agent_cmds", ("ingest", "ask")),
    ("adopt_cmd", ("adopt",)),
    ("health_cmds", ("stats", "history", "growth", "check", "diff")),
    ("secrets_cmd", ("secrets",)),
    ("consolidate_cmd", ("consolidate", "revert")),
    ("forget_cmd", ("forget",)),
    ("search_cmds", ("search", "reindex")),
    ("token_cmd", ("token",)),
    ("local_cmd", ("local-model",)),
    ("ui_cmd", ("ui",)),
    ("sync_cmd", ("sync", "clone")),
)
# Commands a plugin of this distribution adds, and the extra that installs it: when the plugin
# is absent or fails to import, the command stays listed and says how to install it.
EXTRAS = {"study": "study"}
__all__ = ["COMMAND_MODULES", "EXTRAS", "cli", "main", "topic"]


def _missing(name: str, extra: str) -> click.Command:
    def explain() -> None:
        from memdir import plugins

        why = "".join(f"\n  plugin {p!r} failed to load: {e}" for p, e in plugins.failures().items())
        click.echo(
            f"memdir {name}: not installed. Install it with: pip install 'memdir[{extra}]'{why}", err=True
        )
        raise SystemExit(2)

    return click.Command(
        name,
        callback=explain,
        help=f"(not installed: pip install 'memdir[{extra}]')",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
        add_help_option=False,
    )


class MemdirGroup(TopicGroup):
    """The product's topics, then the plugins' commands, loaded the first time a name is not a
    topic's (or `--help` lists them all), so `memdir check` reads no entry points."""

    plugged = False

    def _plug(self) -> None:
        if not self.plugged:  # importlib.metadata and pluggy: not paid by a topic
            from memdir import plugins

            self.plugged = True
            plugins.register_commands(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._plug()
        names = set(self.module_of) | set(self.commands) | set(EXTRAS)
        return sorted(names, key=lambda name: (name in self.last, name))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.module_of:
            self._plug()
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in EXTRAS:
            return _missing(cmd_name, EXTRAS[cmd_name])
        return found


@click.group(
    cls=MemdirGroup,
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
