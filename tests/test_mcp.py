"""The MCP server through the SDK's real client: stdio subprocess and streamable HTTP."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from tests.conftest import fm, snapshot

from serve_helpers import serve_process

ALICE = fm("alice", "Alice: sister", "# Alice\n## Diet\nvegan [S1T2]\n")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def stdio(root: Path, profile: str) -> Client:
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "memdir", "serve", "--root", str(root), "--profile", profile],
            env=_env(),
        )
    )


def text(result: Any) -> str:
    return "".join(c.text for c in result.content)


async def test_stdio_manage_profile_round_trip(root: Path) -> None:
    async with stdio(root, "manage") as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == [
            "view",
            "create",
            "str_replace",
            "insert",
            "delete",
            "rename",
            "grep",
        ]
        create = next(t for t in tools.tools if t.name == "create")
        assert create.input_schema["required"] == ["path", "file_text"]
        assert create.annotations is not None and create.annotations.read_only_hint is False
        before = snapshot(root)
        r = await client.call_tool("create", {"path": "/memories/people/alice.md", "file_text": ALICE})
        assert not r.is_error
        r = await client.call_tool(
            "str_replace", {"path": "/memories/people/alice.md", "old_str": "vegan", "new_str": "vegetarian"}
        )
        assert not r.is_error
        r = await client.call_tool("rename", {"old_path": "/memories/people", "new_path": "/memories/family"})
        assert not r.is_error
        assert snapshot(root) == {**before, "family/alice.md": ALICE.replace("vegan", "vegetarian").encode()}
        r = await client.call_tool(
            "str_replace", {"path": "/memories/family/alice.md", "old_str": "absent", "new_str": "x"}
        )
        assert r.is_error and "old_str was not found" in text(r)
        r = await client.call_tool("view", {"path": "/memories/../../etc/passwd"})
        assert r.is_error and "'..' segments are not allowed" in text(r)
        r = await client.call_tool("view", {"path": "/memoriesX/a.md"})
        assert r.is_error and "outside memory" in text(r)
        assert snapshot(root) == {**before, "family/alice.md": ALICE.replace("vegan", "vegetarian").encode()}


async def test_stdio_search_profile_cannot_write(root: Path) -> None:
    (root / "a.md").write_text(ALICE.replace("alice", "a"))
    before = snapshot(root)
    async with stdio(root, "search") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["view", "grep", "toc", "section_read"]
        for name, args in [
            ("create", {"path": "/memories/b.md", "file_text": fm("b")}),
            ("str_replace", {"path": "/memories/a.md", "old_str": "vegan", "new_str": "x"}),
            ("delete", {"path": "/memories/a.md"}),
            ("rename", {"old_path": "/memories/a.md", "new_path": "/memories/b.md"}),
        ]:
            r = await client.call_tool(name, args)
            assert r.is_error and "not available in the 'search' profile" in text(r)
        r = await client.call_tool(
            "section_read", {"path": "/memories/a.md", "section_path": "# Alice > ## Diet"}
        )
        assert not r.is_error and "vegan [S1T2]" in text(r)
        r = await client.call_tool("grep", {"pattern": "VEGAN"})
        assert "/memories/a.md:7: vegan [S1T2]" in text(r)
    assert snapshot(root) == before


@pytest.fixture
def http_server(root: Path) -> Iterator[str]:
    with serve_process(["--root", str(root), "--profile", "manage"]) as (_, url):
        yield url


@pytest.mark.slow
async def test_http_transport(root: Path, http_server: str) -> None:
    async with Client(http_server) as client:
        assert "create" in [t.name for t in (await client.list_tools()).tools]
        r = await client.call_tool(
            "create", {"path": "/memories/notes/n.md", "file_text": fm("n", body="hello\n")}
        )
        assert not r.is_error
        r = await client.call_tool("view", {"path": "/memories"})
        assert "/memories/notes/n.md  [description: test file]" in text(r)
        r = await client.call_tool("create", {"path": "/memories/notes/n.md", "file_text": fm("n")})
        assert r.is_error and "already exists" in text(r)
    assert snapshot(root)["notes/n.md"] == fm("n", body="hello\n").encode()
