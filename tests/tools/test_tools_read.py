"""toc, section_read and grep, read-only, with ripgrep and with the Python scan."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import fm, snapshot

from memdir.tools.profiles import Harness

NOTES = fm(
    "notes",
    "setup notes",
    "# Notes\nintro\n## Setup\nstep one\n### Dependencies\npython 3.11\n## Usage\nrun it\n# Appendix\nend\n",
)


@pytest.fixture
def notes(manage: Harness, root: Path) -> Path:
    assert not manage.call("create", {"path": "/memories/docs/notes.md", "file_text": NOTES}).is_error
    manage.call(
        "create",
        {"path": "/memories/docs/other.md", "file_text": fm("other", "Other DOC", "Python is here\n")},
    )
    return root / "docs" / "notes.md"


def test_toc(search: Harness, notes: Path) -> None:
    text = search.call("toc", {"path": "/memories/docs/notes.md"}).text
    assert text.split("\n")[1:] == [
        "# Notes  [lines 5-12]",
        "  ## Setup  [lines 7-10]",
        "    ### Dependencies  [lines 9-10]",
        "  ## Usage  [lines 11-12]",
        "# Appendix  [lines 13-14]",
    ]


def test_toc_without_headings(search: Harness, manage: Harness) -> None:
    manage.call("create", {"path": "/memories/flat.md", "file_text": fm("flat", body="just text\n")})
    assert "has no headings" in search.call("toc", {"path": "/memories/flat.md"}).text


def test_section_read_includes_subsections(search: Harness, notes: Path) -> None:
    res = search.call(
        "section_read", {"path": "/memories/docs/notes.md", "section_path": "# Notes > ## Setup"}
    )
    assert not res.is_error
    assert res.text.split("\n") == [
        "/memories/docs/notes.md > # Notes > ## Setup (lines 7-10)",
        "     7\t## Setup",
        "     8\tstep one",
        "     9\t### Dependencies",
        "    10\tpython 3.11",
    ]


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ("## Setup", "top-level heading"),
        ("# Notes > ## Missing", "no section"),
        ("Notes > Setup", "level markers"),
        ("# Notes>## Setup", "spaces required"),
    ],
)
def test_section_read_errors(search: Harness, root: Path, notes: Path, section: str, needle: str) -> None:
    before = snapshot(root)
    res = search.call("section_read", {"path": "/memories/docs/notes.md", "section_path": section})
    assert res.is_error and needle in res.text
    assert snapshot(root) == before


def test_section_read_duplicate_paths_are_pointed_out(search: Harness, manage: Harness) -> None:
    manage.call("create", {"path": "/memories/dup.md", "file_text": fm("dup", body="# A\none\n# A\ntwo\n")})
    res = search.call("section_read", {"path": "/memories/dup.md", "section_path": "# A"})
    assert "one" in res.text and "starts at line 7" in res.text


@pytest.fixture(params=["ripgrep", "python"])
def grep_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setenv("MEMDIR_GREP", "python")
    return str(request.param)


def test_grep_lines_paths_and_frontmatter(search: Harness, notes: Path, grep_engine: str) -> None:
    res = search.call("grep", {"pattern": "python"})
    assert res.text.split("\n")[1:] == [
        "/memories/docs/notes.md:10: python 3.11",
        "/memories/docs/other.md:5: Python is here",
    ]
    res = search.call("grep", {"pattern": "python", "case_sensitive": True})
    assert res.text.split("\n")[1:] == ["/memories/docs/notes.md:10: python 3.11"]
    res = search.call("grep", {"pattern": "^description: Other", "case_sensitive": True})
    assert "/memories/docs/other.md:3: description: Other DOC" in res.text


def test_grep_scope_max_results_and_no_cross_line(search: Harness, notes: Path, grep_engine: str) -> None:
    res = search.call("grep", {"pattern": "o", "path": "/memories/docs/other.md"})
    assert all(line.startswith("/memories/docs/other.md:") for line in res.text.split("\n")[1:])
    res = search.call("grep", {"pattern": "e", "max_results": 2})
    assert len(res.text.split("\n")) == 3 and "stopped at max_results=2" in res.text
    res = search.call("grep", {"pattern": "intro.*Setup"})
    assert res.text.startswith("No lines match")
    res = search.call("grep", {"pattern": r"(?<=step )one"})
    assert "/memories/docs/notes.md:8: step one" in res.text


def test_grep_only_md_files(search: Harness, root: Path, notes: Path, grep_engine: str) -> None:
    (root / "docs" / "data.txt").write_text("python\n")
    res = search.call("grep", {"pattern": "python", "path": "/memories/docs"})
    assert "data.txt" not in res.text
    res = search.call("grep", {"pattern": "python", "path": "/memories/docs/data.txt"})
    assert res.is_error and "not a .md file" in res.text


@pytest.mark.parametrize(("pattern", "needle"), [("(unclosed", "invalid regex"), ("", "empty")])
def test_grep_errors(search: Harness, notes: Path, grep_engine: str, pattern: str, needle: str) -> None:
    res = search.call("grep", {"pattern": pattern})
    assert res.is_error and needle in res.text


def test_grep_long_lines_are_clipped(search: Harness, manage: Harness, grep_engine: str) -> None:
    manage.call(
        "create", {"path": "/memories/long.md", "file_text": fm("long", body="needle " + "x" * 5000 + "\n")}
    )
    res = search.call("grep", {"pattern": "needle"})
    assert "more characters]" in res.text and len(res.text) < 1000


def test_toc_and_section_read_carry_structured_results(search: Harness, notes: Path) -> None:
    r = search.call("toc", {"path": "/memories/docs/notes.md"})
    assert r.data is not None and r.data["path"] == "/memories/docs/notes.md" and r.data["lines"] == 14
    assert [(s["heading_path"], s["start_line"], s["end_line"]) for s in r.data["sections"]] == [
        ("# Notes", 5, 12),
        ("# Notes > ## Setup", 7, 10),
        ("# Notes > ## Setup > ### Dependencies", 9, 10),
        ("# Notes > ## Usage", 11, 12),
        ("# Appendix", 13, 14),
    ]
    assert r.data["sections"][2] == {
        "heading": "### Dependencies",
        "heading_path": "# Notes > ## Setup > ### Dependencies",
        "level": 3,
        "depth": 3,
        "start_line": 9,
        "end_line": 10,
    }
    r = search.call("section_read", {"path": "/memories/docs/notes.md", "section_path": "# Notes > ## Usage"})
    assert r.data == {
        "path": "/memories/docs/notes.md",
        "heading_path": "# Notes > ## Usage",
        "start_line": 11,
        "end_line": 12,
        "same_path_at": [],
    }


def test_grep_carries_its_hits_as_data(search: Harness, notes: Path) -> None:
    r = search.call("grep", {"pattern": "python"})
    assert r.data == {
        "pattern": "python",
        "path": "/memories",
        "matches": [
            {"path": "/memories/docs/notes.md", "line": 10, "text": "python 3.11"},
            {"path": "/memories/docs/other.md", "line": 5, "text": "Python is here"},
        ],
        "truncated": False,
    }
    capped = search.call("grep", {"pattern": "python", "max_results": 1}).data
    assert capped is not None and len(capped["matches"]) == 1 and capped["truncated"] is True
