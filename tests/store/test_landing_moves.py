"""A move whose bytes change too (issue 46, item 9): `adopt --rename` lands a renamed note as a
rename then a rewrite, so the note keeps its mode and the journal records the rename;
`revert` moves it back; a landing killed between the two, or before either, is rolled forward the
same way; and the intent record's folder is made private whatever the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import fm

from memdir.agents.landing import Plan, apply, plan
from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.store.journal import Journal
from memdir.store.landing_intent import INTENT, Intent, write
from memdir.store.store import Change
from memdir.tools.wiring import open_store

OLD = "/memories/Weekly_Plan.md"
NEW = "/memories/weekly-plan.md"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_adopt_rename_is_journaled_as_a_rename_and_keeps_the_notes_mode(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "Weekly_Plan.md").write_text("Mon: dal\n")
    (root / "Weekly_Plan.md").chmod(0o644)
    res = CliRunner().invoke(cli, ["adopt", str(root), "--rename"])
    assert res.exit_code == 0, res.output
    assert (root / "weekly-plan.md").read_text().endswith("---\nMon: dal\n")
    assert _mode(root / "weekly-plan.md") == 0o644
    changes = Journal(root).steps()[-1].changes
    # Before: a delete of the old name and a create of the new one, so revert could not move it back.
    assert Change("rename", OLD, NEW) in changes and Change("modify", NEW) in changes, changes
    assert not {c.kind for c in changes if OLD in (c.path, c.new_path)} - {"rename"}, changes


def test_revert_of_adopt_rename_by_operation_moves_the_note_back(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "Weekly_Plan.md").write_text("Mon: dal\n")
    (root / "Weekly_Plan.md").chmod(0o640)
    assert CliRunner().invoke(cli, ["adopt", str(root), "--rename"]).exit_code == 0
    op = Journal(root).steps()[-1].operation.id
    res = CliRunner().invoke(cli, ["revert", str(root), "--operation", op])
    assert res.exit_code == 0, res.output
    assert f"renamed {NEW} -> {OLD}" in res.output and f"restored {OLD}" in res.output
    assert (root / "Weekly_Plan.md").read_text() == "Mon: dal\n" and not (root / "weekly-plan.md").exists()
    assert _mode(root / "Weekly_Plan.md") == 0o640


@pytest.mark.parametrize("killed", ["before the move", "between the move and the rewrite"])
def test_a_move_and_rewrite_is_rolled_forward_keeping_the_mode(tmp_path: Path, killed: str) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    old, new = fm("a", "a note", "- a fact [S1T1]\n"), fm("b", "b note", "- a fact [S1T1]\n")
    with store.step("seed"):
        store.create("/memories/a.md", old)
    os.chmod(root / "a.md", 0o644)
    if killed != "before the move":
        os.rename(root / "a.md", root / "b.md")
    target: dict[str, bytes | None] = {"/memories/a.md": None, "/memories/b.md": new.encode()}
    rows = (("rename", "/memories/a.md", "/memories/b.md"), ("modify", "/memories/b.md", None))
    write(root / ".memdir", Intent("adopt", {}, target, rows))
    open_store(root)  # any process that opens the store finishes the landing first
    assert (root / "b.md").read_text() == new and not (root / "a.md").exists()
    # Before: the roll-forward wrote b.md as a new file, private (0600), when a.md's bytes differed.
    assert _mode(root / "b.md") == 0o644
    last = Journal(root).steps()[-1]
    assert last.tool == "adopt" and last.changes == [Change(k, p, n) for k, p, n in rows]
    assert not (root / ".memdir" / INTENT).exists()


def test_plan_pairs_a_named_move_whose_bytes_change_as_a_move_then_a_rewrite() -> None:
    a, b, c = "/memories/a.md", "/memories/b.md", "/memories/c.md"
    ops = plan({a: "1", c: "3"}, {b: "2", c: "4"}, {a: b})
    assert ops == Plan(renames=((a, b),), writes=(b, c))
    assert ops.needed == [b, c] and ops.old_side == [a, c]  # b holds nothing yet: not old side
    assert plan({a: "1"}, {b: "2"}) == Plan(deletes=(a,), creates=(b,))  # unnamed: as before
    assert plan({a: "1"}, {b: "1"}, {a: b}) == Plan(renames=((a, b),))  # same bytes: a move alone


def test_a_failed_move_and_rewrite_is_moved_back_with_its_mode(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    old = fm("a", "a note", "- a fact [S1T1]\n")
    with store.step("seed"):
        store.create("/memories/a.md", old)
        store.create("/memories/c.md", fm("c", "c note"))
    os.chmod(root / "a.md", 0o644)
    ops = Plan(
        renames=(("/memories/a.md", "/memories/b.md"),),
        writes=("/memories/b.md",),
        creates=("/memories/c.md/d.md",),  # placed after b.md, and refused: c.md is a file
    )
    new = {"/memories/b.md": fm("b", "b note").encode(), "/memories/c.md/d.md": fm("d").encode()}
    with pytest.raises(MemdirError, match="is a file"), store.step("adopt"):
        apply(store, ops, new, {"/memories/a.md": old.encode()})
    assert (root / "a.md").read_text() == old and not (root / "b.md").exists()
    # Before: b.md was removed and a.md made again, a new private file.
    assert _mode(root / "a.md") == 0o644
    assert not (root / ".memdir" / INTENT).exists()


def test_the_intent_records_folder_is_private_under_umask_0(tmp_path: Path) -> None:
    state = tmp_path / "mem" / ".memdir"
    state.parent.mkdir()
    was = os.umask(0)
    try:
        write(state, Intent("consolidate", {}, {}))
    finally:
        os.umask(was)
    # Before: 0777, made with the process umask.
    assert _mode(state) == 0o700 and _mode(state / INTENT) == 0o600
