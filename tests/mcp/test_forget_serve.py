"""A running `memdir serve` (and `memdir ui`) sees a forget made by another process without a
restart: its next writes land on the rewritten history, never on the old one (no forgotten object
comes back), and the UI's history pages show the marker and no longer the words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from tests.waits import read_line_with

from memdir.cli.main import cli
from memdir.store import spec
from memdir.store.journal import Journal, stop_committer
from memdir.store.traces import traces as find_traces
from memdir.tools.wiring import open_store

SECRET = "ZQXJ-4417-BLUE-HERON"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def note(name: str, line: str) -> str:
    return f"---\nname: {name}\ndescription: notes on {name}\n---\n# {name}\n- {line}\n"


def traces(root: Path) -> list[str]:
    return find_traces(root, [SECRET.encode()]).get(SECRET.encode(), [])


def text_of(result: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []))


async def test_serve_and_ui_see_the_rewritten_history_without_a_restart(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    spec.init(open_store(root, create=True))
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONUNBUFFERED": "1"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memdir", "serve", str(root), "--profile", "manage"], env=env
    )
    ui = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        assert ui.stdout is not None
        url = (
            read_line_with(ui.stdout, b"http://127.0.0.1:", "the UI's URL").decode().strip().splitlines()[-1]
        )
        async with Client(params) as client:
            r = await client.call_tool(
                "create", {"path": "/memories/alice.md", "file_text": note("alice", SECRET)}
            )
            assert not r.is_error, text_of(r)
            r = await client.call_tool("grep", {"pattern": SECRET})
            assert "alice.md" in text_of(r)
            step = len(Journal(root).steps()) - 1
            page = httpx.get(f"{url}s/store/step/{step}", timeout=60)
            assert page.status_code == 200 and SECRET in page.text  # the UI shows the words before

            out = CliRunner().invoke(cli, ["forget", str(root), SECRET, "--yes"])  # another process's view
            assert out.exit_code == 0, out.output
            stop_committer()

            r = await client.call_tool("grep", {"pattern": SECRET})
            assert "alice.md" not in text_of(r)
            r = await client.call_tool(
                "create", {"path": "/memories/bob.md", "file_text": note("bob", "likes cats")}
            )
            assert not r.is_error, text_of(r)
            r = await client.call_tool(
                "insert", {"path": "/memories/alice.md", "insert_line": 5, "insert_text": "- likes tea"}
            )
            assert not r.is_error, text_of(r)
        steps = Journal(root).steps()  # the server has stopped: its committer landed every step
        assert [s.tool for s in steps[-3:]] == ["forget", "create", "insert"]
        assert steps[step].redacted and steps[step].tool == "create"
        assert traces(root) == []
        page = httpx.get(f"{url}s/store/step/{step}", timeout=60)
        assert page.status_code == 200 and SECRET not in page.text
        listing = httpx.get(f"{url}s/store/history?operation={steps[step].operation.id}", timeout=60)
        assert "[redacted]" in listing.text
    finally:
        ui.terminate()
        ui.wait(30)
    assert CliRunner().invoke(cli, ["check", str(root)]).exit_code == 0
