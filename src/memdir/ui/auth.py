"""Tenants: which stores a request may see, by the bearer token it carries.

The token file and its hashing are the MCP server's (`mcp/tenants.py`): a token is looked up
by its SHA-256, in constant time. A browser cannot attach an `Authorization` header to a link,
so the sign-in page takes the token once and answers with a cookie holding a random session
id (sessions.py), never the token: a browser sends a 127.0.0.1 cookie to every port of
127.0.0.1, a tenant MCP server's included. The cookie is one scripts cannot read and other
sites cannot send (`HttpOnly`, `SameSite=Strict`), and a sign-in posted from another origin
(another port counts) is refused, so no page can sign a browser in as someone else (login
CSRF). A program may send the header instead. Without a tenants file every store is visible
(the server is on loopback only).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

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
    """Check a token and answer with a new session id in the cookie; the token is kept nowhere."""
    ui = state(request)
    if ui.tenants is None:
        return RedirectResponse("/", status_code=303)
    foreign = cross_origin(request)
    if foreign is not None:
        message = (
            f"a sign-in must be sent from this UI's own page, not another origin ({foreign}); "
            "open /login on this server and sign in on that same page"
        )
        return page(request, "login.html", 403, title="sign in", message=message)
    body = (await request.body())[:4096].decode("utf-8", "replace")
    token = (parse_qs(body).get("token") or [""])[0].strip()
    entry = ui.tenants.lookup(token) if token else None
    if entry is None:
        return page(request, "login.html", 401, title="sign in", message="that token opens no tenant here")
    resp = RedirectResponse("/", status_code=303)
    sid = ui.sessions.open(entry.tenant, entry.token_sha256)
    resp.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/")
    return resp


def cross_origin(request: Request) -> str | None:
    """Why a POST came from another origin, or None when it came from this one. Browsers say so
    in `Origin`, and in `Sec-Fetch-Site`, which no page can set; `Referer` is the last resort. A
    request with none of them is a program's, not a browser's: there is no victim to forge for."""
    own = _origin(f"{request.url.scheme}://{request.headers.get('host', '')}")
    origin = request.headers.get("origin")
    if origin is not None and own is not None and _origin(origin) == own:
        return None
    site = request.headers.get("sec-fetch-site")
    if site is not None:  # the browser's own word (an opaque `Origin: null` falls back to it)
        return None if site in ("same-origin", "none") else f"Sec-Fetch-Site: {site[:40]}"
    if origin is not None:
        return f"Origin: {origin[:80]}"
    referer = request.headers.get("referer")
    if referer is not None and (own is None or _origin(referer) != own):
        return f"Referer: {referer[:80]}"
    return None


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a URL, the default port filled in; None when it names none."""
    try:
        parts = urlsplit(url.strip().lower())
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None
    if not parts.hostname or port is None:
        return None
    return parts.scheme, parts.hostname, port
