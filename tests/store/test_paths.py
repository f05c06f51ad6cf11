"""Path confinement: every spelling of a way out is refused, through the tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.conftest import fm, snapshot

from memdir.errors import PathError
from memdir.store.paths import parse_memory_path
from memdir.tools.profiles import Harness

BAD_PATHS = [
    "/etc/passwd",
    "memories/a.md",
    "/memoriesX/a.md",
    "/memories/../etc/passwd",
    "/memories/a/../../etc/passwd",
    "/memories/./a.md",
    "/memories/%2e%2e/etc/passwd",
    "/memories/%2E%2E%2Fetc",
    "/memories/．．/etc/passwd",  # fullwidth full stops, NFKC -> ".."
    "/memories/a\\..\\b.md",
    "/memories/a\x00.md",
    "/memories/.memdir/writer.lock",
    "/memories/.hidden.md",
    "/memories/" + "a" * 300 + ".md",
    "/memories/a\nb.md",
    "",
]


@pytest.mark.parametrize("bad", BAD_PATHS)
def test_bad_paths_are_refused_with_a_reason(bad: str) -> None:
    with pytest.raises(PathError) as exc:
        parse_memory_path(bad)
    assert str(exc.value)  # a reason the model can act on


@pytest.mark.parametrize("bad", BAD_PATHS)
@pytest.mark.parametrize("tool", ["view", "create", "delete", "grep", "toc"])
def test_tools_refuse_bad_paths_and_change_nothing(manage: Harness, root: Path, bad: str, tool: str) -> None:
    if tool == "toc":
        manage = Harness(manage.store, "search")
    before = snapshot(root)
    args = {"path": bad}
    if tool == "create":
        args["file_text"] = fm("a")
    if tool == "grep":
        args["pattern"] = "root"
    res = manage.call(tool, args)
    assert res.is_error
    assert snapshot(root) == before


def test_non_string_path_is_refused() -> None:
    with pytest.raises(PathError, match="must be a string"):
        parse_memory_path(42)


def test_good_paths_normalize_slashes() -> None:
    assert parse_memory_path("/memories//people/alice.md").text == "/memories/people/alice.md"
    assert parse_memory_path("/memories/").is_root
    assert parse_memory_path("/memories/café/ünï.md").parts == ("café", "ünï.md")


def test_symlinked_folder_leading_out_is_refused(manage: Harness, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(fm("secret", body="TOPSECRET\n"))
    os.symlink(outside, root / "link")
    for args in (
        {"path": "/memories/link/secret.md"},
        {"path": "/memories/link"},
    ):
        res = manage.call("view", args)
        assert res.is_error and "symbolic link" in res.text
    res = manage.call("create", {"path": "/memories/link/new.md", "file_text": fm("new")})
    assert res.is_error
    assert not (outside / "new.md").exists()
    listing = manage.call("view", {"path": "/memories"}).text
    assert "TOPSECRET" not in listing and "/memories/link/" not in listing
    assert manage.call("grep", {"pattern": "TOPSECRET"}).text.startswith("No lines match")
    rename = manage.call("rename", {"old_path": "/memories/MEMORY.md", "new_path": "/memories/link/x.md"})
    assert rename.is_error and (root / "MEMORY.md").exists()


def test_symlinked_file_is_refused(manage: Harness, root: Path, tmp_path: Path) -> None:
    target = tmp_path / "passwd.md"
    target.write_text("root:x:0:0\n")
    os.symlink(target, root / "p.md")
    for tool, args in [
        ("view", {"path": "/memories/p.md"}),
        ("str_replace", {"path": "/memories/p.md", "old_str": "root", "new_str": "x"}),
        ("insert", {"path": "/memories/p.md", "insert_line": 0, "insert_text": "x"}),
    ]:
        res = manage.call(tool, args)
        assert res.is_error, tool
    assert target.read_text() == "root:x:0:0\n"
    assert manage.call("grep", {"pattern": "root:x"}).text.startswith("No lines match")


def test_hardlink_to_outside_file_is_refused(manage: Harness, root: Path, tmp_path: Path) -> None:
    target = tmp_path / "secret.md"
    target.write_text(fm("secret", body="HARDSECRET\n"))
    os.link(target, root / "secret.md")
    res = manage.call("view", {"path": "/memories/secret.md"})
    assert res.is_error and "hard link" in res.text
    assert manage.call("grep", {"pattern": "HARDSECRET"}).text.startswith("No lines match")
    res = manage.call("str_replace", {"path": "/memories/secret.md", "old_str": "HARDSECRET", "new_str": "x"})
    assert res.is_error
    assert "HARDSECRET" in target.read_text()


def test_hidden_entries_never_listed(manage: Harness, root: Path) -> None:
    (root / ".secret.md").write_text(fm("secret"))
    (root / ".git").mkdir()
    listing = manage.call("view", {"path": "/memories"}).text
    assert ".secret" not in listing and ".git" not in listing and ".memdir" not in listing


def test_state_dir_is_not_reachable(manage: Harness, root: Path) -> None:
    manage.call("create", {"path": "/memories/a.md", "file_text": fm("a")})
    assert (root / ".memdir").is_dir()
    res = manage.call("view", {"path": "/memories/.memdir"})
    assert res.is_error and "hidden" in res.text
    res = manage.call("delete", {"path": "/memories/.memdir"})
    assert res.is_error and (root / ".memdir").is_dir()


@pytest.mark.slow
def test_concurrent_symlink_swaps_never_lead_out(manage: Harness, root: Path, tmp_path: Path) -> None:
    """Another process flips a folder between a real folder and a link to outside while the
    tools read and write through it: nothing outside is ever read, written or listed."""
    import threading

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.md").write_text(fm("note", body="OUTSIDE-SECRET\n"))
    inside = root / "d"
    inside.mkdir()
    (inside / "note.md").write_text(fm("note", body="inside\n"))
    parked = root / "parked"
    stop = threading.Event()

    def flipper() -> None:
        while not stop.is_set():
            try:
                os.rename(inside, parked)
                os.symlink(outside, inside)
                os.unlink(inside)
                os.rename(parked, inside)
            except OSError:
                pass

    t = threading.Thread(target=flipper)
    t.start()
    try:
        for i in range(60):
            for tool, args in [
                ("view", {"path": "/memories/d/note.md"}),
                ("view", {"path": "/memories"}),
                ("create", {"path": f"/memories/d/n{i}.md", "file_text": fm(f"n{i}")}),
                (
                    "str_replace",
                    {"path": "/memories/d/note.md", "old_str": "OUTSIDE-SECRET", "new_str": "pwned"},
                ),
            ]:
                res = manage.call(tool, args)
                assert "OUTSIDE-SECRET" not in res.text
    finally:
        stop.set()
        t.join()
    assert sorted(p.name for p in outside.iterdir()) == ["note.md"]
    assert "OUTSIDE-SECRET" in (outside / "note.md").read_text()
