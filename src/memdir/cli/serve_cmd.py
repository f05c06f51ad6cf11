"""`memdir serve`: the MCP server for one store and one profile, or for many tenants over HTTP."""

from __future__ import annotations

import anyio
import click

from memdir.cli.guard_opts import guard_options, require_reorganization
from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError
from memdir.mcp.loopback import is_loopback
from memdir.mcp.tenants import OPEN_TENANTS, PER_TENANT
from memdir.tools.guards import Guards
from memdir.tools.profiles import PROFILES, profile_specs
from memdir.tools.wiring import open_store


@click.command(
    "serve",
    cls=StoreCommand,
    root_memory=True,
    root_required=False,
    root_help="The memory to serve (made with 'memdir init'), as ROOT or with --root.",
)
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
    help="Tool profile to expose (with ROOT; a tenant token carries its own).",
)
@click.option(
    "--http", "port", type=int, default=None, help="Serve streamable HTTP on this port (default: stdio)."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind with --http.")
@click.option(
    "--allow-remote-unauthenticated",
    is_flag=True,
    help="With ROOT and a non-loopback --host: serve anyway, though anyone who can reach the port "
    "may call every tool of the profile (writes included) with no token.",
)
@guard_options
@click.option(
    "--reorganize", is_flag=True, help="With ROOT: mark this server's writes as a reorganization session."
)
@click.option(
    "--open-tenants",
    type=click.IntRange(min=1),
    default=OPEN_TENANTS,
    show_default=True,
    help="With --tenants: tenants kept open (search index, journal, sessions); past it the least recently "
    "used idle one is closed.",
)
@click.option(
    "--tenant-requests",
    type=click.IntRange(min=1),
    default=PER_TENANT,
    show_default=True,
    help="With --tenants: one tenant's requests in flight; more get 429.",
)
@click.option(
    "--ray",
    "on_ray",
    is_flag=True,
    help="With --tenants: serve as a Ray Serve application on the cluster RAY_ADDRESS names (or a local "
    "one), each tenant loaded on a replica from its remote and every write synced there before it is "
    "acknowledged (needs the ray extra).",
)
@click.option(
    "--replicas",
    type=click.IntRange(min=1),
    default=None,
    help="With --ray: tenant replicas (default 1).",
)
def serve_cmd(
    root: str | None,
    tenants_file: str | None,
    profile: str,
    port: int | None,
    host: str,
    allow_remote_unauthenticated: bool,
    guards: Guards | None,
    reorganize: bool,
    open_tenants: int,
    tenant_requests: int,
    on_ray: bool,
    replicas: int | None,
) -> None:
    """Run an MCP server over ROOT with PROFILE's tools (stdio, or HTTP at /mcp), or serve every
    tenant of a tenants file over HTTP: each request's bearer token selects its tenant's root and
    profile, and a missing or unknown token gets 401."""
    if (root is None) == (tenants_file is None):
        raise click.UsageError("give exactly one of ROOT (one store) or --tenants (many stores over HTTP)")
    if (on_ray or replicas is not None) and (tenants_file is None or port is None):
        raise click.UsageError(
            "--ray and --replicas serve a tenants file over HTTP: add --tenants FILE --http PORT"
        )
    if replicas is not None and not on_ray:
        raise click.UsageError("--replicas counts Ray Serve replicas; add --ray")
    if tenants_file is not None:
        from memdir.mcp.tenant_app import serve_tenants
        from memdir.mcp.tenants_live import LiveTenants

        if port is None:
            raise click.UsageError("--tenants serves over HTTP only; add --http PORT")
        if reorganize:
            raise click.UsageError("with --tenants, mark a token instead: memdir token add --reorganize")
        live = LiveTenants.watch(tenants_file)  # a token revoked or added later counts within a second
        registry = live.current
        if not registry.tokens:
            raise MemdirError(f"{tenants_file} holds no tokens; add one with 'memdir token add'")
        if on_ray:
            from memdir.serving.ray_app import serve_on_ray  # says how to install Ray when missing

            serve_on_ray(
                tenants_file,
                port,
                host,
                replicas=replicas or 1,
                guards=guards,
                open_tenants=open_tenants,
                per_tenant=tenant_requests,
            )
            return
        names = sorted({t.tenant for t in registry.tokens})
        click.echo(
            f"memdir: serving {len(names)} tenant(s), {len(registry.tokens)} token(s) at http://{host}:{port}/mcp",
            err=True,
        )
        serve_tenants(live, port, host, guards=guards, open_tenants=open_tenants, per_tenant=tenant_requests)
        return
    from memdir.mcp.server import serve_http, serve_stdio

    assert root is not None  # a memory: StoreCommand refused a typo, naming memdir init
    require_reorganization(guards, reorganize, "add --reorganize to mark this server's writes as one")
    profile_specs(profile)  # fail before the transport starts if a tool is missing
    if port is not None and not is_loopback(host):
        if not allow_remote_unauthenticated:
            raise click.UsageError(
                f"--host {host} is reachable from the network and ROOT is served with no token: anyone "
                f"who reaches port {port} could call every tool of the {profile!r} profile (its writes "
                "too). Serve one store or many behind bearer tokens with --tenants (memdir token add), "
                "reach this one through an SSH tunnel to 127.0.0.1, or, if the network is yours alone, "
                "add --allow-remote-unauthenticated"
            )
        click.echo(
            f"memdir: warning: serving {host}:{port} without authentication (--allow-remote-unauthenticated):"
            f" anyone who reaches it may call every tool of {profile!r} on {root}",
            err=True,
        )
    store = open_store(root, guards=guards)
    meta = {"reorganize": True} if reorganize else {}
    if port is None:
        anyio.run(lambda: serve_stdio(store, profile, **meta))
    else:
        click.echo(f"memdir: serving {profile!r} over {root} at http://{host}:{port}/mcp", err=True)
        serve_http(store, profile, port, host, **meta)


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
