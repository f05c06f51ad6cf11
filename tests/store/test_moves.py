"""Findings follow renames: the `MoveLog` sees every rename of a span (the tool's, a folder's,
the shell's), and `introduced` counts a moved file's findings as the old ones."""

from __future__ import annotations

from pathlib import Path

from tests.analytics.test_health import clean_store, content_store, write

from memdir.analytics.health import health, introduced
from memdir.store.moves import following_moves
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def test_the_log_composes_renames_and_sees_folders_move(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    store = open_store(root, index=False, journal=False)
    h = Harness(store, "manage")
    with following_moves(store) as moved:
        h.call_or_raise(
            "rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/people/robert.md"}
        )
        h.call_or_raise(
            "rename", {"old_path": "/memories/people/robert.md", "new_path": "/memories/people/rob.md"}
        )
        assert moved.moves == {"/memories/people/bob.md": "/memories/people/rob.md"}  # a -> b -> c is a -> c
        h.call_or_raise(
            "rename", {"old_path": "/memories/people/rob.md", "new_path": "/memories/people/bob.md"}
        )
        assert moved.moves == {}  # a move back home is no move
        h.call_or_raise("rename", {"old_path": "/memories/people", "new_path": "/memories/folks"})
        assert moved.moves["/memories/people"] == "/memories/folks"
        assert moved.moves["/memories/people/alice.md"] == "/memories/folks/alice.md"
    assert moved not in store.observers  # detached once the span ends
    h.call_or_raise("rename", {"old_path": "/memories/folks", "new_path": "/memories/people"})
    assert moved.moves["/memories/people"] == "/memories/folks"  # not seen after the span


def test_a_file_moving_out_of_a_folder_that_stays_is_no_folder_move(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    store = open_store(root, index=False, journal=False)
    with following_moves(store) as moved:
        Harness(store, "manage").call_or_raise(
            "rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/bob.md"}
        )
    assert moved.moves == {"/memories/people/bob.md": "/memories/bob.md"}


def test_renames_made_outside_the_tools_are_followed(tmp_path: Path) -> None:
    """The shell's edits reach the store as a before/after comparison (`record_external`),
    which infers a rename from a path that vanished and one that appeared with its content."""
    root = tmp_path / "m"
    clean_store(root)
    store = Store(root)
    before = {"/memories/people/bob.md": "h1", "/memories/people/alice.md": "h2"}
    after = {"/memories/people/bobby.md": "h1", "/memories/people/alice.md": "h2"}
    with following_moves(store) as moved, store.step("bash"):
        (root / "people/bob.md").rename(root / "people/bobby.md")
        store.record_external(before, after)
    assert moved.moves == {"/memories/people/bob.md": "/memories/people/bobby.md"}


def test_a_moved_files_findings_are_not_introduced(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    write(root, {"people/bob.md": (root / "people/bob.md").read_text() + "see /memories/people/erin.md\n"})
    store = open_store(root, index=False, journal=False)
    before = health(store)
    (dangling,) = [f for f in before.findings if f.kind == "dangling-ref"]
    with following_moves(store) as moved:
        Harness(store, "manage").call_or_raise(
            "rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/people/robert.md"}
        )
    after = health(store)
    (still,) = [f for f in after.findings if f.kind == "dangling-ref"]
    assert still.path == "/memories/people/robert.md" and still.key != dangling.key
    assert [f.key for f in introduced(before, after)] == [still.key]  # by path alone: "new"
    assert introduced(before, after, moved.moves) == []
    write(root, {"people/alice.md": (root / "people/alice.md").read_text() + "see /memories/nowhere.md\n"})
    later = health(store)
    assert [f.detail["target"] for f in introduced(before, later, moved.moves)] == ["/memories/nowhere.md"]


def test_a_pair_re_keyed_in_another_order_is_the_same_pair(tmp_path: Path) -> None:
    """A pair's key sorts its two refs; a move that reorders them must still match."""
    root = tmp_path / "m"
    content_store(root)
    store = open_store(root, index=False, journal=False)
    before = health(store)
    (dup,) = [f for f in before.findings if f.kind == "near-duplicate"]
    assert dup.key == "near-duplicate:/memories/cooking/k0-copy.md|/memories/cooking/k0.md"
    with following_moves(store) as moved:
        Harness(store, "manage").call_or_raise(
            "rename", {"old_path": "/memories/cooking/k0-copy.md", "new_path": "/memories/cooking/z-copy.md"}
        )
    after = health(store)
    (again,) = [f for f in after.findings if f.kind == "near-duplicate"]
    assert again.key == "near-duplicate:/memories/cooking/k0.md|/memories/cooking/z-copy.md"
    assert again not in introduced(before, after, moved.moves)
    assert again in introduced(before, after)


def test_a_pair_no_more_confusable_than_before_is_not_introduced(tmp_path: Path) -> None:
    """B1's pair is the store's one most confusable pair, and templated labels tie, so a pair
    filed later may take its place while the store got no more confusable. Only a pair closer
    than before's counts as introduced."""
    root = tmp_path / "m"

    def loaves(n: str) -> str:
        return (
            f"---\nname: {n}\ndescription: notes about {n} and loaves\n---\n# Loaves {n}\n"
            "## Log\n- a loaf of rye bread baked in the oven [S1T1]\n"
            "## Log\n- two loaves of spelt for the neighbours [S1T2]\n"
        )

    write(
        root,
        {"MEMORY.md": "---\nname: MEMORY\ndescription: Root index\n---\n# Memory\n", "z.md": loaves("z")},
    )
    store = open_store(root, index=False, journal=False)
    before = health(store)
    (pair,) = [f for f in before.findings if f.kind == "confusable"]
    assert pair.detail["distance"] == 0.0
    write(root, {"a.md": loaves("a")})
    after = health(store)
    (other,) = [f for f in after.findings if f.kind == "confusable"]
    assert other.key != pair.key  # another pair took its place
    new = introduced(before, after)
    assert new and all(f.kind == "near-duplicate" for f in new)  # what the copy did add
    empty = health(Store(tmp_path / "empty", create=True))
    assert other in introduced(empty, after)  # where there was none, it is new
