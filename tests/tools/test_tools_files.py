"""The management tools, each to its contract (docs/study.md, Tool contracts), asserted as snapshots."""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import fm, snapshot

from memdir.tools.profiles import Harness

ALICE = fm(
    "alice", "Alice: sister, vegan", "# Alice\n## Diet\nvegan [S1T2]\n## Work\nnurse [S2T1]\nvegan cook\n"
)


@pytest.fixture
def alice(manage: Harness, root: Path) -> Path:
    assert not manage.call("create", {"path": "/memories/people/alice.md", "file_text": ALICE}).is_error
    return root / "people" / "alice.md"


def assert_unchanged_error(h: Harness, root: Path, tool: str, args: dict[str, object], needle: str) -> str:
    before = snapshot(root)
    res = h.call(tool, args)
    assert res.is_error, res.text
    assert needle in res.text, res.text
    assert snapshot(root) == before
    return res.text


# -- create -----------------------------------------------------------------------------
def test_create_writes_file_and_parents(manage: Harness, root: Path) -> None:
    before = snapshot(root)
    res = manage.call("create", {"path": "/memories/a/b/c/note.md", "file_text": fm("note", body="x\n")})
    assert not res.is_error
    assert snapshot(root) == {**before, "a/b/c/note.md": fm("note", body="x\n").encode()}


def test_create_refuses_existing(manage: Harness, root: Path, alice: Path) -> None:
    assert_unchanged_error(
        manage,
        root,
        "create",
        {"path": "/memories/people/alice.md", "file_text": fm("alice")},
        "already exists",
    )


@pytest.mark.parametrize(
    ("path", "text", "needle"),
    [
        ("/memories/a.txt", fm("a"), "only .md"),
        ("/memories/a.md", "no frontmatter\n", "missing frontmatter"),
        ("/memories/a.md", fm("b"), "does not equal the file stem"),
        ("/memories/Big_Name.md", fm("Big_Name"), "kebab-case"),
        ("/memories/a.md", "---\nname: a\n---\n", "no 'description'"),
        ("/memories/a.md", "---\nname: a\ndescription: x\nname: a\n---\n", "duplicate"),
        ("/memories/a.md", "---\nname: a\ndescription: |\n  two\n  lines\n---\n", "single line"),
        ("/memories/a.md", "---\nname: a\ndescription: x\nmetadata: flat\n---\n", "metadata"),
        ("/memories/people", fm("people"), "only .md"),
    ],
)
def test_create_validates(manage: Harness, root: Path, path: str, text: str, needle: str) -> None:
    assert_unchanged_error(manage, root, "create", {"path": path, "file_text": text}, needle)


def test_create_survives_yaml_traps(manage: Harness, root: Path, search: Harness) -> None:
    text = (
        "---\nname: trip\ndescription: Trip: Oslo at 12:30, answer NO\nmetadata:\n  type: note\n---\nbody\n"
    )
    assert not manage.call("create", {"path": "/memories/trip.md", "file_text": text}).is_error
    listing = search.call("view", {"path": "/memories"}).text
    assert "[description: Trip: Oslo at 12:30, answer NO]" in listing
    assert (root / "trip.md").read_text() == text


def test_memory_index_needs_no_frontmatter(manage: Harness, root: Path) -> None:
    res = manage.call("create", {"path": "/memories/people/MEMORY.md", "file_text": "# People\n"})
    assert not res.is_error
    assert (root / "people" / "MEMORY.md").read_text() == "# People\n"


# -- view -------------------------------------------------------------------------------
def test_view_file_numbers_lines(search: Harness, alice: Path) -> None:
    text = search.call("view", {"path": "/memories/people/alice.md"}).text
    lines = text.split("\n")
    assert lines[0] == "/memories/people/alice.md (10 lines)"
    assert lines[1] == "     1\t---"
    assert lines[2] == "     2\tname: alice"
    assert lines[-1] == "    10\tvegan cook"


@pytest.mark.parametrize(
    ("start", "end", "first", "last"),
    [(5, 7, 5, 7), (9, -1, 9, 10), (3, None, 3, 10), (None, 2, 1, 2), (10, 10, 10, 10)],
)
def test_view_ranges(
    search: Harness, alice: Path, start: int | None, end: int | None, first: int, last: int
) -> None:
    args: dict[str, object] = {"path": "/memories/people/alice.md"}
    if start is not None:
        args["start_line"] = start
    if end is not None:
        args["end_line"] = end
    res = search.call("view", args)
    assert not res.is_error, res.text
    body = res.text.split("\n")[1:]
    assert [int(ln.split("\t")[0]) for ln in body] == list(range(first, last + 1))
    assert f"(lines {first}-{last} of 10)" in res.text


@pytest.mark.parametrize(
    ("start", "end", "needle"),
    [(0, 3, "start_line 0"), (11, -1, "start_line 11"), (5, 4, "end_line 4"), (2, 11, "end_line 11")],
)
def test_view_range_errors(
    search: Harness, root: Path, alice: Path, start: int, end: int, needle: str
) -> None:
    text = assert_unchanged_error(
        search,
        root,
        "view",
        {"path": "/memories/people/alice.md", "start_line": start, "end_line": end},
        needle,
    )
    assert "10 lines" in text or "to 10" in text


def test_view_directory_depth_sizes_descriptions(manage: Harness, root: Path) -> None:
    deep = fm("deep", "deep file", "0123456789\n")
    assert not manage.call("create", {"path": "/memories/a/b/c/d/deep.md", "file_text": deep}).is_error
    assert not manage.call(
        "create", {"path": "/memories/a/top.md", "file_text": fm("top", "top: file")}
    ).is_error
    text = manage.call("view", {"path": "/memories"}).text
    lines = text.split("\n")
    paths = [ln.split("\t")[1].split("  [")[0] for ln in lines[1:]]
    assert paths == [
        "/memories/",
        "/memories/MEMORY.md",
        "/memories/a/",
        "/memories/a/b/",
        "/memories/a/b/c/",
        "/memories/a/top.md",
    ]  # d/ is 4 levels below: not listed, but counted
    size_c = next(ln for ln in lines if ln.endswith("/memories/a/b/c/")).split("\t")[0]
    assert size_c == f"{len(deep.encode())}B"
    assert "/memories/a/top.md  [description: top: file]" in text
    sub = manage.call("view", {"path": "/memories/a/b"}).text
    assert "/memories/a/b/c/d/deep.md  [description: deep file]" in sub


def test_view_missing_and_folder_ranges(search: Harness, root: Path, alice: Path) -> None:
    assert_unchanged_error(search, root, "view", {"path": "/memories/nope.md"}, "does not exist")
    # a folder viewed with a line range is still listed, with a note (small models fill every parameter)
    whole = search.call("view", {"path": "/memories/people"})
    ranged = search.call("view", {"path": "/memories/people", "start_line": 3, "end_line": 9})
    assert not ranged.is_error and ranged.text == (
        "Note: /memories/people is a folder; start_line and end_line apply to files only.\n" + whole.text
    )
    full = search.call("view", {"path": "/memories/people", "start_line": 1, "end_line": -1})
    assert full.text == whole.text


# -- str_replace ------------------------------------------------------------------------
def test_str_replace_unique_in_body(manage: Harness, root: Path, alice: Path) -> None:
    before = snapshot(root)
    res = manage.call(
        "str_replace", {"path": "/memories/people/alice.md", "old_str": "nurse", "new_str": "doctor"}
    )
    assert not res.is_error and "line 9" in res.text
    after = snapshot(root)
    assert after == {**before, "people/alice.md": ALICE.replace("nurse", "doctor").encode()}


def test_str_replace_ambiguous_lists_lines(manage: Harness, root: Path, alice: Path) -> None:
    text = assert_unchanged_error(
        manage,
        root,
        "str_replace",
        {"path": "/memories/people/alice.md", "old_str": "vegan", "new_str": "x"},
        "occurs 2 times",
    )
    assert "at lines 7, 10" in text and "more surrounding context" in text


def test_str_replace_frontmatter_occurrence_does_not_count(manage: Harness, root: Path, alice: Path) -> None:
    # "Alice" is in the description and in the body heading; the body one is unique there.
    res = manage.call(
        "str_replace", {"path": "/memories/people/alice.md", "old_str": "Alice", "new_str": "Alicia"}
    )
    assert not res.is_error
    text = alice.read_text()
    assert "description: Alice: sister" in text and "# Alicia" in text


def test_str_replace_falls_back_to_frontmatter(manage: Harness, root: Path, alice: Path) -> None:
    res = manage.call(
        "str_replace",
        {"path": "/memories/people/alice.md", "old_str": "sister, vegan", "new_str": "sister; nurse"},
    )
    assert not res.is_error and "frontmatter" in res.text
    assert "description: 'Alice: sister; nurse'" not in alice.read_text()
    assert "description: Alice: sister; nurse" in alice.read_text()


def test_str_replace_cannot_break_frontmatter(manage: Harness, root: Path, alice: Path) -> None:
    assert_unchanged_error(
        manage,
        root,
        "str_replace",
        {"path": "/memories/people/alice.md", "old_str": "name: alice", "new_str": "name: bob"},
        "does not equal",
    )


def test_a_fact_cannot_be_written_into_the_frontmatter(manage: Harness, root: Path, alice: Path) -> None:
    """What the local model did: a str_replace anchored on the frontmatter's closing line put a
    fact inside it. Keys beyond name, description and metadata are refused when a write adds them."""
    text = assert_unchanged_error(
        manage,
        root,
        "str_replace",
        {
            "path": "/memories/people/alice.md",
            "old_str": "name: alice\n",
            "new_str": "name: alice\n- Max: beagle [S1T1]\n",
        },
        "not one of name, description, metadata",
    )
    assert "fact lines go below the closing '---'" in text
    created = manage.call(
        "create", {"path": "/memories/b.md", "file_text": "---\nname: b\ndescription: x\nowner: me\n---\n"}
    )
    assert created.is_error and "'owner'" in created.text and not (root / "b.md").exists()


@pytest.mark.parametrize(("old", "needle"), [("not there", "not found"), ("", "empty")])
def test_str_replace_errors(manage: Harness, root: Path, alice: Path, old: str, needle: str) -> None:
    assert_unchanged_error(
        manage,
        root,
        "str_replace",
        {"path": "/memories/people/alice.md", "old_str": old, "new_str": "x"},
        needle,
    )


def test_str_replace_multiline_and_delete(manage: Harness, alice: Path) -> None:
    res = manage.call(
        "str_replace",
        {"path": "/memories/people/alice.md", "old_str": "## Work\nnurse [S2T1]\n", "new_str": ""},
    )
    assert not res.is_error
    assert alice.read_text() == ALICE.replace("## Work\nnurse [S2T1]\n", "")


# -- insert -----------------------------------------------------------------------------
def test_insert_after_line(manage: Harness, alice: Path) -> None:
    res = manage.call(
        "insert",
        {"path": "/memories/people/alice.md", "insert_line": 7, "insert_text": "- likes tofu [S3T1]"},
    )
    assert not res.is_error
    lines = alice.read_text().split("\n")
    assert lines[6:9] == ["vegan [S1T2]", "- likes tofu [S3T1]", "## Work"]


def test_insert_at_end_and_at_fence(manage: Harness, alice: Path) -> None:
    assert not manage.call(
        "insert", {"path": "/memories/people/alice.md", "insert_line": 10, "insert_text": "end\n"}
    ).is_error
    assert alice.read_text().endswith("vegan cook\nend\n")
    assert not manage.call(
        "insert", {"path": "/memories/people/alice.md", "insert_line": 4, "insert_text": "intro"}
    ).is_error
    assert alice.read_text().split("\n")[3:6] == ["---", "intro", "# Alice"]


def test_insert_into_file_without_trailing_newline(manage: Harness, root: Path) -> None:
    (root / "x.md").write_text(fm("x", body="last"))
    assert not manage.call(
        "insert", {"path": "/memories/x.md", "insert_line": 5, "insert_text": "new"}
    ).is_error
    assert (root / "x.md").read_text() == fm("x", body="last\nnew\n")
    assert not manage.call(
        "insert", {"path": "/memories/x.md", "insert_line": 4, "insert_text": "mid"}
    ).is_error
    assert (root / "x.md").read_text() == fm("x", body="mid\nlast\nnew\n")


@pytest.mark.parametrize(
    ("line", "needle"),
    [(0, "inside the frontmatter"), (3, "use 4 to 10"), (11, "out of range"), (-1, "out of range")],
)
def test_insert_bounds(manage: Harness, root: Path, alice: Path, line: int, needle: str) -> None:
    assert_unchanged_error(
        manage,
        root,
        "insert",
        {"path": "/memories/people/alice.md", "insert_line": line, "insert_text": "x"},
        needle,
    )


def test_insert_line_zero_without_frontmatter(manage: Harness, root: Path) -> None:
    (root / "MEMORY.md").write_text("# Index\n")
    assert not manage.call(
        "insert", {"path": "/memories/MEMORY.md", "insert_line": 0, "insert_text": "top"}
    ).is_error
    assert (root / "MEMORY.md").read_text() == "top\n# Index\n"


# -- delete -----------------------------------------------------------------------------
def test_delete_file_and_folder(manage: Harness, root: Path, alice: Path) -> None:
    manage.call("create", {"path": "/memories/people/bob.md", "file_text": fm("bob")})
    assert not manage.call("delete", {"path": "/memories/people/bob.md"}).is_error
    assert "people/bob.md" not in snapshot(root)
    res = manage.call("delete", {"path": "/memories/people"})
    assert not res.is_error and "1 file" in res.text
    assert snapshot(root).keys() == {"MEMORY.md"}
    assert not (root / "people").exists()


def test_delete_root_refused_and_missing(manage: Harness, root: Path) -> None:
    assert_unchanged_error(manage, root, "delete", {"path": "/memories"}, "cannot be deleted")
    assert_unchanged_error(manage, root, "delete", {"path": "/memories/ghost.md"}, "does not exist")


# -- rename -----------------------------------------------------------------------------
def test_rename_file_reports_frontmatter_name(manage: Harness, root: Path, alice: Path) -> None:
    res = manage.call(
        "rename", {"old_path": "/memories/people/alice.md", "new_path": "/memories/family/sister.md"}
    )
    assert not res.is_error
    assert "'alice'" in res.text and "'sister'" in res.text
    snap = snapshot(root)
    assert "family/sister.md" in snap and "people/alice.md" not in snap
    assert snap["family/sister.md"] == ALICE.encode()


def test_rename_folder(manage: Harness, root: Path, alice: Path) -> None:
    assert not manage.call(
        "rename", {"old_path": "/memories/people", "new_path": "/memories/a/persons"}
    ).is_error
    assert snapshot(root)["a/persons/alice.md"] == ALICE.encode()


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("/memories/people/alice.md", "/memories/MEMORY.md", "already exists"),
        ("/memories/people/alice.md", "/memories/people/alice.txt", "keeps its .md"),
        ("/memories/people", "/memories/people.md", "cannot become"),
        ("/memories/people", "/memories/people/inner", "into itself"),
        ("/memories/ghost.md", "/memories/g.md", "does not exist"),
        ("/memories", "/memories/x", "root"),
        ("/memories/people/alice.md", "/memoriesX/alice.md", "outside memory"),
    ],
)
def test_rename_errors(manage: Harness, root: Path, alice: Path, old: str, new: str, needle: str) -> None:
    assert_unchanged_error(manage, root, "rename", {"old_path": old, "new_path": new}, needle)


# -- argument binding -------------------------------------------------------------------
def test_unknown_and_missing_parameters(manage: Harness, root: Path) -> None:
    text = assert_unchanged_error(manage, root, "view", {"file": "/memories"}, "unknown parameter 'file'")
    assert "path" in text
    assert_unchanged_error(manage, root, "create", {"path": "/memories/a.md"}, "needs 'file_text'")
    assert_unchanged_error(
        manage, root, "view", {"path": "/memories/MEMORY.md", "start_line": "two"}, "must be an integer"
    )


def test_numeric_strings_are_accepted(search: Harness) -> None:
    res = search.call("view", {"path": "/memories/MEMORY.md", "start_line": "2", "end_line": "3"})
    assert not res.is_error and "(lines 2-3 of" in res.text


def test_meter_counts_bytes(manage: Harness, alice: Path) -> None:
    res = manage.call("view", {"path": "/memories/people/alice.md"})
    assert res.meter.bytes_read == len(ALICE.encode())
    assert res.meter.bytes_returned == len(res.text.encode())
    assert res.meter.files_touched == {"/memories/people/alice.md"}
    assert manage.meter.calls == 2


# -- the write path's cost (issue 47: as fast as the SDK helper it replaces) ------------------
def _yaml_loads(run: Callable[[], object]) -> int:
    """How many times `run` starts the YAML parser (safeyaml.load), counted by the profiler."""
    prof = cProfile.Profile()
    prof.runcall(run)
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    return sum(v[1] for (file, _, fn), v in stats.items() if file.endswith("safeyaml.py") and fn == "load")


def test_a_body_edit_does_not_parse_the_unchanged_frontmatter(manage: Harness, root: Path) -> None:
    """A str_replace or insert below the frontmatter leaves the block byte-identical, so every
    frontmatter rule gives what it gave before: the YAML parser (two parses of each text, most
    of a body edit's time on a file with `metadata:`) is not run at all."""
    text = "---\nname: bob\ndescription: Bob, a friend\nmetadata:\n  serial: '7'\n---\n# Bob\n\nkey: K7\n"
    assert not manage.call("create", {"path": "/memories/bob.md", "file_text": text}).is_error
    edit = {"path": "/memories/bob.md", "old_str": "key: K7", "new_str": "key: K7 (edited)"}
    assert _yaml_loads(lambda: manage.call("str_replace", edit)) == 0
    add = {"path": "/memories/bob.md", "insert_line": 6, "insert_text": "- bob | likes: tea [S1T1]"}
    assert _yaml_loads(lambda: manage.call("insert", add)) == 0
    fence = text.split("# Bob")[0]
    assert (root / "bob.md").read_text() == fence + "- bob | likes: tea [S1T1]\n# Bob\n\nkey: K7 (edited)\n"
    # A frontmatter edit is still checked whole: a key outside name/description/metadata refused.
    bad = {"path": "/memories/bob.md", "old_str": "metadata:", "new_str": "owner: me\nmetadata:"}
    before = (root / "bob.md").read_bytes()
    res = manage.call("str_replace", bad)
    assert res.is_error and "frontmatter would gain 'owner'" in res.text, res.text
    assert (root / "bob.md").read_bytes() == before
