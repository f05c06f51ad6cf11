"""Moving an app from the Anthropic SDK's memory helper to memdir, end to end: a folder the real
`BetaLocalFilesystemMemoryTool` wrote, opened with `Memory(BASE)` as docs/serving.md says, keeps
every byte Claude wrote, every path Claude knows, and every file editable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools._beta_functions import ToolError as AnthropicToolError
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from click.testing import CliRunner

from memdir import Memory
from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.integrations.anthropic_memory import MemdirMemoryTool
from memdir.store import frontmatter, spec
from memdir.store.journal import Journal
from memdir.tools.wiring import open_store

# What an app's Claude wrote through the SDK helper (its own names, no frontmatter).
SDK_SESSION: list[dict[str, Any]] = [
    {"command": "create", "path": "/memories/user_preferences.txt", "file_text": "Prefers tea.\nVegan.\n"},
    {
        "command": "insert",
        "path": "/memories/user_preferences.txt",
        "insert_line": 1,
        "insert_text": "Nut allergy",
    },
    {"command": "create", "path": "/memories/projects/Q3 Plan.txt", "file_text": "Ship the beta\nHire two"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "# Notes\n- likes jazz\n"},
    {"command": "create", "path": "/memories/ContactInfo.md", "file_text": "ana@example.com\n"},
    {
        "command": "create",
        "path": "/memories/travel/lisbon-trip.md",
        "file_text": "May 2024\r\nflights booked\r\n",
    },
]


def sdk_folder(base: Path) -> dict[str, str]:
    """BASE as the real SDK helper leaves it; {Claude's path: the text on disk}."""
    sdk = BetaLocalFilesystemMemoryTool(str(base))
    for call in SDK_SESSION:
        sdk.call(call)
    return {
        "/memories/" + str(p.relative_to(base / "memories")): p.read_bytes().decode()
        for p in sorted((base / "memories").rglob("*"))
        if p.is_file()
    }


def body(path: Path) -> str:
    text = path.read_bytes().decode()
    return text[frontmatter.body_start(text) :]


def test_moving_from_the_sdk_helper_loses_nothing(tmp_path: Path) -> None:
    base = tmp_path / "memory"
    written = sdk_folder(base)
    assert set(written) == {
        "/memories/user_preferences.txt",
        "/memories/projects/Q3 Plan.txt",
        "/memories/notes.md",
        "/memories/ContactInfo.md",
        "/memories/travel/lisbon-trip.md",
    }
    with Memory(base) as memory:  # the documented swap, nothing else
        assert Path(memory.root) == base / "memories"
        assert memory.converted is not None and memory.converted.left == []
        tool = memory.anthropic_memory_tool()
        listing = tool.call({"command": "view", "path": "/memories"})
        assert "/memories/memories" not in listing and "user-preferences.md" in listing
        stored = {
            "/memories/user_preferences.txt": "user-preferences.md",
            "/memories/projects/Q3 Plan.txt": "projects/q3-plan.md",
            "/memories/notes.md": "notes.md",
            "/memories/ContactInfo.md": "contact-info.md",
            "/memories/travel/lisbon-trip.md": "travel/lisbon-trip.md",
        }
        for old, text in written.items():
            # every byte Claude wrote, below the frontmatter memdir added; its old path reaches it
            assert body(base / "memories" / stored[old]) == text, old
            shown = tool.call({"command": "view", "path": old})
            assert text.split("\n")[0] in shown, old
        assert spec.validate(memory.store).valid, spec.validate(memory.store).violations
        # Claude's old paths stay editable through the adapter
        tool.call(
            {
                "command": "str_replace",
                "path": "/memories/user_preferences.txt",
                "old_str": "tea",
                "new_str": "coffee",
            }
        )
        tool.call(
            {
                "command": "insert",
                "path": "/memories/projects/Q3 Plan.txt",
                "insert_line": 2,
                "insert_text": "Launch",
            }
        )
        tool.call(
            {
                "command": "str_replace",
                "path": "/memories/ContactInfo.md",
                "old_str": "ana@",
                "new_str": "ana.s@",
            }
        )
        assert body(base / "memories" / "user-preferences.md") == "Prefers coffee.\nNut allergy\nVegan.\n"
        assert body(base / "memories" / "projects" / "q3-plan.md") == "Ship the beta\nHire two\nLaunch\n"
        assert (
            frontmatter.parse((base / "memories" / "projects" / "q3-plan.md").read_text()).name == "q3-plan"
        )
        assert spec.validate(memory.store).valid
    tools = [s.tool for s in Journal(base / "memories").steps()]
    # the SDK-era files are the journal's baseline, then the conversion's two steps
    assert tools[:3] == ["baseline", "adopt-sdk", "adopt"], tools
    res = CliRunner().invoke(cli, ["validate", str(base)])  # the CLI finds the same store
    assert res.exit_code == 0 and "valid: no violations" in res.output, res.output
    with Memory(base) as again:  # converted once: a second open changes nothing
        assert again.converted is None and Path(again.root) == base / "memories"


def test_a_file_whose_memory_name_is_taken_is_left_and_validate_says_so(tmp_path: Path) -> None:
    base = tmp_path / "memory"
    sdk = BetaLocalFilesystemMemoryTool(str(base))
    sdk.call({"command": "create", "path": "/memories/notes.md", "file_text": "one\n"})
    sdk.call({"command": "create", "path": "/memories/notes.txt", "file_text": "two\n"})
    with Memory(base) as memory:
        assert memory.converted is not None
        assert [p for p, _ in memory.converted.left] == ["/memories/notes.txt"]
        assert (base / "memories" / "notes.txt").read_text() == "two\n"
        tool = memory.anthropic_memory_tool()
        assert "two" in tool.call({"command": "view", "path": "/memories/notes.txt"})
        with pytest.raises(AnthropicToolError, match=r"only \.md files"):
            tool.call(
                {"command": "str_replace", "path": "/memories/notes.txt", "old_str": "two", "new_str": "2"}
            )
        assert (base / "memories" / "notes.txt").read_text() == "two\n"
        report = spec.validate(memory.store)
    assert [(v.path, v.rule) for v in report.violations] == [("/memories/notes.txt", "not-memory")]
    assert "taken by /memories/notes.md" in report.violations[0].message
    res = CliRunner().invoke(cli, ["validate", str(base)])
    assert res.exit_code == 1 and "not-memory" in res.output


def test_validate_never_calls_valid_a_store_holding_text_the_tools_cannot_edit(tmp_path: Path) -> None:
    root = tmp_path / "m"
    MemdirMemoryTool(root).call({"command": "create", "path": "/memories/a.md", "file_text": "a\n"})
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")  # no one's text: left be
    store = open_store(root)
    assert spec.validate(store).valid
    (root / "legacy.txt").write_text("notes Claude wrote\n")
    report = spec.validate(store)
    assert [(v.path, v.rule) for v in report.violations] == [("/memories/legacy.txt", "not-memory")]
    assert "/memories/legacy.md" in report.violations[0].message


def test_the_bare_path_adapter_leaves_an_unconverted_folder_to_memory(tmp_path: Path) -> None:
    base = tmp_path / "memory"
    written = sdk_folder(base)
    before = sorted(p.name for p in (base / "memories").rglob("*"))
    with pytest.raises(MemdirError, match=r"memdir\.Memory\("):
        MemdirMemoryTool(base)
    assert sorted(p.name for p in (base / "memories").rglob("*")) == before  # no MEMORY.md made
    tool = Memory(base).anthropic_memory_tool()
    assert "Nut allergy" in tool.call({"command": "view", "path": "/memories/user_preferences.txt"})
    assert written


def test_memdir_init_converts_an_sdk_folder_too(tmp_path: Path) -> None:
    base = tmp_path / "memory"
    sdk_folder(base)
    res = CliRunner().invoke(cli, ["validate", str(base)])  # before: not valid, and why
    assert (
        res.exit_code == 1
        and "[root-index]" in res.output
        and "/memories/user_preferences.txt: [not-memory]" in res.output
    )
    res = CliRunner().invoke(cli, ["serve", str(base)])  # a store to serve must be converted first
    assert res.exit_code == 2 and f"memdir init {base}" in res.output
    res = CliRunner().invoke(cli, ["init", str(base)])
    assert res.exit_code == 0, res.output
    assert "user_preferences.txt -> /memories/user-preferences.md" in res.output
    assert (base / "memories" / "MEMORY.md").is_file() and not (base / "MEMORY.md").exists()
    res = CliRunner().invoke(cli, ["validate", str(base)])
    assert res.exit_code == 0, res.output
