"""A command group whose commands live in topic modules (under memdir.cli, or a plugin's
package), each imported when one of its commands runs (or `--help` lists them), not at start:
the agent topics bring the agents, numpy, scipy and libgit2 (tens of megabytes:
benchmarks/results/2026-12-06-docstring-figures.md, "cli/main.py"), which `memdir check` never
uses. `memdir` and `memdir study` are both such groups."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import click

# A topic table: (module under the group's package, the commands its `register(group)` adds).
Topics = tuple[tuple[str, tuple[str, ...]], ...]
CLI = __name__.rpartition(".")[0]  # the product's topics: memdir.cli


def topic(module: str, package: str = CLI) -> ModuleType:
    return importlib.import_module(f"{package}.{module}")


class TopicGroup(click.Group):
    """Commands registered by their topic module when first asked for; listed by name, those in
    `last` after the others (`study` after the product's commands)."""

    def __init__(
        self,
        *args: Any,
        topics: Topics = (),
        last: tuple[str, ...] = (),
        package: str = CLI,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.topics = topics
        self.package = package
        self.last = last
        self.module_of = {name: module for module, names in topics for name in names}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.module_of, key=lambda name: (name in self.last, name))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = self.module_of.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            topic(module, self.package).register(self)
        return self.commands.get(cmd_name)
