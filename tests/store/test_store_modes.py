"""Memory is private (issue 34, item 12): what memdir creates in a store is its owner's alone
(files 0600, folders 0700) whatever the umask, as the Anthropic SDK's memory helper does; what
it rewrites keeps its mode, and what it finds (an adopted folder of notes) is not chmodded.
Real files, real modes, under a permissive umask."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir import Memory
from memdir.cli.main import cli
from memdir.tools.profiles import Harness
from memdir.tools.sandbox import _probe
from memdir.tools.wiring import open_store


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """A container's umask: nothing masked, so any mode below is memdir's own doing."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def fm(name: str, body: str = "x\n") -> str:
    return f"---\nname: {name}\ndescription: notes on {name}\n---\n{body}"


def test_a_new_store_and_what_the_tools_create_are_private(tmp_path: Path) -> None:
    root = tmp_path / "new" / "memory"
    with Memory(root) as memory:
        assert not memory.call(
            "create", {"path": "/memories/people/ana/ana.md", "file_text": fm("ana")}
        ).is_error
        for folder in (tmp_path / "new", root, root / ".memdir", root / "people", root / "people/ana"):
            assert mode(folder) == 0o700, folder
        for file in (root / "MEMORY.md", root / "people/ana/ana.md"):
            assert mode(file) == 0o600, file
        r = memory.call(
            "rename", {"old_path": "/memories/people/ana/ana.md", "new_path": "/memories/places/pt/ana.md"}
        )
        assert not r.is_error and mode(root / "places") == mode(root / "places/pt") == 0o700
        assert mode(root / "places/pt/ana.md") == 0o600


def test_ingest_writes_private_files(tmp_path: Path) -> None:
    root, chat = tmp_path / "m", tmp_path / "chat.jsonl"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    chat.write_text(json.dumps({"role": "user", "content": "I moved to Lisbon in May 2024."}) + "\n")
    res = CliRunner().invoke(cli, ["ingest", str(root), "--model", "offline", str(chat)])
    assert res.exit_code == 0, res.output
    made = [p for p in root.rglob("*") if ".memdir" not in p.relative_to(root).parts]
    assert any(p.suffix == ".md" and p.name != "MEMORY.md" for p in made)
    assert {p.relative_to(root).as_posix(): mode(p) for p in made} == {
        p.relative_to(root).as_posix(): 0o700 if p.is_dir() else 0o600 for p in made
    }
    assert mode(root) == 0o700 and mode(root / ".memdir") == 0o700
    assert mode(root / ".memdir" / "ingested.jsonl") == 0o600


def test_a_rewrite_keeps_the_mode_the_owner_chose(tmp_path: Path) -> None:
    with Memory(tmp_path / "m") as memory:
        memory.call("create", {"path": "/memories/shared.md", "file_text": fm("shared")})
        (tmp_path / "m" / "shared.md").chmod(0o640)
        r = memory.call("str_replace", {"path": "/memories/shared.md", "old_str": "x\n", "new_str": "y\n"})
        assert not r.is_error and mode(tmp_path / "m" / "shared.md") == 0o640


def test_adopt_touches_no_mode_it_found_and_makes_its_index_private(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "trips").mkdir(parents=True)
    for folder in (notes, notes / "trips"):
        folder.chmod(0o755)
    (notes / "trips" / "lisbon.md").write_text("# Lisbon in May\nPasteis de nata.\n")
    (notes / "trips" / "lisbon.md").chmod(0o644)
    res = CliRunner().invoke(cli, ["adopt", str(notes)])
    assert res.exit_code == 0, res.output
    assert (notes / "trips" / "lisbon.md").read_text().startswith("---\n")  # rewritten...
    assert mode(notes / "trips" / "lisbon.md") == 0o644  # ...keeping its mode
    assert mode(notes) == 0o755 and mode(notes / "trips") == 0o755  # folders found are left alone
    assert mode(notes / "MEMORY.md") == 0o600 and mode(notes / "trips" / "MEMORY.md") == 0o600
    assert mode(notes / ".memdir") == 0o700  # what memdir made there: the journal's copies


@pytest.mark.skipif(_probe() is not None, reason=f"no confining sandbox here: {_probe()}")
def test_what_the_shell_makes_is_private_too(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m", create=True, init=True)
    r = Harness(store, "shell").call("bash", {"command": "mkdir -p a/b && printf 'x\\n' > a/b/c.md"})
    assert not r.is_error, r.text
    assert mode(tmp_path / "m" / "a") == 0o700 and mode(tmp_path / "m" / "a" / "b") == 0o700
    assert mode(tmp_path / "m" / "a" / "b" / "c.md") == 0o600
