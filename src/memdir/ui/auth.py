"""Tenants: which stores a request may see, by the bearer token it carries.

The token file and its hashing are the MCP server's (`mcp/tenants.py`): a token is looked up
by its SHA-256, in constant time. A browser cannot attach an `Authorization` header to a link,
so the sign-in page takes the token once and keeps it in a cookie that scripts cannot read and
no other site can send (`HttpOnly`, `SameSite=Strict`); a program may send the header instead.
Without a tenants file every store is visible (the server is on loopback only).
"""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from memdir.ui.pages import COOKIE, View, page, state, tenant_of, visible_sources

OPEN_PATHS = ("/login",)


def required(view: View) -> View:
    """`view` behind the tenant check: no valid token sends a page to sign in (401 for a
    program that sent a header); a store of another tenant, or the runs, is not found."""

    def run(request: Request) -> Response:
        ui = state(request)
        if ui.tenants is None or request.url.path in OPEN_PATHS:
            return view(request)
        tenant = tenant_of(request)
        if tenant is None:
            if "authorization" in request.headers:
                return page(
                    request,
                    "error.html",
                    401,
                    title="unknown token",
                    message="the bearer token opens no tenant here",
                )
            return RedirectResponse("/login", status_code=303)
        sid = request.path_params.get("sid")
        mine = {s.sid for s in visible_sources(request)}
        if (sid is not None and sid not in mine) or request.url.path.startswith(("/run", "/turn")):
            return page(request, "error.html", 404, title="not found", message="no such page for this token")
        return view(request)

    run.__name__ = view.__name__
    return run


def login_page(request: Request) -> Response:
    return page(request, "login.html", title="sign in")


async def login(request: Request) -> Response:
    """Check a token and keep it in the cookie; nothing else is written anywhere."""
    ui = state(request)
    if ui.tenants is None:
        return RedirectResponse("/", status_code=303)
    body = (await request.body())[:4096].decode("utf-8", "replace")
    token = (parse_qs(body).get("token") or [""])[0].strip()
    if not token or ui.tenants.lookup(token) is None:
        return page(request, "login.html", 401, title="sign in", message="that token opens no tenant here")
    resp = RedirectResponse("/", status_code=303)
    resp.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
    return resp
