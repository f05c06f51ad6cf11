"""Which file names are memory (issue 34, item 12): the Anthropic memory-tool drop-in and
`validate` agree, through one rule (`frontmatter.memory_name`, docs/conventions.md "File
names"). Claude commonly writes `user_preferences.txt`: the drop-in stores it under the memory
name it maps to, and that name is the one `validate` asks for. Real stores, the real SDK base."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools._beta_functions import ToolError as AnthropicToolError

from memdir.integrations.anthropic_memory import MemdirMemoryTool
from memdir.store import spec
from memdir.store.frontmatter import is_memory_name, memory_name
from memdir.tools.wiring import open_store

# (what Claude writes, where the store keeps it; None: no memory name can be made of it)
NAMES = [
    ("/memories/user_preferences.txt", "/memories/user-preferences.md"),
    ("/memories/user-preferences.md", "/memories/user-preferences.md"),
    ("/memories/notes", "/memories/notes.md"),
    ("/memories/Notes.md", "/memories/notes.md"),
    ("/memories/projects/Q3 Plan.txt", "/memories/projects/q3-plan.md"),
    ("/memories/people/ana/ContactInfo.json", "/memories/people/ana/contact-info.md"),
    ("/memories/café.md", "/memories/cafe.md"),
    ("/memories/日本.txt", None),
]


def call(tool: MemdirMemoryTool, **command: Any) -> str:
    return str(tool.call(command))


def file_violations(root: Path, path: str) -> list[str]:
    return [v.message for v in spec.validate(open_store(root)).violations if v.path == path]


@pytest.mark.parametrize(("given", "stored"), NAMES)
def test_the_drop_in_stores_each_name_where_validate_accepts_it(
    tmp_path: Path, given: str, stored: str | None
) -> None:
    root = tmp_path / "m"
    tool = MemdirMemoryTool(root)
    if stored is None:
        with pytest.raises(AnthropicToolError, match="no letter or digit"):
            call(tool, command="create", path=given, file_text="Prefers tea.\n")
        assert memory_name(given.rsplit("/", 1)[1]) is None
        return
    said = call(tool, command="create", path=given, file_text="Prefers tea.\n")
    assert said.startswith(f"Created {stored}")
    assert (given != stored) == ("the memory file name for" in said)
    on_disk = root / stored.removeprefix("/memories/")
    assert on_disk.is_file() and (given == stored or not (root / given.removeprefix("/memories/")).exists())
    # validate: the stored name is a memory file name and the file breaks no rule of its own
    assert is_memory_name(on_disk.name) and file_violations(root, stored) == []
    # Claude's own name keeps reaching the file, in every command
    assert "Prefers tea." in call(tool, command="view", path=given)
    call(tool, command="str_replace", path=given, old_str="tea", new_str="green tea")
    call(tool, command="insert", path=given, insert_line=1, insert_text="Walks daily.\n")
    assert on_disk.read_text().endswith("Prefers green tea.\nWalks daily.\n")
    call(tool, command="delete", path=given)
    assert not on_disk.exists()


def test_validate_asks_for_the_name_the_drop_in_maps_to(tmp_path: Path) -> None:
    """A file written outside the tools under a name that is not kebab-case: validate's fix
    names the same file name the drop-in would have stored it under."""
    root = tmp_path / "m"
    MemdirMemoryTool(root)  # makes the store
    for name in ("user_preferences.md", "Notes.md", "ContactInfo.md", "Q3 Plan.md"):
        stem = name[:-3]
        (root / name).write_text(f"---\nname: {stem}\ndescription: d\n---\nx\n")
        [message] = [m for m in file_violations(root, f"/memories/{name}") if "kebab" in m]
        assert f"e.g. '{memory_name(name)}'" in message
        dropped = MemdirMemoryTool(tmp_path / f"d-{stem}")
        assert call(dropped, command="create", path=f"/memories/{name}", file_text="x\n").startswith(
            f"Created /memories/{memory_name(name)}"
        )


def test_strict_mode_refuses_with_the_name_to_use(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path / "m", lenient=False)
    with pytest.raises(AnthropicToolError, match=r"use /memories/user-preferences\.md instead of"):
        call(tool, command="create", path="/memories/user_preferences.txt", file_text="x\n")
    assert not (tmp_path / "m" / "user_preferences.txt").exists()
    assert not (tmp_path / "m" / "user-preferences.md").exists()


def test_a_file_the_store_holds_under_another_name_is_reached_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "m"
    tool = MemdirMemoryTool(root)
    (root / "legacy.txt").write_text("kept as it was\n")
    assert "kept as it was" in call(tool, command="view", path="/memories/legacy.txt")
    call(tool, command="create", path="/memories/prefs.txt", file_text="Prefers tea.\n")
    said = call(tool, command="rename", old_path="/memories/prefs.txt", new_path="/memories/Drinks.txt")
    assert (root / "drinks.md").is_file() and not (root / "prefs.md").exists(), said
    assert "name: drinks" in (root / "drinks.md").read_text()
    call(tool, command="create", path="/memories/Trips/lisbon.md", file_text="May.\n")
    call(tool, command="rename", old_path="/memories/Trips", new_path="/memories/Travel")
    assert (root / "Travel" / "lisbon.md").is_file()  # folders are named as given
