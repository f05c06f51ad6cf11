"""Tenants forget within their own store: over `memdir serve --tenants`, a forget by one
tenant's token leaves another tenant's files and journal as they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

from memdir.mcp import tenants
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.store.traces import traces
from memdir.tools.wiring import open_store
from serve_helpers import ACCEPT, INITIALIZE, serve_process, tool_call

SECRET = "ZQXJ-4417-BLUE-HERON"
NOTE = f"---\nname: alice\ndescription: notes on alice\n---\n# alice\n- door code {SECRET}\n"


def call(url: str, token: str, name: str, args: dict[str, Any]) -> str:
    with httpx2.Client(timeout=120, headers={"Authorization": f"Bearer {token}"}) as http:
        r = http.post(url, json=INITIALIZE, headers={"Accept": ACCEPT})
        assert r.status_code == 200, r.text
        headers = {"Accept": ACCEPT, "Mcp-Session-Id": r.headers["mcp-session-id"]}
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        r = http.post(url, json=tool_call(name, args), headers=headers)
        assert r.status_code == 200, r.text
    body = next((line[6:] for line in r.text.splitlines() if line.startswith("data: ")), r.text)
    return "".join(b.get("text", "") for b in json.loads(body)["result"]["content"])


def holds(root: Path) -> bool:
    return bool(traces(root, [SECRET.encode()]))


def test_a_tenant_forgets_in_its_own_store_only(tmp_path: Path) -> None:
    file = tmp_path / "tenants.json"
    roots = [tmp_path / "a", tmp_path / "b"]
    tokens = []
    for root in roots:
        spec.init(open_store(root, create=True))
        tokens.append(tenants.add_token(file, str(root), "manage"))
    with serve_process(["--tenants", str(file)]) as (_proc, url):
        for token in tokens:
            assert "Created" in call(url, token, "create", {"path": "/memories/alice.md", "file_text": NOTE})
        b_head = Journal(roots[1]).head()
        said = call(url, tokens[0], "forget", {"text": SECRET, "reason": "tenant a asked"})
        assert "Forgotten" in said
    assert not holds(roots[0])
    assert holds(roots[1]) and Journal(roots[1]).head() == b_head
