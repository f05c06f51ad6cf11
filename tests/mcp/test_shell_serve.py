"""The Shell profile end to end: served over MCP, and refused where no sandbox can be made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

import memdir
from memdir.tools.sandbox import _probe

SRC = str(Path(memdir.__file__).resolve().parents[1])
needs_sandbox = pytest.mark.skipif(_probe() is not None, reason=f"no confining sandbox here: {_probe()}")


def _run_memdir(args: list[str], path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, "PATH": path}
    return subprocess.run(
        [sys.executable, "-m", "memdir", *args], env=env, capture_output=True, text=True, timeout=60
    )


@needs_sandbox
async def test_bash_over_mcp_stdio(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "alice.md").write_text("---\nname: alice\ndescription: Alice Park\n---\n- diet: vegan [S6T5]\n")
    (root / "MEMORY.md").write_text("# Memory\n")  # serve serves a memory only
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve", str(root), "--profile", "shell"],
        env={"PYTHONPATH": SRC},
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["bash"]
        assert tools.tools[0].input_schema["required"] == ["command"]
        result = await client.call_tool("bash", {"command": "grep -rn vegan . && cat /etc/passwd"})
        text = result.content[0].text  # type: ignore[union-attr]
        assert not result.is_error
        assert "./alice.md:5:- diet: vegan [S6T5]" in text and "root:x:0:0" not in text
        result = await client.call_tool("bash", {"command": "echo '- city: Lisbon [S7T2]' >> alice.md"})
        assert "[exit status 0]" in result.content[0].text  # type: ignore[union-attr]
    assert (root / "alice.md").read_text().endswith("- city: Lisbon [S7T2]\n")


def test_serve_refuses_without_bubblewrap(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    (tmp_path / "MEMORY.md").write_text("# Memory\n")  # a memory: the sandbox alone refuses
    proc = _run_memdir(["serve", str(tmp_path), "--profile", "shell"], str(empty))
    assert proc.returncode == 2
    assert "shell profile is unavailable" in proc.stderr and "bubblewrap" in proc.stderr
    assert "never runs an unconfined shell" in proc.stderr


def test_a_bwrap_that_does_not_confine_is_refused(tmp_path: Path) -> None:
    """A `bwrap` that runs the command on the host fails the probe: no unconfined shell, ever."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text('#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n')
    (fake / "bwrap").chmod(0o755)
    code = (
        "from memdir.store.store import Store\n"
        "from memdir.tools.profiles import load_tools\n"
        "from memdir.tools.base import run_tool\n"
        "from memdir.errors import SandboxUnavailable\n"
        f"store = Store({str(tmp_path / 'mem')!r}, create=True)\n"
        "try:\n"
        "    run_tool(load_tools()['bash'], store, {'command': 'touch escaped.md'}, {})\n"
        "except SandboxUnavailable as exc:\n"
        "    print('REFUSED', exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": SRC, "PATH": f"{fake}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.startswith("REFUSED"), proc.stdout + proc.stderr
    assert "did not produce a confining sandbox" in proc.stdout
    assert not (tmp_path / "mem" / "escaped.md").exists()
    (tmp_path / "MEMORY.md").write_text("# Memory\n")  # a memory: the sandbox alone refuses
    serve = _run_memdir(["serve", str(tmp_path), "--profile", "shell"], f"{fake}:/usr/bin:/bin")
    assert serve.returncode == 2 and "shell profile is unavailable" in serve.stderr
