"""An option renamed to the CLI's one spelling of its concept (ARCHITECTURE.md, "Names") keeps
its old spelling working for the scripts that use it, hidden from `--help` so that the help
teaches one spelling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click


class Renamed(click.Option):
    """A click option whose `old` spellings still parse but are not shown in `--help`."""

    def __init__(self, param_decls: Sequence[str], *, old: Sequence[str] = (), **attrs: Any) -> None:
        super().__init__([*param_decls, *old], **attrs)
        self.old = tuple(old)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown = self.opts
        self.opts = [o for o in shown if o not in self.old]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown
