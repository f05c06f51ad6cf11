"""`memdir ui`: a read-only web page over a store (or a tenants file's stores) and run folders."""

from __future__ import annotations

from pathlib import Path

import click

from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError


@click.command("ui", cls=StoreCommand, root_required=False)
@click.option(
    "--port", type=int, default=8765, show_default=True, help="Port to serve on (0: any free port)."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to bind (127.0.0.1 or ::1); any other address is refused.",
)
@click.option(
    "--tenants",
    "tenants_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Tenants file (from 'memdir token add'): serve every tenant's store, each behind its bearer token.",
)
@click.option(
    "--runs",
    "runs_dir",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Show the eval and skill run folders found under DIR (reports, answers, their stores).",
)
@click.option(
    "--bench",
    default=None,
    metavar="BENCHMARK:SAMPLE",
    help="ROOT was built from this benchmark sample (e.g. locomo:conv-50): locators link to its turns.",
)
def ui_cmd(
    root: str | None, port: int, host: str, tenants_file: str | None, runs_dir: str | None, bench: str | None
) -> None:
    """Serve a read-only web UI of ROOT on loopback and print its URL: the tree with its core
    budget, files with their references and locators, search, health, the journal's history,
    and the run folders under --runs. Stop it with Ctrl-C."""
    from memdir.ui.server import loopback, serve
    from memdir.ui.sources import Source, Sources

    loopback(host)  # refuse a non-loopback address before anything is opened
    if root is not None and tenants_file is not None:
        raise click.UsageError("give ROOT (one store) or --tenants (many stores), not both")
    if root is None and tenants_file is None and runs_dir is None:
        raise click.UsageError("give ROOT, --tenants FILE or --runs DIR")
    if tenants_file is not None and runs_dir is not None:
        raise click.UsageError("--runs shows the operator's run folders; serve them without --tenants")
    found: list[Source] = []
    registry = None
    if root is not None:
        pair = None
        if bench is not None:
            b, sep, s = bench.partition(":")
            if not sep or not b or not s:
                raise click.UsageError("--bench takes BENCHMARK:SAMPLE, e.g. locomo:conv-50")
            pair = (b, s)
        path = Path(root).resolve()
        found.append(Source("store", path.name or str(path), path, pair))
    if tenants_file is not None:
        from memdir.mcp.tenants_live import LiveTenants

        registry = LiveTenants.watch(tenants_file)  # a token revoked later is refused within a second
        if not registry.current.tokens:
            raise MemdirError(f"{tenants_file} holds no tokens; add one with 'memdir token add'")
    sources = Sources(found)
    if registry is not None:
        sources.bind_tenants(registry.current.tokens)  # and the tenants added later (ui/pages.py)
    runs = Path(runs_dir).resolve() if runs_dir is not None else None
    what = root or (f"{len(sources.by_id)} tenant(s)" if tenants_file else runs_dir)

    def announce(url: str) -> None:
        click.echo(f"memdir ui: serving {what} read-only at {url}", err=True)
        click.echo(url)

    serve(sources, host=host, port=port, runs=runs, tenants=registry, announce=announce)


def register(cli: click.Group) -> None:
    cli.add_command(ui_cmd)
