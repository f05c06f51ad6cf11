"""What every view shares: the server's state, a page from a template, and the error pages a
memdir error becomes (a refused path 400, a missing one 404), so no view handles them itself."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from memdir.errors import MemdirError, NotFoundError, PathError
from memdir.mcp.tenants_live import LiveTenants
from memdir.tools.text import human_size
from memdir.ui.scratch import Scratch
from memdir.ui.sessions import Sessions
from memdir.ui.sources import Source, Sources

COOKIE = "memdir_ui_session"  # a session id (sessions.py), never a bearer token


@dataclass
class UIState:
    """What every view reads: the stores, the runs folder, the tenants, the templates."""

    sources: Sources
    templates: Jinja2Templates
    runs: Path | None = None
    tenants: LiveTenants | None = None  # the tenants file, watched: a revoked token is refused
    scratch: Scratch | None = None  # the server's private folder (growth plots, past snapshots)
    cache: dict[Any, Any] = field(default_factory=dict)
    sessions: Sessions = field(default_factory=Sessions)  # the browsers signed in (auth.login)
    bound: int = 0  # the reload of the tenants file the sources follow (Sources.bind_tenants)
    missing: str | None = None  # why the run folders under `runs` are not shown (app.build_app)


def state(request: Request) -> UIState:
    ui: UIState = request.app.state.ui
    return ui


def token_of(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def tenant_of(request: Request) -> str | None:
    """The tenant the request opens, or None: a program's bearer token (its header), else a
    browser's sign-in (the session id in its cookie; the token itself never is one)."""
    ui = state(request)
    if ui.tenants is None:
        return None
    token = token_of(request)
    if token is not None:
        entry = ui.tenants.lookup(token)
        return None if entry is None else entry.tenant
    sid = request.cookies.get(COOKIE)
    found = ui.sessions.signed(sid) if sid else None
    if found is None:
        return None
    tenant, digest = found
    entry = ui.tenants.entry(digest)
    if entry is None or entry.tenant != tenant:  # its token was revoked: so are its sign-ins
        ui.sessions.forget(digest)
        return None
    return tenant


def visible_sources(request: Request) -> list[Source]:
    """Every store without a tenants file; with one, the stores of the request's tenant."""
    ui = state(request)
    every = list(ui.sources.by_id.values())
    if ui.tenants is None:
        return every
    tenant = tenant_of(request)  # the tenants file read again first, if it changed
    if ui.tenants.reloads != ui.bound:  # a tenant added, or its name bound to another root
        ui.bound = ui.tenants.reloads
        ui.sources.bind_tenants(ui.tenants.current.tokens)
        every = list(ui.sources.by_id.values())
    return [s for s in every if tenant is not None and s.tenant == tenant]


def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    ui = state(request)
    context.setdefault("visible", visible_sources(request))
    context.setdefault("has_runs", ui.runs is not None and ui.tenants is None and ui.missing is None)
    context.setdefault("missing", ui.missing)
    return ui.templates.TemplateResponse(request, name, context, status_code=status)


View = Callable[[Request], Response]


def guarded(view: View) -> View:
    """A view whose memdir errors become an error page (run in Starlette's worker threads)."""

    def run(request: Request) -> Response:
        try:
            return view(request)
        except PathError as exc:
            return page(request, "error.html", 400, title="refused", message=str(exc))
        except NotFoundError as exc:
            return page(request, "error.html", 404, title="not found", message=str(exc))
        except MemdirError as exc:
            return page(request, "error.html", 400, title="cannot show this", message=str(exc))

    run.__name__ = view.__name__
    run.__doc__ = view.__doc__
    return run


def templates(folders: Sequence[tuple[str, str]] = ()) -> Jinja2Templates:
    """The UI's templates, then those of the (package, folder) pairs plugins add."""
    own = ("memdir.ui", "templates")
    loaders = [jinja2.PackageLoader(package, folder) for package, folder in (own, *folders)]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,  # every value is escaped unless a view marks it as built HTML
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["size"] = human_size
    env.filters["utc"] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    return Jinja2Templates(env=env)
