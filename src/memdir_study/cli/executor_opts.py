"""`--executor`, `--address` and `--cells-at-once`: where the study commands (eval, skills) run
their cells, on this machine's event loop (the default) or as Ray tasks (docs/eval.md,
"Running on Ray")."""

from __future__ import annotations

from typing import Any

import click


def executor_options(fn: Any) -> Any:
    fn = click.option(
        "--cells-at-once",
        type=click.IntRange(min=1),
        default=None,
        help="With --executor ray: at most N cells in flight (default: as many as the cluster "
        "schedules, one per CPU). Each cell keeps its own caps, so at most N x --in-flight "
        "questions reach a provider at once.",
    )(fn)
    fn = click.option(
        "--address",
        default=None,
        help="With --executor ray: the cluster to run on (ray://HOST:10001, or auto for one "
        "started with `ray start`); default: a local cluster started for this run. The run folder "
        "and MEMDIR_DATA must be at the same paths on every node.",
    )(fn)
    fn = click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="local: the cells one after another on this machine; ray: each cell a Ray task "
        "(needs the optional extra: pip install 'memdir[ray]').",
    )(fn)
    return fn


def check_executor(executor: str, address: str | None, cells_at_once: int | None) -> bool:
    """True for Ray; the Ray-only options refused on the local executor, which would ignore them."""
    if executor == "local":
        given = [o for o, v in (("--address", address), ("--cells-at-once", cells_at_once)) if v is not None]
        if given:
            raise click.UsageError(f"{' and '.join(given)} apply only with --executor ray")
        return False
    return True
