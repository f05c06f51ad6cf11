"""The DNS-rebinding guard holds on every loopback address (issue 46, item 4).

A server on loopback takes requests with no token (`serve ROOT`) or trusts its origin (`ui`), so
a request whose Host names another site (a DNS name rebound to this machine) is refused. Which
addresses count as loopback is one rule (`mcp/loopback.py`) for both what may listen without a
token and where the Host/Origin check is on: 127.0.0.2 and `0:0:0:0:0:0:0:1` are loopback too,
and a server bound there refused nothing before.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from tests.waits import read_line_with

from memdir.mcp import tenants
from serve_helpers import ACCEPT, INITIALIZE, serve_process
from ui_helpers import build_store

ALIASES = ["127.0.0.2", "0:0:0:0:0:0:0:1"]
JSON = {"Accept": ACCEPT, "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("guard") / "mem"
    build_store(where).close()
    return where


@pytest.mark.parametrize("host", ALIASES)
def test_a_rebound_host_is_refused_on_every_loopback_address(root: Path, host: str) -> None:
    with serve_process([str(root)], host=host) as (_proc, url):
        evil = httpx2.post(url, json=INITIALIZE, headers={**JSON, "Host": "evil.example"}, timeout=30)
        assert evil.status_code == 421, evil.text
        foreign = {**JSON, "Origin": "http://evil.example"}
        from_evil = httpx2.post(url, json=INITIALIZE, headers=foreign, timeout=30)
        assert from_evil.status_code == 403, from_evil.text
        own = httpx2.post(url, json=INITIALIZE, headers=JSON, timeout=30)  # Host: the address it is on
        assert own.status_code == 200, own.text


def test_the_tenants_server_guards_a_loopback_alias(root: Path, tmp_path: Path) -> None:
    file = tmp_path / "tenants.json"
    token = tenants.add_token(file, str(root), "search", tenant="alpha")
    auth = {**JSON, "Authorization": f"Bearer {token}"}
    with serve_process(["--tenants", str(file)], host="127.0.0.2") as (_proc, url):
        evil = httpx2.post(url, json=INITIALIZE, headers={**auth, "Host": "evil.example"}, timeout=30)
        assert evil.status_code == 421, evil.text
        assert httpx2.post(url, json=INITIALIZE, headers=auth, timeout=30).status_code == 200


def test_the_ui_on_a_loopback_alias_serves_its_own_host_and_refuses_another(root: Path) -> None:
    """The UI refused every Host but four fixed names: on 127.0.0.2 it refused its own address
    too. It now takes a Host that names loopback, by the same rule, and no other."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", str(root), "--host", "127.0.0.2", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = read_line_with(proc.stdout, b"http://127.0.0.2:", "the UI's URL").decode().split()[-1]
        own = httpx2.get(url + "s/store/tree", timeout=30)
        assert own.status_code == 200, own.text
        evil = httpx2.get(url + "s/store/tree", headers={"Host": "evil.example"}, timeout=30)
        assert evil.status_code == 400, evil.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
