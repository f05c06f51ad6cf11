"""The memory_20250818 adapter does what the SDK's own helper does, call for call, wherever
memdir's contract allows (docs/serving.md lists what differs): each case runs the real SDK
helper and the adapter side by side on the same calls."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools._beta_functions import ToolError as AnthropicToolError
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import BetaMemoryTool20250818ViewCommand

from memdir import Guards, Memory
from memdir.integrations.anthropic_memory import MemdirAsyncMemoryTool, MemdirMemoryTool
from memdir.store import frontmatter
from memdir.store.journal import Journal


def both(tmp_path: Path) -> tuple[BetaLocalFilesystemMemoryTool, MemdirMemoryTool]:
    return BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk")), MemdirMemoryTool(tmp_path / "ours")


def numbered(reply: str) -> list[str]:
    """The numbered lines of a view (what Claude addresses by number)."""
    return [ln for ln in reply.split("\n") if ln[:6].strip().isdigit() and ln[6:7] == "\t"]


def body(path: Path) -> str:
    text = path.read_text()
    return text[frontmatter.body_start(text) :]


@pytest.mark.parametrize(
    ("text", "line"),
    [("Line 1\nLine 2", 1), ("Line 1\nLine 2", 0), ("a\nb\nc", 2), ("a\nb\n", 1), ("a", 1)],
)
def test_insert_leaves_the_file_as_the_sdk_does(tmp_path: Path, text: str, line: int) -> None:
    sdk, ours = both(tmp_path)
    for tool in (sdk, ours):
        tool.call({"command": "create", "path": "/memories/notes.md", "file_text": text})
        tool.call(
            {"command": "insert", "path": "/memories/notes.md", "insert_line": line, "insert_text": "new"}
        )
    theirs = (tmp_path / "sdk" / "memories" / "notes.md").read_text()
    assert theirs.endswith("\n")
    assert body(tmp_path / "ours" / "notes.md") == theirs


def test_insert_and_its_final_newline_are_one_journal_step(tmp_path: Path) -> None:
    with Memory(tmp_path / "m") as memory:
        tool = memory.anthropic_memory_tool()
        tool.call({"command": "create", "path": "/memories/notes.md", "file_text": "a\nb"})
        tool.call({"command": "insert", "path": "/memories/notes.md", "insert_line": 1, "insert_text": "x"})
    steps = Journal(tmp_path / "m").steps()
    assert [s.tool for s in steps[-2:]] == ["create", "insert"]
    assert body(tmp_path / "m" / "notes.md") == "a\nx\nb\n"


@pytest.mark.parametrize("text", ["Line 1\nLine 2\n", "one\n", "", "a\n\n", "x\r\ny\r\n"])
def test_view_numbers_lines_as_the_sdk_does(tmp_path: Path, text: str) -> None:
    """A file ending in a newline shows the empty line after it, numbered, as the SDK shows it."""
    sdk, ours = both(tmp_path)
    for tool in (sdk, ours):
        tool.call({"command": "create", "path": "/memories/notes.md", "file_text": text})
    view = {"command": "view", "path": "/memories/notes.md"}
    assert numbered(ours.call(view)) == numbered(sdk.call(view))
    last = len(text.split("\n"))
    ranged = {**view, "view_range": [last, -1]}
    assert numbered(ours.call(ranged)) == numbered(sdk.call(ranged)) == [f"{last:6d}\t"]


def test_occurs_n_times_names_lines_as_view_numbers_them(tmp_path: Path) -> None:
    sdk, ours = both(tmp_path)
    text = "# Notes\nHello\nMiddle\nHello\n"
    calls: list[dict[str, Any]] = [
        {"command": "create", "path": "/memories/notes.md", "file_text": text},
        {"command": "str_replace", "path": "/memories/notes.md", "old_str": "Hello", "new_str": "Hi"},
    ]
    sdk.call(calls[0])
    with pytest.raises(AnthropicToolError, match=r"in lines: 2, 4\."):
        sdk.call(calls[1])
    ours.call(calls[0])
    before = (tmp_path / "ours" / "notes.md").read_bytes()
    with pytest.raises(AnthropicToolError, match=r"at lines 2, 4;") as refused:
        ours.call(calls[1])
    shown = numbered(ours.call({"command": "view", "path": "/memories/notes.md"}))
    assert [ln for ln in shown if ln.endswith("\tHello")] == ["     2\tHello", "     4\tHello"]
    assert "frontmatter" not in str(refused.value)
    assert (tmp_path / "ours" / "notes.md").read_bytes() == before


def test_occurs_n_times_in_the_frontmatter_says_so(tmp_path: Path) -> None:
    ours = MemdirMemoryTool(tmp_path / "ours")
    ours.call(
        {
            "command": "create",
            "path": "/memories/notes.md",
            "file_text": "---\nname: notes\ndescription: notes on notes\n---\nbody\n",
        }
    )
    with pytest.raises(AnthropicToolError, match="unnumbered block") as refused:
        ours.call(
            {"command": "str_replace", "path": "/memories/notes.md", "old_str": "notes", "new_str": "n"}
        )
    assert "at lines" not in str(refused.value)


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A store with a folder link inside it (to a folder inside, and to one outside)."""
    root = tmp_path / "ours"
    MemdirMemoryTool(root).call({"command": "create", "path": "/memories/sub/notes.md", "file_text": "hi\n"})
    os.symlink("sub", root / "link")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("secret\n")
    os.symlink(tmp_path / "outside", root / "away")
    return root


REFUSED = [
    {"command": "view", "path": "/memories/link/notes.md"},
    {"command": "view", "path": "/memories/link/notes.txt"},  # Claude's own name, mapped
    {"command": "view", "path": "/memories/away/secret.md"},
    {"command": "view", "path": "/memories/link"},
    {"command": "str_replace", "path": "/memories/link/notes.md", "old_str": "hi", "new_str": "x"},
    {"command": "insert", "path": "/memories/away/secret.md", "insert_line": 0, "insert_text": "x"},
    {"command": "create", "path": "/memories/away/new.md", "file_text": "x"},
    {"command": "delete", "path": "/memories/link/notes.md"},
    {"command": "rename", "old_path": "/memories/link/notes.md", "new_path": "/memories/n.md"},
]


def _method(tool: Any, cmd: dict[str, Any]) -> Any:
    from anthropic._models import construct_type_unchecked
    from anthropic.types.beta import BetaMemoryTool20250818Command

    command = construct_type_unchecked(value=cmd, type_=BetaMemoryTool20250818Command)  # type: ignore[arg-type]
    return getattr(tool, cmd["command"]), command


@pytest.mark.parametrize("cmd", REFUSED, ids=lambda c: f"{c['command']}:{c.get('path', c.get('old_path'))}")
def test_every_refusal_is_the_sdks_tool_error_with_a_true_message(linked: Path, cmd: dict[str, Any]) -> None:
    """Called as the runner calls it (`call`) and as the SDK's tests call it (the method)."""
    tool = MemdirMemoryTool(linked)
    method, command = _method(tool, cmd)
    for attempt in (lambda: tool.call(cmd), lambda: method(command)):
        with pytest.raises(AnthropicToolError) as refused:
            attempt()
        text = str(refused.value)
        assert "link" in text and "is a file" not in text, text
    assert (linked.parent / "outside" / "secret.md").read_text() == "secret\n"
    assert (linked / "sub" / "notes.md").read_text().endswith("hi\n")


async def test_async_refusals_are_the_sdks_tool_error_too(linked: Path) -> None:
    tool = MemdirAsyncMemoryTool(linked)
    for path in ("/memories/link/notes.txt", "/memories/link/notes.md", "/memories/away/secret.md"):
        with pytest.raises(AnthropicToolError, match="symbolic link") as refused:
            await tool.view(BetaMemoryTool20250818ViewCommand(command="view", path=path))
        assert "is a file" not in str(refused.value)


def test_a_refused_insert_leaves_the_file_without_its_final_newline_as_it_was(tmp_path: Path) -> None:
    """The newline the SDK's insert adds is the adapter's own write: a guard refusing the insert
    takes it back, so a failed call leaves the file byte-identical."""
    with Memory(tmp_path / "m", guards=Guards(core_budget=400)) as memory:
        tool = memory.anthropic_memory_tool()
        tool.call({"command": "create", "path": "/memories/diary.md", "file_text": "one\ntwo"})
        before = (tmp_path / "m" / "diary.md").read_bytes()
        with pytest.raises(AnthropicToolError, match="subfolder"):
            tool.call(
                {
                    "command": "insert",
                    "path": "/memories/diary.md",
                    "insert_line": 1,
                    "insert_text": "word " * 600,
                }
            )
        assert (tmp_path / "m" / "diary.md").read_bytes() == before
