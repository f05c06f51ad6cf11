"""`memdir serve`: the MCP server for one store and one profile."""

from __future__ import annotations

import anyio
import click

from memdir.store.store import Store
from memdir.tools.profiles import PROFILES, profile_specs


@click.command("serve")
@click.option("--root", required=True, type=click.Path(exists=True, file_okay=False), help="Memory root.")
@click.option(
    "--profile",
    default="manage",
    show_default=True,
    type=click.Choice(list(PROFILES)),
    help="Tool set to expose.",
)
@click.option(
    "--http", "port", type=int, default=None, help="Serve streamable HTTP on this port (default: stdio)."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind with --http.")
def serve_cmd(root: str, profile: str, port: int | None, host: str) -> None:
    """Run an MCP server exposing PROFILE's tools over ROOT (stdio, or HTTP at /mcp)."""
    from memdir.mcp.server import serve_http, serve_stdio

    profile_specs(profile)  # fail before the transport starts if a tool is missing
    store = Store(root)
    if port is None:
        anyio.run(serve_stdio, store, profile)
    else:
        click.echo(f"memdir: serving {profile!r} over {root} at http://{host}:{port}/mcp", err=True)
        serve_http(store, profile, port, host)


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
