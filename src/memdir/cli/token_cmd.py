"""`memdir token add`: issue a bearer token for one tenant's root and profile."""

from __future__ import annotations

import click

from memdir.tools.profiles import PROFILES


@click.group("token")
def token_group() -> None:
    """Bearer tokens for 'memdir serve --tenants'."""


@token_group.command("add")
@click.option(
    "--tenants",
    "tenants_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Tenants file (created if missing).",
)
@click.option(
    "--root", required=True, type=click.Path(exists=True, file_okay=False), help="The tenant's memory root."
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
        f"memdir: token for tenant {entry.tenant!r} ({profile}) over {entry.real_root}; shown once:", err=True
    )
    click.echo(token)


def register(cli: click.Group) -> None:
    cli.add_command(token_group)
