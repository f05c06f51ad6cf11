"""The UI's sign-in under `--tenants`: the cookie is a UI-only session id, never the bearer
token (cookies are not port-scoped, so a browser sends it to every server on 127.0.0.1), and
a sign-in posted from another origin is refused (login CSRF)."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memdir.mcp import tenants
from memdir.mcp.tenant_app import tenants_app
from memdir.ui.app import build_app
from memdir.ui.pages import COOKIE
from memdir.ui.sources import Source, Sources
from serve_helpers import ACCEPT, INITIALIZE
from ui_helpers import build_store

LOCAL = "http://127.0.0.1:8765"
FORM = {"content-type": "application/x-www-form-urlencoded"}


@pytest.fixture
def signed(tmp_path: Path) -> tuple[tenants.Tenants, str]:
    root = tmp_path / "a"
    build_store(root)
    file = tmp_path / "tenants.json"
    token = tenants.add_token(file, str(root), "manage", tenant="alpha")
    return tenants.load(file), token


def ui(registry: tenants.Tenants) -> TestClient:
    sources = Sources(
        [Source(t.tenant, t.tenant, Path(t.real_root), tenant=t.tenant) for t in registry.tokens]
    )
    return TestClient(build_app(sources, tenants=registry), base_url=LOCAL)


def test_the_cookie_is_a_session_id_that_opens_no_mcp_server(signed: tuple[tenants.Tenants, str]) -> None:
    registry, token = signed
    c = ui(registry)
    r = c.post("/login", content=f"token={token}".encode(), headers=FORM, follow_redirects=False)
    assert r.status_code == 303
    header = r.headers["set-cookie"].lower()
    assert "httponly" in header and "samesite=strict" in header
    session = c.cookies[COOKIE]
    assert session and token not in session and session not in token
    assert "alice" in c.get("/s/alpha/children", params={"path": "/memories/people"}).text  # it signs in
    # The browser would send the cookie to a tenant MCP server on another port: it opens nothing there.
    with TestClient(tenants_app(registry), base_url="http://127.0.0.1:9000") as mcp:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        as_bearer = mcp.post(
            "/mcp", json=INITIALIZE, headers={**headers, "Authorization": f"Bearer {session}"}
        )
        assert as_bearer.status_code == 401
        mcp.cookies.set(COOKIE, session)  # as the browser would send it
        with_cookie = mcp.post("/mcp", json=INITIALIZE, headers=headers)
        assert with_cookie.status_code == 401
        real = mcp.post("/mcp", json=INITIALIZE, headers={**headers, "Authorization": f"Bearer {token}"})
        assert real.status_code == 200  # the check above can fail: the token itself does open it
    # Nor is the session id a token in the UI's own header path.
    assert c.get("/s/alpha/tree", headers={"authorization": f"Bearer {session}"}).status_code == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://127.0.0.1:9999"},  # another port on loopback: another origin
        {"origin": "http://evil.example"},
        {"origin": "null"},  # an opaque origin (a sandboxed frame, a data: page)
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},  # another port of the same host
        {"referer": "http://127.0.0.1:9999/attack.html"},
    ],
)
def test_a_cross_origin_sign_in_is_refused(
    signed: tuple[tenants.Tenants, str], headers: dict[str, str]
) -> None:
    registry, token = signed
    c = ui(registry)
    r = c.post(
        "/login", content=f"token={token}".encode(), headers={**FORM, **headers}, follow_redirects=False
    )
    assert r.status_code == 403 and "set-cookie" not in r.headers
    assert "same page" in r.text  # says what to do


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": LOCAL},
        {"sec-fetch-site": "same-origin", "referer": LOCAL + "/login"},
        {"referer": LOCAL + "/login"},
        {},  # a program, not a browser: nothing to forge
    ],
)
def test_a_same_origin_sign_in_is_accepted(
    signed: tuple[tenants.Tenants, str], headers: dict[str, str]
) -> None:
    registry, token = signed
    r = ui(registry).post(
        "/login", content=f"token={token}".encode(), headers={**FORM, **headers}, follow_redirects=False
    )
    assert r.status_code == 303 and COOKIE in r.headers["set-cookie"]


def test_sessions_are_bounded_and_expire() -> None:
    from memdir.ui.sessions import Sessions

    now = [0.0]
    sessions = Sessions(limit=3, ttl_s=60.0, clock=lambda: now[0])
    ids = [sessions.open(f"t{i}") for i in range(4)]
    assert len(set(ids)) == 4 and all(len(i) >= 40 for i in ids)
    assert sessions.tenant(ids[0]) is None  # the oldest went past the bound
    assert [sessions.tenant(i) for i in ids[1:]] == ["t1", "t2", "t3"]
    assert sessions.tenant("forged") is None
    now[0] = 61.0
    assert sessions.tenant(ids[3]) is None and len(sessions) == 0  # expired, and forgotten
