"""`memdir serve`: the MCP server for one store and one profile, or for many tenants over HTTP."""

from __future__ import annotations

import anyio
import click

from memdir.errors import MemdirError
from memdir.store.store import Store
from memdir.tools.profiles import PROFILES, profile_specs


@click.command("serve")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None, help="Memory root.")
@click.option(
    "--tenants",
    "tenants_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Tenants file (from 'memdir token add'): serve every tenant over HTTP, chosen by bearer token.",
)
@click.option(
    "--profile",
    default="manage",
    show_default=True,
    type=click.Choice(list(PROFILES)),
    help="Tool set to expose (with --root).",
)
@click.option(
    "--http", "port", type=int, default=None, help="Serve streamable HTTP on this port (default: stdio)."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind with --http.")
def serve_cmd(root: str | None, tenants_file: str | None, profile: str, port: int | None, host: str) -> None:
    """Run an MCP server over ROOT with PROFILE's tools (stdio, or HTTP at /mcp), or serve every
    tenant of a tenants file over HTTP: each request's bearer token selects its tenant's root and
    profile, and a missing or unknown token gets 401."""
    if (root is None) == (tenants_file is None):
        raise click.UsageError("give exactly one of --root (one store) or --tenants (many stores over HTTP)")
    if tenants_file is not None:
        from memdir.mcp import tenants
        from memdir.mcp.tenant_app import serve_tenants

        if port is None:
            raise click.UsageError("--tenants serves over HTTP only; add --http PORT")
        registry = tenants.load(tenants_file)
        if not registry.tokens:
            raise MemdirError(f"{tenants_file} holds no tokens; add one with 'memdir token add'")
        names = sorted({t.tenant for t in registry.tokens})
        click.echo(
            f"memdir: serving {len(names)} tenant(s), {len(registry.tokens)} token(s) at http://{host}:{port}/mcp",
            err=True,
        )
        serve_tenants(registry, port, host)
        return
    from memdir.mcp.server import serve_http, serve_stdio

    assert root is not None
    profile_specs(profile)  # fail before the transport starts if a tool is missing
    store = Store(root)
    if port is None:
        anyio.run(serve_stdio, store, profile)
    else:
        click.echo(f"memdir: serving {profile!r} over {root} at http://{host}:{port}/mcp", err=True)
        serve_http(store, profile, port, host)


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
