"""`memdir forget`: words, a line or a file gone from ROOT, its whole history and what derives
from it (docs/forget.md; the work is `tools/forget.run`)."""

from __future__ import annotations

import json
import sys

import click

from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError


@click.command("forget", cls=StoreCommand)
@click.argument("text", required=False)
@click.option(
    "--line", "line", metavar="PATH:N", default=None, help="Forget line N of PATH (from 1), wherever it was."
)
@click.option(
    "--file", "file", metavar="PATH", default=None, help="Forget the file at PATH, with every version of it."
)
@click.option(
    "--secrets",
    is_flag=True,
    help="Forget every secret the scanner finds (docs/secrets.md), allowlisted ones kept.",
)
@click.option("--reason", default="", help="Why (kept in the redaction record; the text is not).")
@click.option(
    "--dry-run", is_flag=True, help="List what would go (files, lines, steps, derived data); change nothing."
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation (for scripts).")
@click.option("--json", "as_json", is_flag=True, help="Print what went as JSON.")
def forget_cmd(
    root: str,
    text: str | None,
    line: str | None,
    file: str | None,
    secrets: bool,
    reason: str,
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Forget TEXT (every line holding it), --line PATH:N, --file PATH or --secrets in ROOT: from the files,
    every version in the journal, the search index and the ingest ledger; a redaction record
    (a digest, never the text) says what went. Asks first on a terminal; --yes for scripts.
    Exits 1 when nothing matched."""
    from memdir.tools.forget import NothingMatched, request_for, run
    from memdir.tools.wiring import open_store

    try:
        store = open_store(root)
        request = request_for(
            store, text=text, line=line, file=file, secrets=secrets, reason=reason or "memdir forget"
        )
        if not dry_run and not yes:
            if not sys.stdin.isatty():
                raise click.UsageError(
                    "forget rewrites history for good: confirm on a terminal, or pass --yes"
                )
            preview = run(store, request, dry_run=True)
            click.echo("\n".join(preview.lines()))
            click.confirm("Forget this for good (it cannot be undone)?", abort=True)
        out = run(store, request, dry_run=dry_run)
    except NothingMatched as exc:
        click.echo(f"memdir forget: {exc}", err=True)
        raise SystemExit(1) from None
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        from memdir.store.journal import stop_committer

        stop_committer()  # the forget step's commit is landed before the command returns
    if as_json:
        click.echo(json.dumps(out.as_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(out.lines()))


def register(cli: click.Group) -> None:
    cli.add_command(forget_cmd)
