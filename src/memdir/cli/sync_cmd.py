"""`memdir sync ROOT [REMOTE]` and `memdir clone REMOTE ROOT`: a store shared through any git
remote, merged fact by fact (docs/sync.md). Exit status: 0 synced (or already in sync), 2 the
sync could not run (nothing changed on either side)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memdir.cli.consolidate_cmd import Refused  # exit 2: the command could not do its work
from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError
from memdir.sync import SyncReport, clone, sync


def _print(report: SyncReport, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.as_json(), ensure_ascii=False, indent=2))
        return
    for line in report.lines():
        click.echo(f"  {line}")
    click.echo(report.verdict())


@click.command("sync", cls=StoreCommand)
@click.argument("remote", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def sync_cmd(root: str, remote: str | None, as_json: bool) -> None:
    """Sync ROOT with REMOTE (a bare repository's path, ssh or https; remembered after the first
    sync, so later syncs need no REMOTE): fetch, merge fact by fact, land here as one operation
    ('memdir revert ROOT --operation ID' undoes it), push. Never forced, never drops a fact."""
    try:
        report = sync(Path(root), remote)
    except MemdirError as exc:
        raise Refused(str(exc)) from None
    _print(report, as_json)


@click.command("clone")
@click.argument("remote")
@click.argument("root", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def clone_cmd(remote: str, root: str, as_json: bool) -> None:
    """Make a new store at ROOT from the memory files on REMOTE, and remember REMOTE for
    'memdir sync ROOT'."""
    try:
        report = clone(remote, Path(root))
    except MemdirError as exc:
        raise Refused(str(exc)) from None
    _print(report, as_json)


def register(cli: click.Group) -> None:
    cli.add_command(sync_cmd)
    cli.add_command(clone_cmd)
