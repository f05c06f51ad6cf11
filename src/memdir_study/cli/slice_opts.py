"""The `--sessions A-B` option that `study eval` and `study bench writes` share: one parse, so a
bad slice is refused the same way by both before anything runs (docs/eval.md)."""

from __future__ import annotations

import click

from memdir.errors import MemdirError


def sessions_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--sessions` checked before anything runs, normalized to "A-B"."""
    if value is None:
        return None
    from memdir_study.bench.types import parse_sessions

    try:
        first, last = parse_sessions(value)
    except MemdirError as exc:
        raise click.BadParameter(str(exc)) from None
    return f"{first}-{last}"
