"""The Agent Memory convention: init, validate, core-memory context and its budget."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import fm

from memdir.store import spec
from memdir.store.store import Store
from memdir.tokens import count_tokens
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def test_init_makes_smallest_valid_memory(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m", create=True)
    assert spec.validate(store).violations[0].rule == "root-index"
    assert spec.init(store) is True
    assert spec.init(store) is False
    assert spec.validate(store).valid
    assert [p.name for p in (tmp_path / "m").iterdir() if not p.name.startswith(".")] == ["MEMORY.md"]


def test_validate_lists_every_violation(manage: Harness, root: Path, store: Store) -> None:
    manage.call(
        "create",
        {
            "path": "/memories/people/alice.md",
            "file_text": fm("alice", body="see /memories/people/bob.md.\n"),
        },
    )
    manage.call(
        "create",
        {
            "path": "/memories/people/work/job.md",
            "file_text": fm("job", body="see /memories/people/alice.md\n"),
        },
    )
    (root / "people" / "Bad Name.md").write_text("no frontmatter\n")
    report = spec.validate(store)
    got = {(v.path, v.rule) for v in report.violations}
    assert got == {
        ("/memories/people", "dir-index"),
        ("/memories/people/work", "dir-index"),
        ("/memories/people/alice.md:5", "dangling-xref"),
        ("/memories/people/Bad Name.md", "frontmatter"),
    }
    manage.call("create", {"path": "/memories/people/MEMORY.md", "file_text": "# People\n"})
    manage.call("create", {"path": "/memories/people/work/MEMORY.md", "file_text": "# Work\n"})
    manage.call("create", {"path": "/memories/people/bob.md", "file_text": fm("bob")})
    manage.call("delete", {"path": "/memories/people/Bad Name.md"})
    assert spec.validate(store).valid


def test_skills_directory_is_governed_elsewhere(root: Path, store: Store) -> None:
    (root / "skills" / "pdf").mkdir(parents=True)
    (root / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs\n---\n")
    assert spec.validate(store).valid


def test_xrefs_strip_punctuation() -> None:
    assert spec.xrefs("a\nSee /memories/a.md, and see /memories/b/c.md.\n(see /memories/d.md)") == [
        (2, "/memories/a.md"),
        (2, "/memories/b/c.md"),
        (3, "/memories/d.md"),
    ]


def test_context_loads_core_and_lists_children(manage: Harness, store: Store) -> None:
    manage.call(
        "create",
        {"path": "/memories/profile.md", "file_text": fm("profile", "who the user is", "Name: Sam\n")},
    )
    manage.call(
        "create",
        {
            "path": "/memories/people/MEMORY.md",
            "file_text": "---\ndescription: people index\n---\n# People\n- alice.md\n",
        },
    )
    manage.call(
        "create", {"path": "/memories/people/alice.md", "file_text": fm("alice", body="SECRET-DETAIL\n")}
    )
    ctx = spec.context(store)
    assert ctx.text.index("/memories/MEMORY.md") < ctx.text.index("/memories/profile.md")
    assert "Name: Sam" in ctx.text
    assert '<memory_directory path="/memories/people">' in ctx.text and "people index" in ctx.text
    assert "SECRET-DETAIL" not in ctx.text  # nested markdown is not auto-loaded
    assert not ctx.over_budget


def test_a_child_index_is_shown_by_its_description_and_first_eight_lines(store: Store) -> None:
    """The opening skips blank lines and stops at eight, however long the index is (a 5 MB
    one is read line by line up to there, never split whole)."""
    lines = [f"- entry {k}" for k in range(400_000)]
    body = "# People\n\n\n" + "\n\n".join(lines) + "\n"
    (store.root / "people").mkdir()
    (store.root / "people" / "MEMORY.md").write_text("---\ndescription: people index\n---\n" + body)
    ctx = spec.context(store)
    opening = ctx.text.split('<memory_directory path="/memories/people">\n')[1]
    shown = opening.split("\n</memory_directory>")[0]
    assert shown.split("\n") == ["description: people index", "# People", *lines[:7]]


def test_context_budget_counts_core_tokens(manage: Harness, store: Store) -> None:
    big = "word " * 3000
    manage.call("create", {"path": "/memories/big.md", "file_text": fm("big", body=big)})
    ctx = spec.context(store, budget=1000)
    assert ctx.over_budget and ctx.tokens > 3000
    assert ctx.tokens >= count_tokens(big)
