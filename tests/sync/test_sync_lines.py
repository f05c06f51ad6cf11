"""The line merge's rules on small texts (docs/sync.md, "How two sides merge")."""

from __future__ import annotations

from memdir.conventions import SYNC_END, SYNC_ONE, SYNC_OTHER
from memdir.sync.keyed import settle
from memdir.sync.lines import merge_lines

BASE = "---\nname: alice\ndescription: Alice\n---\n# Alice\n- likes tea [S1T1]\n- works nights [S1T2]\n"


def _merge(base: str, ours: str, theirs: str) -> tuple[str, int]:
    out = merge_lines(base.split("\n"), ours.split("\n"), theirs.split("\n"))
    return "\n".join(out.lines), out.conflicts


def test_both_add_at_the_same_place_keeps_both_once() -> None:
    ours = BASE + "- has a cat [S2T1]\n"
    theirs = BASE + "- has a dog [S3T1]\n- has a cat [S2T1]\n"
    merged, conflicts = _merge(BASE, ours, theirs)
    assert conflicts == 0
    assert merged == BASE + "- has a cat [S2T1]\n- has a dog [S3T1]\n"


def test_frontmatter_both_changed_keeps_this_stores_and_merges_the_body() -> None:
    ours = BASE.replace("description: Alice", "description: Alice, a nurse") + "- b [S2T1]\n"
    theirs = BASE.replace("description: Alice", "description: Alice from Porto")
    merged, conflicts = _merge(BASE, ours, theirs)
    assert conflicts == 0 and SYNC_ONE not in merged
    assert merged == ours


def test_an_edit_outlives_a_removal_and_a_merge_merged_again_changes_nothing() -> None:
    ours = BASE.replace("- works nights [S1T2]\n", "")
    theirs = BASE.replace("works nights", "works night shifts")
    merged, _ = _merge(BASE, ours, theirs)
    assert "- works night shifts [S1T2]" in merged
    edited_a = BASE.replace("likes tea", "likes green tea")
    edited_b = BASE.replace("likes tea", "likes black tea")
    once, conflicts = _merge(BASE, edited_a, edited_b)
    assert conflicts == 1
    lines = once.split("\n")
    assert lines[lines.index(SYNC_ONE) : lines.index(SYNC_END) + 1] == [
        SYNC_ONE,
        "- likes green tea [S1T1]",
        SYNC_OTHER,
        "- likes black tea [S1T1]",
        SYNC_END,
    ]
    assert _merge(BASE, once, edited_b) == (once, 0)  # the same remote merged again after a kill
    assert _merge(BASE, edited_b, once) == (once, 0)  # and the other store taking the merge


def test_a_key_both_sides_changed_ends_on_one_timeline() -> None:
    base = "# A\n- Al | city: Rome (since 2020-01-01) [S1T1]\n"
    ours = (
        "# A\n- ~~Al | city: Rome~~ (2020-01-01 until 2022-01-01) [S1T1]\n"
        "- Al | city: Oslo (since 2022-01-01) [S2T1]\n"
    )
    theirs = (
        "# A\n- ~~Al | city: Rome~~ (2020-01-01 until 2021-01-01) [S1T1]\n"
        "- Al | city: Pisa (since 2021-01-01) [S3T1]\n"
    )
    merged, conflicts = _merge(base, ours, theirs)
    assert conflicts == 0
    lines, keys = settle(merged.split("\n"))
    assert keys == ["Al | city"]
    assert lines == [
        "# A",
        "- ~~Al | city: Rome~~ (2020-01-01 until 2021-01-01) [S1T1]",
        "- ~~Al | city: Pisa~~ (2021-01-01 until 2022-01-01) [S3T1]",
        "- Al | city: Oslo (since 2022-01-01) [S2T1]",
        "",
    ]
    assert settle(lines) == (lines, [])  # settled once is settled


def test_a_file_both_sides_made_keeps_one_frontmatter_and_both_bodies() -> None:
    ours = "---\nname: bob\ndescription: Bob, a cellist\n---\n# Bob\n- plays the cello [S1T1]\n"
    theirs = "---\nname: bob\ndescription: Bob from Oslo\n---\n# Bob\n- lives in Oslo [S2T1]\n"
    merged, conflicts = _merge("", ours, theirs)
    assert conflicts == 0
    assert merged == ours + "- lives in Oslo [S2T1]\n"
