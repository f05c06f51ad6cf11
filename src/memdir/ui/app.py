"""The Starlette application: routes, the templates, and the guards every response passes.

Guards: only GET and HEAD reach a page (the one POST, the tenants' sign-in, sets a cookie and
touches no store); the Host header must name loopback (`mcp/loopback.py`, the same rule as for
where it may listen), so a page on another site cannot reach this server through a rebound DNS
name; every response forbids loading anything from another origin (Content-Security-Policy),
so a store file cannot make the page fetch a remote asset even if it got past the escaping. A
memdir error is a page saying what to do, with the status the problem deserves (a refused path
400, a missing one 404).

Pages a plugin adds (`memdir/plugins.py`, e.g. a run folder's pages) pass the same guards; when
none serves the run folders `--runs` names, the server logs why and the start page says so.
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir import plugins
from memdir.mcp.loopback import RebindingGuard
from memdir.mcp.tenants import Tenants
from memdir.mcp.tenants_live import LiveTenants
from memdir.ui import auth, views_health, views_history, views_store
from memdir.ui.pages import UIState, View, guarded, templates
from memdir.ui.scratch import Scratch
from memdir.ui.sources import Sources

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer made a browser send its sign-in as `Origin: null`
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
RUN_PAGES = "/runs"  # the plugin route that shows the run folders under --runs
log = logging.getLogger(__name__)


class SecurityHeaders:
    """Adds the headers above to every response, static files and errors included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def add(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + HEADERS
            await send(message)

        await self.app(scope, receive, add)


def routes(added: plugins.UIPages | None = None) -> list[BaseRoute]:
    """The UI's own pages, then those `added` by plugins, every one behind the same guards."""
    get = ["GET", "HEAD"]
    table: list[tuple[str, View]] = [
        ("/", views_store.index),
        ("/s/{sid}/tree", views_store.tree),
        ("/s/{sid}/children", views_store.children),
        ("/s/{sid}/file", views_store.file),
        ("/s/{sid}/search", views_store.search),
        ("/s/{sid}/health", views_health.health),
        ("/s/{sid}/history", views_history.history),
        ("/s/{sid}/step/{step}", views_history.step),
        ("/s/{sid}/step/{step}/tree", views_history.step_tree),
        ("/s/{sid}/step/{step}/file", views_history.step_file),
        ("/s/{sid}/facts", views_history.facts),
        ("/s/{sid}/at", views_history.at_commit),
        ("/s/{sid}/growth/{name}", views_history.growth_plot),
        ("/login", auth.login_page),
        *(added.routes if added is not None else ()),
    ]
    out: list[BaseRoute] = [Route(p, auth.required(guarded(v)), methods=get) for p, v in table]
    out.append(Route("/login", auth.login, methods=["POST"]))
    out.append(Mount("/static", StaticFiles(packages=[("memdir.ui", "static")]), name="static"))
    return out


def build_app(
    sources: Sources,
    *,
    runs: Path | None = None,
    tenants: Tenants | LiveTenants | None = None,
    scratch: Path | None = None,
) -> Starlette:
    """The UI over `sources` (and the run folders under `runs`); `tenants` guards each store
    behind its tenant's bearer token."""
    added = plugins.ui_pages()
    missing = None
    if runs is not None and not any(path == RUN_PAGES for path, _ in added.routes):
        missing = "the run pages are not installed (pip install 'memdir[study]'), so --runs shows nothing"
        why = "; ".join(f"plugin {p!r}: {e}" for p, e in plugins.failures().items())
        log.warning("memdir ui: %s%s", missing, f" ({why})" if why else "")
    app = Starlette(
        routes=routes(added),
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(RebindingGuard, host_status=400, check_origin=False),
        ],
    )
    if scratch is None:  # the server's private folder: past snapshots and growth plots
        scratch = Path(tempfile.mkdtemp(prefix="memdir-ui-"))
        atexit.register(shutil.rmtree, scratch, True)  # `serve` also removes it on SIGTERM
    if isinstance(tenants, Tenants):  # a set given in code: never changes
        tenants = LiveTenants(tenants)
    app.state.ui = UIState(sources, templates(added.template_folders), runs, tenants, Scratch(scratch))
    app.state.ui.missing = missing
    return app
