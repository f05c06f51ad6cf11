"""The operator's guards (tools/guards.py) as one option set, taken by every command that opens a
store for tool writes (`serve`, `ingest`, `tool`), and the one function that turns the flags
into the harness's `Guards`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from memdir.tools.guards import Guards


def guard_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Adds the guard flags; the command receives them as one `guards: Guards | None` (None:
    every guard off, so the store is a plain one)."""

    @functools.wraps(fn)
    def command(
        *args: Any,
        core_budget: int | None,
        fanout_cap: int | None,
        preserve_facts: bool,
        one_live_value: bool,
        **kwargs: Any,
    ) -> Any:
        return fn(
            *args, guards=operator_guards(core_budget, fanout_cap, preserve_facts, one_live_value), **kwargs
        )

    for option in reversed(_OPTIONS):
        command = option(command)
    return command


_OPTIONS = (
    click.option(
        "--core-budget",
        type=click.IntRange(min=0),
        default=None,
        help="Guard: refuse root-file writes past N tokens of core memory.",
    ),
    click.option(
        "--fanout-cap",
        type=click.IntRange(min=0),
        default=None,
        help="Guard: refuse a create/rename giving a folder more than N entries.",
    ),
    click.option(
        "--preserve-facts",
        is_flag=True,
        help="Guard: in reorganization sessions (--reorganize), refuse a write that drops a fact line "
        "(a line with a locator).",
    ),
    click.option(
        "--one-live-value",
        is_flag=True,
        help="Guard: refuse a keyed fact line whose key already has a live value (the refusal shows "
        "the supersede form to write instead).",
    ),
)


def operator_guards(
    core_budget: int | None, fanout_cap: int | None, preserve_facts: bool, one_live_value: bool
) -> Guards | None:
    """The guards the flags switch on, or None when none is."""
    guards = Guards(core_budget, fanout_cap, preserve_facts, one_live_value=one_live_value)
    return guards if guards.any else None


def require_reorganization(guards: Guards | None, reorganize: bool, hint: str) -> None:
    """`--preserve-facts` holds only in steps marked as reorganization: refused where none will
    be, since it would refuse nothing. `hint` says how this command marks one."""
    if guards is not None and guards.preserve_facts and not reorganize:
        raise click.UsageError(f"--preserve-facts guards reorganization sessions only; {hint}")
