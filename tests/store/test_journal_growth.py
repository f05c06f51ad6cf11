"""The journal records every write through the tools; growth replays it exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memdir.analytics.growth import replay
from memdir.cli.main import cli
from memdir.store.journal import Journal
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\n{body}\n"


# (tool, args, per-call meta). n = 12 tool steps, so fates are taken after step ceil(12/4) = 3.
SEQUENCE: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "create",
        {"path": "/memories/a.md", "file_text": md("a", "# A\n## One\nfirst fact [S1T1]")},
        {"chunk": 1},
    ),
    ("create", {"path": "/memories/b.md", "file_text": md("b", "b has no heading [S1T2]")}, {"chunk": 1}),
    ("create", {"path": "/memories/d.md", "file_text": md("d", "# D\ndoomed [S1T3]")}, {"chunk": 2}),
    ("str_replace", {"path": "/memories/a.md", "old_str": "first", "new_str": "1st"}, {"chunk": 2}),
    ("rename", {"old_path": "/memories/b.md", "new_path": "/memories/notes/b.md"}, {"chunk": 3}),
    ("delete", {"path": "/memories/d.md"}, {"chunk": 3}),
    ("create", {"path": "/memories/c.md", "file_text": md("c", "# C\ntext")}, {"chunk": 4}),
    (
        "insert",
        {"path": "/memories/c.md", "insert_line": 6, "insert_text": "## More\nmore text"},
        {"chunk": 4},
    ),
    (
        "str_replace",
        {"path": "/memories/notes/b.md", "old_str": "no heading", "new_str": "none"},
        {"chunk": 5},
    ),
    ("create", {"path": "/memories/e.md", "file_text": md("e", "short-lived")}, {"chunk": 5}),
    ("delete", {"path": "/memories/e.md"}, {"chunk": 6}),
    ("rename", {"old_path": "/memories/c.md", "new_path": "/memories/c2.md"}, {"chunk": 6}),
]


def disk_state(root: Path) -> tuple[int, int, int]:
    """(files, headings, bytes) of the visible .md files, read straight from disk."""
    files = [p for p in root.rglob("*.md") if ".memdir" not in p.parts]
    heads = sum(1 for p in files for ln in p.read_text().split("\n") if ln.startswith("#"))
    return len(files), heads, sum(p.stat().st_size for p in files)


def run_sequence(tmp_path: Path) -> tuple[Path, list[tuple[int, int, int]]]:
    root = tmp_path / "store"
    root.mkdir()
    (root / "MEMORY.md").write_text(
        "---\ndescription: root\n---\n# Memory\n", encoding="utf-8"
    )  # pre-journal
    store = open_store(root)
    harness = Harness(store, "manage", role="manage")
    expected = [disk_state(root)]
    for tool, args, meta in SEQUENCE:
        res = harness.call(tool, args, **meta)
        assert not res.is_error, res.text
        expected.append(disk_state(root))
        bad = harness.call("create", {"path": "/memories/MEMORY.md", "file_text": "x"})  # fails: not a step
        assert bad.is_error
    return root, expected


def test_journal_records_one_step_per_call(tmp_path: Path) -> None:
    root, _ = run_sequence(tmp_path)
    steps = Journal(root).steps()
    assert [s.tool for s in steps] == ["baseline"] + [t for t, _, _ in SEQUENCE]
    assert all(s.meta["role"] == "manage" for s in steps[1:])
    assert [s.meta["chunk"] for s in steps[1:]] == [str(m["chunk"]) for _, _, m in SEQUENCE]
    assert [(c.kind, c.path, c.new_path) for c in steps[5].changes] == [
        ("rename", "/memories/b.md", "/memories/notes/b.md")
    ]
    # The journal is invisible to agents: not listed, not searchable.
    harness = Harness(open_store(root), "search")
    assert ".memdir" not in harness.call("view", {"path": "/memories"}).text
    assert "Memdir-Tool" not in harness.call("grep", {"pattern": "Memdir"}).text


def test_history_cli_lists_steps(tmp_path: Path) -> None:
    root, _ = run_sequence(tmp_path)
    res = CliRunner().invoke(cli, ["history", str(root), "--steps", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == 13 and rows[0]["tool"] == "baseline" and rows[12]["chunk"] == "6"
    assert rows[12]["changes"] == [["rename", "/memories/c.md", "/memories/c2.md"]]


def test_growth_replays_the_sequence(tmp_path: Path) -> None:
    root, expected = run_sequence(tmp_path)
    g = replay(Journal(root), every=4)
    assert [(s["files"], s["sections"], s["bytes"]) for s in g.steps] == expected
    last = g.steps[-1]
    assert (last["cum_creations"], last["cum_edits"], last["cum_deletions"], last["cum_renames"]) == (
        5,
        3,
        2,
        2,
    )
    assert [s["creations"] for s in g.steps] == [0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0]
    assert g.fate_step == 3
    assert {p: f["fate"] for p, f in g.fates.items()} == {
        "/memories/MEMORY.md": "untouched",
        "/memories/a.md": "edited",
        "/memories/b.md": "renamed",  # renamed, then edited: renamed wins
        "/memories/d.md": "deleted",
    }
    assert g.fates["/memories/b.md"]["path"] == "/memories/notes/b.md"
    assert [a["step"] for a in g.adherence] == [0, 4, 8, 12]
    assert g.adherence[-1]["memdir_files"] == expected[-1][0]  # the steps count index files too


def test_growth_cli_writes_json_and_plots(tmp_path: Path) -> None:
    root, _ = run_sequence(tmp_path)
    out = tmp_path / "growth"
    res = CliRunner().invoke(cli, ["growth", str(root), "--every", "5", "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "growth.json").read_text())
    assert data["steps"] == 12 and data["fate"]["counts"] == {
        "untouched": 1,
        "edited": 1,
        "renamed": 1,
        "deleted": 1,
    }
    for png in ("growth_size.png", "growth_events.png", "growth_adherence.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_first_step_commits_a_baseline_of_existing_files(tmp_path: Path) -> None:
    root = tmp_path / "s"
    (root / "old").mkdir(parents=True)
    (root / "old" / "x.md").write_text(md("x", "kept"), encoding="utf-8")
    store = open_store(root)
    assert not Journal(root).exists  # building a Store writes nothing
    Harness(store, "manage", task=7).call("create", {"path": "/memories/y.md", "file_text": md("y", "new")})
    steps = Journal(root).steps(raw=True)
    assert [s.tool for s in steps] == ["baseline", "create"]
    assert [p for _, _, p in steps[0].raw] == ["old/x.md"]
    assert steps[1].meta == {"task": "7"}


def test_a_broken_journal_does_not_fail_the_tool_call_and_keeps_the_step(tmp_path: Path) -> None:
    """The step is logged before the call returns, so a journal git cannot read (its HEAD
    overwritten) neither fails the call nor loses the step: once HEAD is mended, the first
    read commits it."""
    from memdir.store.journal.log import StepLog

    root = tmp_path / "s"
    root.mkdir()
    harness = Harness(open_store(root), "manage")
    assert not harness.call("create", {"path": "/memories/a.md", "file_text": md("a", "one")}).is_error
    head_file = root / ".memdir" / "journal.git" / "HEAD"
    good = head_file.read_text()
    head_file.write_text("garbage\n")
    res = harness.call("create", {"path": "/memories/b.md", "file_text": md("b", "two")})
    assert not res.is_error and (root / "b.md").exists()
    logged = StepLog(head_file.parent).pending(None)
    assert [r.files[0][0] for r in logged][-1:] == ["b.md"]
    head_file.write_text(good)
    steps = Journal(root).steps()
    assert [(s.tool, s.changes[0].path) for s in steps[-2:]] == [
        ("create", "/memories/a.md"),
        ("create", "/memories/b.md"),
    ]


def _tree_at(journal: Journal, rev: str) -> dict[str, str]:
    files = journal.files_at(rev)
    data = dict(journal.blobs(sorted(set(files.values()))))
    return {n: data[sha].decode() for n, sha in files.items()}


def test_steps_stage_their_own_paths_and_hand_edits_wait_for_a_full_step(tmp_path: Path) -> None:
    """A step costs its own paths, not the store's size; an edit made by hand outside the
    tools is folded into the next whole-tree step (the first of a process), never lost."""
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage", role="t")
    h.call("create", {"path": "/memories/a.md", "file_text": md("a", "one\n")})  # first: full
    (root / "hand.md").write_text(md("hand", "typed by hand\n"))  # outside the tools
    h.call("create", {"path": "/memories/b.md", "file_text": md("b", "two\n")})
    h.call("rename", {"old_path": "/memories/a.md", "new_path": "/memories/dir/a2.md"})
    j = Journal(root)
    tree = _tree_at(j, "HEAD")
    assert sorted(tree) == ["b.md", "dir/a2.md"]  # the rename is whole; the hand edit waits
    assert "typed by hand" not in "".join(tree.values())
    h2 = Harness(open_store(root), "manage", role="t")  # a new process: its first step is full
    h2.call("delete", {"path": "/memories/b.md"})
    assert sorted(_tree_at(j, "HEAD")) == ["dir/a2.md", "hand.md"]


def test_deleting_a_file_the_journal_never_saw_is_still_a_step(tmp_path: Path) -> None:
    import warnings

    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage", role="t")
    h.call("create", {"path": "/memories/a.md", "file_text": md("a", "one\n")})  # full step
    (root / "ghost.md").write_text(md("ghost", "by hand\n"))  # never staged by a path step
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed journal commit only warns: make it fail here
        h.call("delete", {"path": "/memories/ghost.md"})
    steps = Journal(root).steps()
    assert [s.tool for s in steps][-1] == "delete"
