"""A rename rewrites the `see /memories/...` references to what it moved (issue 46, item 11):
the rename tool with the product's folder index keeping and `adopt --rename`, store-wide and in the
same journaled step, folders included; anything that is not such a reference stays as written."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.analytics.integrity import check
from memdir.cli.main import cli
from memdir.store.journal import Journal
from memdir.store.retarget import moved_to, retarget
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def note(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n{body}"


def _kept(tmp_path: Path) -> Harness:
    return Harness(open_store(tmp_path / "mem", create=True, init=True), "manage", keep_indexes=True)


def ok(h: Harness, name: str, **args: object) -> str:
    result = h.call(name, dict(args))
    assert not result.is_error, result.text
    return result.text


def dangling(h: Harness) -> list[str]:
    return [p.path for p in check(h.store).problems if p.rule == "dangling-xref"]


def test_retarget_moves_only_the_path_of_a_reference() -> None:
    moves = {"/memories/people/bob.md": "/memories/people/robert.md", "/memories/work": "/memories/job"}
    assert moved_to("/memories/work/acme/q3.md", moves) == "/memories/job/acme/q3.md"
    assert moved_to("/memories/work/", moves) == "/memories/job/"
    assert moved_to("/memories/workshop.md", moves) is None
    text = (
        "- Bob: see /memories/people/bob.md.\r\n"
        "See /memories/people/bob.md > ## Work, and see /memories/work/acme/q3.md\n"
        "see /memories/people/bobby.md; [bob](/memories/people/bob.md)\n"
    )
    assert retarget(text, moves) == (
        "- Bob: see /memories/people/robert.md.\r\n"
        "See /memories/people/robert.md > ## Work, and see /memories/job/acme/q3.md\n"
        "see /memories/people/bobby.md; [bob](/memories/people/bob.md)\n"
    )


def test_the_rename_tool_rewrites_references_store_wide_in_one_step(tmp_path: Path) -> None:
    h = _kept(tmp_path)
    ok(
        h,
        "create",
        path="/memories/people/bob.md",
        file_text=note("bob", "Bob, a colleague", "## Work\nLeads the team.\n"),
    )
    ok(h, "create", path="/memories/people/bobby.md", file_text=note("bobby", "Bobby, a dog"))
    body = "- Bob leads the team; see /memories/people/bob.md > # bob\n- see /memories/people/bobby.md\n"
    ok(h, "create", path="/memories/work/team.md", file_text=note("team", "The team", body))
    ok(
        h,
        "create",
        path="/memories/core.md",
        file_text=note("core", "Core", "Colleagues: see /memories/people/bob.md.\n"),
    )
    steps = len(Journal(h.store.root).steps())
    ok(h, "rename", old_path="/memories/people/bob.md", new_path="/memories/people/robert.md")
    team = h.store.read_text("/memories/work/team.md")
    # Before: both references still named bob.md, which no longer exists.
    assert "see /memories/people/robert.md > # bob" in team
    assert "see /memories/people/bobby.md" in team  # another file, a longer name: not touched
    assert "Colleagues: see /memories/people/robert.md." in h.store.read_text("/memories/core.md")
    assert dangling(h) == []
    journal = Journal(h.store.root).steps()
    assert len(journal) == steps + 1 and journal[-1].tool == "rename"
    assert {c.path for c in journal[-1].changes if c.kind == "modify"} >= {
        "/memories/work/team.md",
        "/memories/core.md",
    }


def test_a_folder_rename_rewrites_references_below_it_inside_and_out(tmp_path: Path) -> None:
    h = _kept(tmp_path)
    ok(h, "create", path="/memories/work/acme/q3.md", file_text=note("q3", "Q3 at Acme"))
    inside = "Plan: see /memories/work/acme/q3.md\n"
    ok(h, "create", path="/memories/work/plan.md", file_text=note("plan", "Plan", inside))
    ok(
        h,
        "create",
        path="/memories/me.md",
        file_text=note("me", "Me", "Job: see /memories/work/acme/q3.md\n"),
    )
    ok(h, "rename", old_path="/memories/work", new_path="/memories/job")
    assert "Plan: see /memories/job/acme/q3.md" in h.store.read_text("/memories/job/plan.md")
    assert "Job: see /memories/job/acme/q3.md" in h.store.read_text("/memories/me.md")
    assert dangling(h) == []


def test_the_studys_rename_leaves_references_as_its_contract_says(tmp_path: Path) -> None:
    study = Harness(open_store(tmp_path / "mem", create=True, init=True), "manage")
    ok(study, "create", path="/memories/a.md", file_text=note("a", "A"))
    ok(study, "create", path="/memories/b.md", file_text=note("b", "B", "see /memories/a.md\n"))
    ok(study, "rename", old_path="/memories/a.md", new_path="/memories/c.md")
    assert "see /memories/a.md" in study.store.read_text("/memories/b.md")


def test_adopt_rename_rewrites_references_to_the_renamed_notes(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "work").mkdir(parents=True)
    (root / "Weekly_Plan.md").write_text("Mon: dal\nsee /memories/work/Acme_Q3.md\n")
    (root / "work" / "Acme_Q3.md").write_text("# Q3\nsee /memories/Weekly_Plan.md > Mon\n")
    (root / "index.md").write_text(
        "---\nname: index\ndescription: Index\n---\n"
        "- see /memories/Weekly_Plan.md\n- see /memories/work/Acme_Q3.md.\n"
    )
    res = CliRunner().invoke(cli, ["adopt", str(root), "--rename"])
    assert res.exit_code == 0, res.output
    # Before: every reference still named the old file names.
    assert "see /memories/work/acme-q3.md" in (root / "weekly-plan.md").read_text()
    assert "see /memories/weekly-plan.md > Mon" in (root / "work/acme-q3.md").read_text()
    index = (root / "index.md").read_text()
    assert "- see /memories/weekly-plan.md\n- see /memories/work/acme-q3.md.\n" in index
    assert "rewrite references: /memories/index.md" in res.output
    assert [p for p in check(open_store(root)).problems if p.rule == "dangling-xref"] == []
    assert len([s for s in Journal(root).steps() if s.tool == "adopt"]) == 1


KILLED_RENAME = r"""
import os, signal, sys
from memdir.store.store import StoreObserver
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

root, kill_at, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
state = {"armed": False, "seen": 0}


def hook(event, args):  # every file creation, rename, removal or folder change of the rename's step
    if not state["armed"]:
        return
    if event == "open":
        if not (len(args) > 2 and isinstance(args[2], int) and args[2] & WRITE):
            return
    elif event not in ("os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.truncate"):
        return
    state["seen"] += 1
    if state["seen"] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


class Arm(StoreObserver):
    def before_step(self, store, step):
        state["armed"] = step.tool == "rename"

    def on_step(self, store, step):
        return None

    def after_step(self, store, step):
        state["armed"] = False


sys.addaudithook(hook)
h = Harness(open_store(root), "manage", keep_indexes=True)
h.store.observers.append(Arm())
r = h.call("rename", {"old_path": "/memories/people/bob.md", "new_path": "/memories/people/robert.md"})
assert not r.is_error, r.text
with open(out, "w") as fh:
    fh.write(str(state["seen"]))
"""


@pytest.mark.slow
def test_a_rename_killed_at_any_write_lands_with_all_its_references_or_none(tmp_path: Path) -> None:
    h = _kept(tmp_path)
    bob = note("bob", "Bob, a colleague", "- 2023-05-01: Bob joined Acme [S1T2]\n")
    ok(h, "create", path="/memories/people/bob.md", file_text=bob)
    for name in ("team", "core", "plan"):
        ok(
            h,
            "create",
            path=f"/memories/{name}.md",
            file_text=note(name, name, "see /memories/people/bob.md\n"),
        )
    for obs in h.store.observers:  # the journal's committer done before the store is copied
        getattr(obs, "settled", lambda: True)()
    template, counted = tmp_path / "mem", tmp_path / "points"
    shutil.copytree(template, tmp_path / "count")
    res = subprocess.run([sys.executable, "-c", KILLED_RENAME, str(tmp_path / "count"), "0", str(counted)])
    assert res.returncode == 0
    points = int(counted.read_text())
    outcomes = []
    for k in range(1, points + 1):
        root = tmp_path / f"kill{k}"
        shutil.copytree(template, root)
        killed = subprocess.run([sys.executable, "-c", KILLED_RENAME, str(root), str(k), str(counted)])
        assert killed.returncode == -signal.SIGKILL, k
        store = open_store(root)
        with store.step("probe"):  # the next writer: a stopped landing is rolled forward first
            pass
        where = [p for p in ("bob", "robert") if store.exists(f"/memories/people/{p}.md")]
        assert len(where) == 1, (k, where)
        assert "Bob joined Acme [S1T2]" in store.read_text(f"/memories/people/{where[0]}.md")
        refs = {
            store.read_text(f"/memories/{n}.md").rsplit("see ", 1)[1].strip()
            for n in ("team", "core", "plan")
        }
        assert refs == {f"/memories/people/{where[0]}.md"}, (k, refs)
        outcomes.append(where[0])
    # Before the intent record is in place nothing has moved; from then on all of it has.
    assert outcomes == sorted(outcomes) and outcomes.count("robert") > points // 2, (points, outcomes)
