"""Two tenants, three tokens, one HTTP endpoint, the real MCP client: nothing crosses tenants."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import mcp
import pytest
from click.testing import CliRunner
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.mcp import tenants
from memdir.mcp.tenant_app import tenants_app
from memdir.store import spec
from memdir.store.journal import stop_committer
from memdir.tools.wiring import open_store
from serve_helpers import ACCEPT, INITIALIZE, run_asgi, serve_process, tool_call


def _fm(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def _snap(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class World:
    url: str
    root_a: Path
    root_b: Path
    a_manage: str
    a_search: str
    b_manage: str
    tenants_file: Path


def _make_store(root: Path, secret: str) -> None:
    store = open_store(root, create=True)
    spec.init(store)
    with store.step("seed"):
        store.create("/memories/people/MEMORY.md", "# People\n")
        store.create(
            "/memories/people/owner.md",
            _fm("owner", f"who owns {secret}", f"- owner | code: {secret} [S1T1]\n"),
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("tenants")
    root_a, root_b = base / "acme", base / "globex"
    _make_store(root_a, "ALPHASECRET")
    _make_store(root_b, "BRAVOSECRET")
    tf = base / "tenants.json"
    # One token through the CLI (printed once, on stdout), two through the library.
    out = CliRunner().invoke(
        cli, ["token", "add", "--tenants", str(tf), "--root", str(root_a), "--profile", "manage"]
    )
    assert out.exit_code == 0, out.output
    a_manage = out.stdout.strip()
    a_search = tenants.add_token(tf, str(root_a), "search", label="read-only")
    b_manage = tenants.add_token(tf, str(root_b), "manage", tenant="globex")
    with run_asgi(tenants_app(tenants.load(tf))) as url:
        yield World(url + "/mcp", root_a, root_b, a_manage, a_search, b_manage, tf)


@asynccontextmanager
async def client(w: World, token: str, mode: str = "auto") -> AsyncIterator[mcp.Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with mcp.Client(streamable_http_client(w.url, http_client=http), mode=mode) as c:  # type: ignore[arg-type]
        yield c


async def call(c: mcp.Client, name: str, args: dict[str, object]) -> tuple[bool, str]:
    r = await c.call_tool(name, args)
    return r.is_error, "".join(getattr(block, "text", "") for block in r.content)


def test_tokens_stored_hashed_and_file_private(world: World) -> None:
    text = world.tenants_file.read_text()
    for tok in (world.a_manage, world.a_search, world.b_manage):
        assert tok not in text
        assert tenants.hash_token(tok) in text
    entries = json.loads(text)
    assert {(e["tenant"], e["profile"]) for e in entries} == {
        ("acme", "manage"),
        ("acme", "search"),
        ("globex", "manage"),
    }
    assert world.tenants_file.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_view_and_grep_stay_in_tenant(world: World, mode: str) -> None:
    async with client(world, world.a_manage, mode) as a, client(world, world.b_manage, mode) as b:
        err, listing = await call(a, "view", {"path": "/memories"})
        assert not err and "who owns ALPHASECRET" in listing and "BRAVOSECRET" not in listing
        err, text = await call(a, "view", {"path": "/memories/people/owner.md"})
        assert not err and "ALPHASECRET" in text and "BRAVOSECRET" not in text
        err, hits = await call(a, "grep", {"pattern": "BRAVO", "path": "/memories"})
        assert not err and "No lines match" in hits and "owner.md" not in hits
        err, hits = await call(b, "grep", {"pattern": "SECRET", "path": "/memories"})
        assert not err and "BRAVOSECRET" in hits and "ALPHASECRET" not in hits
        # Every spelling that tries to leave the root is refused, not resolved.
        for path in (
            "/memories/../globex/people/owner.md",
            "/memories/%2e%2e/globex",
            str(world.root_b / "people"),
        ):
            err, text = await call(a, "view", {"path": path})
            assert err and "BRAVOSECRET" not in text


async def test_rename_targets_stay_in_tenant(world: World) -> None:
    before_b = _snap(world.root_b)
    async with client(world, world.a_manage) as a:
        err, _ = await call(
            a, "create", {"path": "/memories/notes/move-me.md", "file_text": _fm("move-me", "m", "x\n")}
        )
        assert not err
        # A destination that exists in tenant B's store is free in A's: the move lands in A.
        err, text = await call(
            a, "rename", {"old_path": "/memories/notes/move-me.md", "new_path": "/memories/people/owner2.md"}
        )
        assert not err, text
        for target in ("/memories/../globex/stolen.md", "/memories/people/../../globex/x.md", "/globex/x.md"):
            err, text = await call(
                a, "rename", {"old_path": "/memories/people/owner2.md", "new_path": target}
            )
            assert err, target
    assert (world.root_a / "people" / "owner2.md").exists()
    assert _snap(world.root_b) == before_b


async def test_read_only_token_cannot_write(world: World) -> None:
    stop_committer()  # earlier tests' steps landed first: only this test's calls may change a byte
    before = _snap(world.root_a)
    async with client(world, world.a_search) as s:
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == {"view", "grep", "toc", "section_read"}
        for name, args in [
            ("create", {"path": "/memories/x.md", "file_text": _fm("x", "x", "")}),
            (
                "str_replace",
                {"path": "/memories/people/owner.md", "old_str": "ALPHASECRET", "new_str": "gone"},
            ),
            ("delete", {"path": "/memories/people"}),
            ("rename", {"old_path": "/memories/people", "new_path": "/memories/p2"}),
        ]:
            with pytest.raises(MCPError) as refused:  # not listed: the spec's -32602 (docs/serving.md)
                await s.call_tool(name, args)
            assert refused.value.error.code == INVALID_PARAMS
            assert refused.value.error.message.startswith(f"Unknown tool: {name} (the 'search' profile")
        err, text = await call(s, "view", {"path": "/memories/people/owner.md"})
        assert not err and "ALPHASECRET" in text
    assert _snap(world.root_a) == before


@pytest.mark.skipif(
    importlib.util.find_spec("memdir.tools.search") is None, reason="memdir.tools.search not built here"
)
async def test_bm25_search_stays_in_tenant(world: World, tmp_path: Path) -> None:
    tf = tmp_path / "t.json"
    ta = tenants.add_token(tf, str(world.root_a), "search-bm25")
    tb = tenants.add_token(tf, str(world.root_b), "search-bm25")
    with run_asgi(tenants_app(tenants.load(tf))) as url:
        w = World(url + "/mcp", world.root_a, world.root_b, ta, ta, tb, tf)
        async with client(w, ta) as a, client(w, tb) as b:
            _, hits = await call(a, "bm25_full_search", {"query": "BRAVOSECRET"})
            assert "owner.md" not in hits
            _, hits = await call(b, "bm25_full_search", {"query": "BRAVOSECRET owner"})
            assert "BRAVOSECRET" in hits and "ALPHASECRET" not in hits


def test_missing_or_bad_token_gets_401(world: World) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in (
        {},
        {"Authorization": "Bearer nope"},
        {"Authorization": f"Basic {world.a_manage}"},
        {"Authorization": f"Bearer {world.a_manage}x"},
    ):
        r = httpx2.post(world.url, json=listing, headers={"Accept": ACCEPT, **headers})
        assert r.status_code == 401
        assert r.headers["www-authenticate"].startswith("Bearer ")
        assert "SECRET" not in r.text


def test_session_id_does_not_cross_tokens(world: World) -> None:
    """A session opened with A's token is unknown to B's: replaying its id with B's token fails."""
    hdr = {"Accept": ACCEPT, "Content-Type": "application/json"}
    r = httpx2.post(world.url, json=INITIALIZE, headers={**hdr, "Authorization": f"Bearer {world.a_manage}"})
    assert r.status_code == 200
    sid = r.headers["mcp-session-id"]
    call_a = tool_call("view", {"path": "/memories/people/owner.md"})
    for token in (world.b_manage, world.a_search):
        r = httpx2.post(
            world.url,
            json=call_a,
            headers={
                **hdr,
                "Authorization": f"Bearer {token}",
                "mcp-session-id": sid,
                "mcp-protocol-version": "2025-06-18",
            },
        )
        assert r.status_code in (400, 404), r.text
        assert "ALPHASECRET" not in r.text


def test_nested_or_shared_roots_are_refused(tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    tf = tmp_path / "t.json"
    tenants.add_token(tf, str(outer), "manage", tenant="one")
    with pytest.raises(MemdirError, match="lies inside"):
        tenants.add_token(tf, str(inner), "manage", tenant="two")
    with pytest.raises(MemdirError, match="is the same as"):
        tenants.add_token(tf, str(outer), "search", tenant="three")
    with pytest.raises(MemdirError, match="two roots"):
        tenants.add_token(tf, str(tmp_path), "manage", tenant="one")
    assert len(tenants.load(tf).tokens) == 1  # nothing half-written


def test_serve_cli_needs_one_source(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["serve"])
    assert r.exit_code != 0 and "exactly one of ROOT" in r.output
    tf = tmp_path / "t.json"
    tenants.add_token(tf, str(tmp_path), "manage")
    r = CliRunner().invoke(cli, ["serve", "--tenants", str(tf)])
    assert r.exit_code != 0 and "--http" in r.output


@pytest.mark.slow
async def test_serve_cli_process_with_guards(world: World, tmp_path: Path) -> None:
    """`memdir serve --tenants` as a real process: tokens route, guards refuse, facts are kept."""
    tf = tmp_path / "t.json"
    manage = tenants.add_token(tf, str(world.root_b), "manage")
    reorg = tenants.add_token(tf, str(world.root_b), "manage", reorganize=True)
    with serve_process(["--tenants", str(tf), "--fanout-cap", "3", "--preserve-facts"]) as (_, url):
        assert httpx2.post(url, json={}).status_code == 401  # no token: refused
        w = World(url, world.root_a, world.root_b, manage, manage, reorg, tf)
        async with client(w, manage) as m, client(w, reorg) as r:
            err, text = await call(m, "view", {"path": "/memories/people/owner.md"})
            assert not err and "BRAVOSECRET" in text
            await call(m, "create", {"path": "/memories/people/x.md", "file_text": _fm("x", "x", "")})
            err, text = await call(
                m, "create", {"path": "/memories/people/y.md", "file_text": _fm("y", "y", "")}
            )
            assert err and "fanout cap is 3" in text
            err, text = await call(r, "delete", {"path": "/memories/people/owner.md"})
            assert err and "BRAVOSECRET [S1T1]" in text
            err, text = await call(m, "delete", {"path": "/memories/people/x.md"})
            assert not err
    assert (world.root_b / "people" / "owner.md").exists()


def test_hand_written_tenants_file_is_checked_at_load(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    h1, h2 = tenants.hash_token("one"), tenants.hash_token("two")
    tf = tmp_path / "tenants.yaml"
    tf.write_text(
        f"- {{token_sha256: {h1}, tenant: a, root: a, profile: manage}}\n"
        f"- {{token_sha256: {h2}, tenant: b, root: a/b, profile: search}}\n"
    )
    with pytest.raises(MemdirError, match="lies inside"):
        tenants.load(tf)
    tf.write_text(f"- {{token_sha256: {h1}, tenant: a, root: a, profile: manage}}\n")
    loaded = tenants.load(tf)
    assert loaded.lookup("one") is not None and loaded.lookup("two") is None
    assert loaded.tokens[0].real_root == str((tmp_path / "a").resolve())  # relative to the file
    tf.write_text(f"- {{token_sha256: {h1}, tenant: a, root: a, profile: admin}}\n")
    with pytest.raises(MemdirError, match="unknown profile"):
        tenants.load(tf)
