"""A revoked token is refused by running servers, without a restart (issue 46, item 3).

`memdir token revoke` rewrites the tenants file; `serve --tenants` and `ui --tenants`, running
in their own processes, notice the file changed (mcp/tenants_live.py) and refuse the token: 401
for its requests and its MCP session, its open event stream ended, its UI sign-ins forgotten.
Another tenant's session, event stream and sign-in go on as they were. How fast is measured by
benchmarks/reliability/revocation.py; here the wait is only a hang guard.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from tests.waits import read_line_with, wait_until

from memdir.mcp import tenants
from serve_helpers import ACCEPT, serve_process, session, tool_call
from ui_helpers import build_store

GUARD_S = 15.0  # a hang guard: the servers take well under a second (see the benchmark)


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("revoke")
    build_store(base / "alpha").close()
    build_store(base / "beta").close()
    return base / "alpha", base / "beta"


def _revoke(file: Path, token: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "token", "revoke", "--tenants", str(file), token],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


class Stream:
    """An MCP event stream (GET /mcp) held open in a thread; `ended` is set when the server ends it."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.ended = threading.Event()
        self.opened = threading.Event()
        self.status = 0
        self._thread = threading.Thread(target=self._hold, args=(url, headers), daemon=True)
        self._thread.start()
        assert self.opened.wait(GUARD_S), "the event stream did not open"

    def _hold(self, url: str, headers: dict[str, str]) -> None:
        try:
            get = {**headers, "Accept": "text/event-stream"}
            with httpx2.stream("GET", url, headers=get, timeout=httpx2.Timeout(30, read=None)) as r:
                self.status = r.status_code
                self.opened.set()
                for _ in r.iter_bytes():
                    pass
        except httpx2.HTTPError:
            pass
        finally:
            self.opened.set()
            self.ended.set()


def _calls(url: str, headers: dict[str, str]) -> int:
    r = httpx2.post(url, json=tool_call("view", {"path": "/memories"}), headers=headers, timeout=30)
    return r.status_code


def test_a_running_tenants_server_refuses_a_revoked_token(roots: tuple[Path, Path], tmp_path: Path) -> None:
    alpha, beta = roots
    file = tmp_path / "tenants.json"
    gone = tenants.add_token(file, str(alpha), "search", tenant="alpha")
    kept = tenants.add_token(file, str(beta), "search", tenant="beta")
    with serve_process(["--tenants", str(file)]) as (_proc, url):
        a = session(url, {"Authorization": f"Bearer {gone}"})
        b = session(url, {"Authorization": f"Bearer {kept}"})
        a_stream, b_stream = Stream(url, a), Stream(url, b)
        assert a_stream.status == 200 and b_stream.status == 200
        assert _calls(url, a) == 200 and _calls(url, b) == 200
        _revoke(file, gone)
        wait_until(lambda: _calls(url, a) == 401, "the revoked token's session to get 401", GUARD_S)
        assert a_stream.ended.wait(GUARD_S), "the revoked token's event stream was left open"
        fresh = httpx2.post(url, json=tool_call("view", {"path": "/memories"}), headers={"Accept": ACCEPT,
                            "Authorization": f"Bearer {gone}"}, timeout=30)  # fmt: skip
        assert fresh.status_code == 401
        # The other tenant's session is the one it opened before, and its stream still open.
        assert _calls(url, b) == 200
        assert not b_stream.ended.is_set()


@pytest.fixture
def ui_server(roots: tuple[Path, Path], tmp_path: Path) -> Iterator[tuple[str, Path, str, str]]:
    alpha, beta = roots
    file = tmp_path / "tenants.json"
    gone = tenants.add_token(file, str(alpha), "search", tenant="alpha")
    kept = tenants.add_token(file, str(beta), "search", tenant="beta")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", "--tenants", str(file), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = read_line_with(proc.stdout, b"http://127.0.0.1:", "the UI's URL").decode().split()[-1]
        yield url, file, gone, kept
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _signed_in(url: str, token: str) -> httpx2.Client:
    client = httpx2.Client(base_url=url, timeout=30, follow_redirects=False)
    form = {"content-type": "application/x-www-form-urlencoded"}
    r = client.post("/login", content=f"token={token}".encode(), headers=form)
    assert r.status_code == 303, r.text
    return client


def test_a_running_ui_refuses_a_revoked_token(ui_server: tuple[str, Path, str, str]) -> None:
    url, file, gone, kept = ui_server
    a, b = _signed_in(url, gone), _signed_in(url, kept)
    assert a.get("/").status_code == 307 and b.get("/").status_code == 307  # to their one store
    assert b.get("/s/beta/tree").status_code == 200
    _revoke(file, gone)
    wait_until(lambda: a.get("/").status_code == 303, "the revoked sign-in to be sent to /login", GUARD_S)
    assert a.get("/").headers["location"] == "/login"
    assert a.get("/s/alpha/tree").status_code == 303
    assert httpx2.get(url + "s/alpha/tree", headers={"Authorization": f"Bearer {gone}"}).status_code == 401
    assert b.get("/s/beta/tree").status_code == 200  # the other tenant's sign-in still opens its store


def test_a_broken_tenants_file_keeps_the_tokens_read_before(
    roots: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand edit that breaks the file does not lock every tenant out; the next good write counts."""
    from memdir.mcp.tenants_live import LiveTenants

    alpha, beta = roots
    file = tmp_path / "tenants.json"
    a = tenants.add_token(file, str(alpha), "search", tenant="alpha")
    b = tenants.add_token(file, str(beta), "search", tenant="beta")
    now = [0.0]
    live = LiveTenants.watch(file, every=0.2, clock=lambda: now[0])
    good = file.read_bytes()
    file.write_bytes(good[:-20])  # cut short, in place
    now[0] += 1
    assert live.refresh() == set() and live.lookup(a) is not None and live.lookup(b) is not None
    assert "cannot be used" in capsys.readouterr().err
    file.write_bytes(good)
    gone = tenants.revoke(file, a)
    assert live.refresh() == set()  # within `every` of the last check: not looked at
    now[0] += 1
    assert live.refresh() == {gone.token_sha256}
    assert live.lookup(a) is None and live.lookup(b) is not None
