"""The MCP server through the SDK's real client: stdio subprocess and streamable HTTP."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from tests.conftest import fm, snapshot

from memdir.mcp.server import build_server
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store
from serve_helpers import serve_process

ALICE = fm("alice", "Alice: sister", "# Alice\n## Diet\nvegan [S1T2]\n")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def stdio(root: Path, profile: str) -> Client:
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "memdir", "serve", str(root), "--profile", profile],
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
            "forget",
        ]
        forget = next(t for t in tools.tools if t.name == "forget")
        assert forget.annotations is not None and forget.annotations.destructive_hint is True
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
        after = snapshot(root)
        index = after.pop("family/MEMORY.md")  # made by the server's folder index keeping, moved along
        assert after == {**before, "family/alice.md": ALICE.replace("vegan", "vegetarian").encode()}
        assert b"\n# family\n\n- [alice.md](alice.md): " in index
        r = await client.call_tool(
            "str_replace", {"path": "/memories/family/alice.md", "old_str": "absent", "new_str": "x"}
        )
        assert r.is_error and "old_str was not found" in text(r)
        r = await client.call_tool("view", {"path": "/memories/../../etc/passwd"})
        assert r.is_error and "'..' segments are not allowed" in text(r)
        r = await client.call_tool("view", {"path": "/memoriesX/a.md"})
        assert r.is_error and "outside memory" in text(r)
        assert snapshot(root) == {**after, "family/MEMORY.md": index}


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
            with pytest.raises(MCPError) as refused:  # not listed: the spec's -32602 (docs/serving.md)
                await client.call_tool(name, args)
            assert refused.value.error.code == INVALID_PARAMS
            assert refused.value.error.message == (
                f"Unknown tool: {name} (the 'search' profile serves view, grep, toc, section_read)"
            )
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


# -- titles, annotations, output schemas, structured results (docs/tools.md) ------------
def _alice_store(root: Path) -> Harness:
    h = Harness(open_store(root), "manage-bm25", role="test")
    assert not h.call("create", {"path": "/memories/people/alice.md", "file_text": ALICE}).is_error
    return h


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_list_carries_titles_annotations_and_output_schemas(root: Path, mode: str) -> None:
    harness = _alice_store(root)
    async with Client(build_server(harness), mode=mode) as client:  # type: ignore[arg-type]
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert list(listed) == list(harness.specs)
    for name, spec in harness.specs.items():
        t = listed[name]
        assert t.title == spec.title and t.annotations is not None and t.annotations.title == spec.title
        assert t.annotations.read_only_hint is spec.read_only
        assert t.annotations.destructive_hint is spec.destructive
        assert t.annotations.idempotent_hint is spec.idempotent
        assert t.annotations.open_world_hint is False
        assert t.output_schema == spec.output_schema and t.output_schema is not None
        assert t.input_schema == spec.input_schema()  # the extensions included: agent builders get them
    assert "expected_sha256" in listed["str_replace"].input_schema["properties"]
    assert "show_sha256" in listed["view"].input_schema["properties"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_structured_results_travel_and_validate(root: Path, mode: str) -> None:
    """Every result below is validated by the SDK's client against the tool's output schema
    (it raises otherwise); its text is the harness's text, unchanged."""
    harness = _alice_store(root)
    path = "/memories/people/alice.md"
    disk = root / "people" / "alice.md"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("view", {"path": path}),
        ("view", {"path": "/memories"}),
        ("grep", {"pattern": "vegan"}),
        ("bm25_full_search", {"query": "alice vegan"}),
    ]
    async with Client(build_server(harness), mode=mode) as client:  # type: ignore[arg-type]
        for name, args in calls:
            r = await client.call_tool(name, args)
            local = harness.call(name, args)
            assert not r.is_error and text(r) == local.text
            assert r.structured_content == local.data, name
        v = await client.call_tool("view", {"path": path})
        digest = hashlib.sha256(disk.read_bytes()).hexdigest()
        assert v.structured_content["sha256"] == digest and (v.meta or {}).get("sha256") == digest
        hits = (await client.call_tool("grep", {"pattern": "vegan"})).structured_content
        assert hits["matches"] == [{"path": path, "line": 7, "text": "vegan [S1T2]"}]
        before = snapshot(root)
        stale = await client.call_tool(
            "str_replace", {"path": path, "old_str": "vegan", "new_str": "x", "expected_sha256": "f" * 64}
        )
        assert stale.is_error and stale.structured_content is None and f"now {digest}" in text(stale)
        assert snapshot(root) == before
        ok = await client.call_tool(
            "str_replace",
            {"path": path, "old_str": "vegan", "new_str": "vegetarian", "expected_sha256": digest},
        )
        new = hashlib.sha256(disk.read_bytes()).hexdigest()
        assert not ok.is_error and ok.structured_content["sha256"] == new and ok.meta["sha256"] == new


async def test_stdio_stale_write_is_refused_across_processes(root: Path) -> None:
    """The server is another process; the file is changed by this one between view and write."""
    disk = root / "a.md"
    disk.write_text(ALICE.replace("alice", "a"))
    async with stdio(root, "manage") as client:
        v = await client.call_tool("view", {"path": "/memories/a.md", "show_sha256": True})
        read = v.structured_content["sha256"]
        assert text(v).endswith(f"\nsha256: {read}")
        disk.write_text(disk.read_text() + "- a | pet: cat (since 2024-01-01) [S3T1]\n")
        before = snapshot(root)
        r = await client.call_tool(
            "insert",
            {"path": "/memories/a.md", "insert_line": 4, "insert_text": "x", "expected_sha256": read},
        )
        now = hashlib.sha256(disk.read_bytes()).hexdigest()
        assert r.is_error and f"expected_sha256 is {read}, but the file's sha256 is now {now}" in text(r)
        assert "view /memories/a.md again" in text(r) and snapshot(root) == before
