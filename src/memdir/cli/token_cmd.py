"""`memdir token add|list|revoke`: the bearer tokens of a tenants file (mcp/tenants.py).

A token is shown once, when added; after that it is named by its fingerprint, a prefix of the
SHA-256 the file stores, which `list` shows and `revoke` takes."""

from __future__ import annotations

import click

from memdir.cli.root_opts import StoreCommand
from memdir.tools.profiles import PROFILES


@click.group("token")
def token_group() -> None:
    """Bearer tokens for 'memdir serve --tenants'."""


@token_group.command("add", cls=StoreCommand, root_help="The tenant's memory root, as ROOT or with --root.")
@click.option(
    "--tenants",
    "tenants_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Tenants file (created if missing).",
)
@click.option(
    "--profile",
    default="manage",
    show_default=True,
    type=click.Choice(list(PROFILES)),
    help="Tool profile this token may use.",
)
@click.option(
    "--name",
    "tenant",
    default=None,
    help="Tenant name (default: the name already bound to ROOT, else its folder name).",
)
@click.option("--label", default="", help="A note to tell tokens apart later (e.g. who holds it).")
@click.option(
    "--reorganize", is_flag=True, help="This token's writes are a reorganization session (--preserve-facts)."
)
def add_cmd(
    tenants_file: str, root: str, profile: str, tenant: str | None, label: str, reorganize: bool
) -> None:
    """Add a token and print it once; only its SHA-256 is stored."""
    from memdir.mcp import tenants

    token = tenants.add_token(tenants_file, root, profile, tenant, label, reorganize)
    entry = tenants.load(tenants_file).lookup(token)
    assert entry is not None
    click.echo(
        f"memdir: token {entry.fingerprint} for tenant {entry.tenant!r} ({profile}) over {entry.real_root}; "
        "shown once:",
        err=True,
    )
    click.echo(token)


_TENANTS = click.option(
    "--tenants", "tenants_file", required=True, type=click.Path(dir_okay=False), help="Tenants file."
)


@token_group.command("list")
@_TENANTS
def list_cmd(tenants_file: str) -> None:
    """The tokens of a tenants file: fingerprint, tenant, profile, created, label, root. Never the
    token itself, which the file does not hold."""
    from pathlib import Path

    from memdir.errors import MemdirError
    from memdir.mcp import tenants

    if not Path(tenants_file).exists():
        raise click.ClickException(f"{tenants_file}: no such tenants file; 'memdir token add' makes one")
    try:
        entries = tenants.load(tenants_file).tokens
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    if not entries:
        click.echo(f"{tenants_file}: no tokens")
        return
    rows = [
        (t.fingerprint, t.tenant, t.profile + (" reorganize" if t.reorganize else ""), t.created or "-",
         t.label or "-", t.real_root)
        for t in entries
    ]  # fmt: skip
    head = ("fingerprint", "tenant", "profile", "created", "label", "root")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    for row in [head, *rows]:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])


@token_group.command("revoke")
@_TENANTS
@click.argument("token_or_fingerprint")
def revoke_cmd(tenants_file: str, token_or_fingerprint: str) -> None:
    """Remove one token: TOKEN_OR_FINGERPRINT is the token itself or its fingerprint as 'token
    list' shows it (sha256:..., or enough of its first hex digits to name one token). A name
    that matches no token, or several, changes nothing and exits with status 1."""
    from memdir.errors import MemdirError
    from memdir.mcp import tenants

    try:
        gone = tenants.revoke(tenants_file, token_or_fingerprint)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    left = len(tenants.load(tenants_file).tokens)
    click.echo(
        f"revoked {gone.fingerprint} (tenant {gone.tenant!r}, {gone.profile}); {left} token(s) left in "
        f"{tenants_file}; running servers (serve --tenants, ui --tenants) refuse it within a second"
    )


def register(cli: click.Group) -> None:
    cli.add_command(token_group)
