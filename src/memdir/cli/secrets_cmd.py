"""`memdir secrets allow ROOT`: a string that looks like a secret, allowed to be written as it is
(store/secrets_allow.py, docs/secrets.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError


@click.group("secrets")
def secrets_group() -> None:
    """What memory keeps out: secrets are written as [redacted: KIND] (docs/secrets.md)."""


@secrets_group.command("allow", cls=StoreCommand)
@click.argument("text", required=False)
@click.option("--note", default="", help="Why it is allowed, kept beside its digest.")
def allow_secret_cmd(root: str, text: str | None, note: str) -> None:
    """Let TEXT, which looks like a secret, be written to ROOT unredacted (a documented example
    key, a test card number). Without TEXT it is read from standard input, so it stays out of
    the shell's history. The store keeps a keyed digest of it, not the text."""
    from memdir.store import secrets_allow
    from memdir.store.secrets import scan

    value = text if text is not None else sys.stdin.readline().rstrip("\r\n")
    try:
        digest = secrets_allow.allow(Path(root), value, note)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    found = scan(value)
    kind = found[0].kind if found else "nothing memdir would redact"
    click.echo(f"allowed in {root} ({kind}; digest {digest[:12]}); new writes keep it as written")


def register(cli: click.Group) -> None:
    cli.add_command(secrets_group)
