"""Memory: the agent builder's entry point, over the real store and harness."""

from __future__ import annotations

import json
from pathlib import Path

import mcp
import pytest

import memdir
from memdir import Guards, Memory
from memdir.errors import NotFoundError
from memdir.tools.profiles import PROFILES


def fm(name: str, desc: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {desc}\n---\n{body}"


def test_memory_creates_a_valid_store(tmp_path: Path) -> None:
    Memory(tmp_path / "new")
    assert (tmp_path / "new" / "MEMORY.md").exists()
    assert memdir.Memory is Memory
    with pytest.raises(NotFoundError):
        Memory(tmp_path / "absent", create=False)


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_tools_in_each_format(tmp_path: Path, fmt: str) -> None:
    mem = Memory(tmp_path / "m")
    for profile in ("manage", "search", "folder"):
        tools = mem.tools(profile, format=fmt)  # type: ignore[arg-type]
        names = [t["function"]["name"] if fmt == "openai" else t["name"] for t in tools]
        assert names == list(PROFILES[profile])
    schema_key = {"openai": None, "anthropic": "input_schema", "mcp": "inputSchema"}[fmt]
    view = mem.tools("search", format=fmt)[0]  # type: ignore[arg-type]
    schema = view["function"]["parameters"] if schema_key is None else view[schema_key]
    assert schema["required"] == ["path"] and "start_line" in schema["properties"]
    with pytest.raises(ValueError, match="unknown schema format"):
        mem.tools("manage", format="xml")  # type: ignore[arg-type]


def test_call_takes_dicts_and_json_strings(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m")
    r = mem.call("create", json.dumps({"path": "/memories/a.md", "file_text": fm("a", "first", "hello\n")}))
    assert not r.is_error and (tmp_path / "m" / "a.md").read_text().endswith("hello\n")
    r = mem.call("view", {"path": "/memories/a.md"})
    assert not r.is_error and "hello" in r.text and r.meter.bytes_read > 0
    r = mem.call("view", "{not json")
    assert r.is_error and "not valid JSON" in r.text
    r = mem.call("create", {"path": "/memories/b.md", "file_text": "x"}, profile="search")
    assert r.is_error and "not available in the 'search' profile" in r.text
    assert not (tmp_path / "m" / "b.md").exists()


def test_context_is_the_core_memory_block(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m")
    mem.call("create", {"path": "/memories/user.md", "file_text": fm("user", "the user", "Name: Ada\n")})
    mem.call(
        "create",
        {"path": "/memories/work/MEMORY.md", "file_text": "---\ndescription: jobs and projects\n---\n"},
    )
    mem.call("create", {"path": "/memories/work/deep.md", "file_text": fm("deep", "d", "SECRETDETAIL\n")})
    block = mem.context(budget=1000)
    assert "Name: Ada" in block and '<memory_directory path="/memories/work">' in block
    assert "jobs and projects" in block and "SECRETDETAIL" not in block


async def test_mcp_server_over_the_same_store(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m", guards=Guards(fanout_cap=2))
    async with mcp.Client(mem.mcp_server("manage")) as c:
        r = await c.call_tool("create", {"path": "/memories/a.md", "file_text": fm("a", "a")})
        assert not r.is_error
        r = await c.call_tool("create", {"path": "/memories/b.md", "file_text": fm("b", "b")})
        assert r.is_error and "fanout cap is 2" in r.content[0].text  # type: ignore[union-attr]
    assert sorted(p.name for p in (tmp_path / "m").iterdir() if not p.name.startswith(".")) == [
        "MEMORY.md",
        "a.md",
    ]
