"""The tenants' MCP server on a local Ray cluster, through Ray Serve's proxy, with the real MCP
client: tenants routed to their own stores, tokens and the rebinding guard enforced, and a write
acknowledged before its replica is killed read back from the replica that replaces it."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import mcp
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memdir.mcp import tenants
from memdir.mcp.http_limits import MAX_BODY_BYTES
from memdir.store import spec
from memdir.tools.wiring import open_store, release_store
from serve_helpers import ACCEPT, INITIALIZE, free_port

ray = pytest.importorskip("ray")
serve = pytest.importorskip("ray.serve")

pytestmark = pytest.mark.slow  # a Ray cluster starts in about 15 s here


@dataclass
class World:
    url: str
    acme: str
    acme_search: str
    globex: str
    initech: str  # a tenant whose remote is gone
    remotes: dict[str, str]


def _store(base: Path, name: str, secret: str) -> Path:
    from memdir.sync import sync

    root = base / name
    store = open_store(root, create=True)
    spec.init(store)
    with store.step("seed"):
        store.create(
            "/memories/people/owner.md",
            f"---\nname: owner\ndescription: who owns {secret}\n---\n- owner | code: {secret} [S1T1]\n",
        )
    release_store(store)
    remote = base / f"{name}.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    sync(root, str(remote))  # the tenant's remote, remembered by its root
    return root


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from memdir.serving.ray_app import APP, application, deploy

    base = tmp_path_factory.mktemp("ray")
    acme, globex = _store(base, "acme", "ALPHASECRET"), _store(base, "globex", "BRAVOSECRET")
    initech = _store(base, "initech", "CHARLIESECRET")
    tf = base / "tenants.json"
    tokens = (
        tenants.add_token(tf, str(acme), "manage"),
        tenants.add_token(tf, str(acme), "search"),
        tenants.add_token(tf, str(globex), "manage"),
        tenants.add_token(tf, str(initech), "manage"),
    )
    port = free_port()
    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        work = base / "replicas"
        work.mkdir()
        deploy(application(str(tf), replicas=1, workdir=str(work)), "127.0.0.1", port)
        shutil.rmtree(base / "initech.git")
        remotes = {"acme": str(base / "acme.git"), "globex": str(base / "globex.git")}
        yield World(f"http://127.0.0.1:{port}/mcp", *tokens, remotes)
    finally:
        serve.delete(APP)
        ray.shutdown()  # the local cluster with it


@asynccontextmanager
async def client(w: World, token: str) -> AsyncIterator[mcp.Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with mcp.Client(streamable_http_client(w.url, http_client=http)) as c:  # type: ignore[arg-type]
        yield c


async def call(c: mcp.Client, name: str, args: dict[str, object]) -> tuple[bool, str]:
    r = await c.call_tool(name, args)
    return r.is_error, "".join(getattr(block, "text", "") for block in r.content)


def _remote_file(remote: str, path: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={remote}", "show", f"main:{path}"], capture_output=True, text=True, check=False
    )
    return done.stdout


async def test_each_tenant_reaches_its_own_store(world: World) -> None:
    async with client(world, world.acme) as a, client(world, world.globex) as b:
        err, text = await call(a, "grep", {"pattern": "SECRET", "path": "/memories"})
        assert not err and "ALPHASECRET" in text and "BRAVOSECRET" not in text
        err, text = await call(b, "view", {"path": "/memories/people/owner.md"})
        assert not err and "BRAVOSECRET" in text and "ALPHASECRET" not in text


async def test_tokens_and_rebinding_guard_hold_at_the_proxy(world: World) -> None:
    accept = {"Accept": ACCEPT}
    async with httpx2.AsyncClient(timeout=60) as http:
        nothing = await http.post(world.url, json=INITIALIZE, headers=accept)
        assert nothing.status_code == 401 and "Bearer" in nothing.headers["www-authenticate"]
        forged = await http.post(
            world.url, json=INITIALIZE, headers={**accept, "Authorization": "Bearer mdt_x"}
        )
        assert forged.status_code == 401
        auth = {**accept, "Authorization": f"Bearer {world.acme}"}
        rebound = await http.post(world.url, json=INITIALIZE, headers={**auth, "Host": "evil.example"})
        assert rebound.status_code == 421
        stream = await http.get(world.url, headers=auth)
        assert stream.status_code == 405 and stream.headers["allow"] == "POST"
        huge = await http.post(world.url, content=b" " * (MAX_BODY_BYTES + 1), headers=auth)
        assert huge.status_code == 413
        # a tenant whose remote is gone cannot be loaded: said, not a lost replica or a hang
        auth = {**accept, "Authorization": f"Bearer {world.initech}"}
        gone = await http.post(world.url, json=INITIALIZE, headers=auth)
        assert gone.status_code == 503 and gone.json()["error"] == "tenant_unavailable"
        assert "initech.git" in gone.json()["error_description"]
    async with client(world, world.acme_search) as s:
        with pytest.raises(mcp.shared.exceptions.MCPError, match="Unknown tool: create"):
            await s.call_tool("create", {"path": "/memories/x.md", "file_text": "x"})


async def test_acknowledged_write_survives_its_replica(world: World) -> None:
    note = "---\nname: moved\ndescription: where acme moved\n---\n- acme | moved to: Lisbon [S2T1]\n"
    async with client(world, world.acme) as a:
        err, text = await call(a, "create", {"path": "/memories/people/moved.md", "file_text": note})
        assert not err, text
    # acknowledged means in the tenant's remote already, not only on the replica's disk
    assert "Lisbon" in _remote_file(world.remotes["acme"], "people/moved.md")
    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
    killed = [n for n in names if n.startswith("SERVE_REPLICA::memdir#tenants#")]
    assert len(killed) == 1
    ray.kill(ray.get_actor(killed[0], namespace="serve"), no_restart=True)

    failures: list[str] = []
    with anyio.fail_after(120):  # Serve starts the replacement in seconds; the bound is a hang guard
        while True:
            try:
                async with client(world, world.acme) as a:
                    err, text = await call(a, "view", {"path": "/memories/people/moved.md"})
                break
            except Exception as exc:  # 503 while the replica's death is noticed: the client retries
                failures.append(type(exc).__name__)
                await anyio.sleep(0.5)
    assert not err and "Lisbon" in text, (text, failures)
    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
    assert killed[0] not in names and any(n.startswith("SERVE_REPLICA::memdir#tenants#") for n in names)
