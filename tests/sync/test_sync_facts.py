"""Merges at the fact level, and no fact lost (issue 50, items 2 and 3): two real stores and a
real bare remote; both learn different facts about one person, both change one keyed value,
both edit one line differently; a force-pushed remote that dropped a file."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import fm
from memdir.agents.revert import revert_operation
from memdir.analytics.integrity import check
from memdir.api import Memory
from memdir.conventions import SYNC_ONE, fact_identity, keyed_facts
from memdir.store.store import Store
from memdir.sync import clone, sync
from memdir.tools.wiring import open_store, release_store
from sync_helpers import bare_remote, call, create, memory_files, new_store, remote_files

ALICE = (
    "# Alice\n"
    "- Alice | city: Lisbon (since 2024-01-05) [S1T2]\n"
    "- Alice works as a nurse at the city hospital [S1T4]\n"
    "\n"
    "## Family\n"
    "- Alice's sister Carol lives in Porto [S2T1]\n"
)
PATH = "/memories/people/alice.md"


def _pair(tmp: Path) -> tuple[str, Path, Path]:
    remote = bare_remote(tmp)
    a = new_store(tmp / "a")
    create(a, PATH, ALICE, "alice")
    create(a, "/memories/people/bob.md", "# Bob\n- Bob plays the cello [S3T3]\n", "bob")
    sync(a, remote)
    b = tmp / "b"
    clone(remote, b)
    return remote, a, b


def _edit(root: Path, old: str, new: str) -> None:
    call(root, "str_replace", path=PATH, old_str=old, new_str=new)


def _facts(root: Path) -> set[object]:
    out = set()
    for text in memory_files(root).values():
        for line in text.decode().split("\n"):
            fact = fact_identity(line)
            if fact is not None:
                out.add(fact)
    return out


def _text(root: Path, path: str = PATH) -> str:
    return (root / path.removeprefix("/memories/")).read_text()


def test_two_stores_learn_different_facts_and_end_identical(tmp_path: Path) -> None:
    remote, a, b = _pair(tmp_path)
    # A: the city changes (dated supersede, as the curator writes it)
    _edit(
        a,
        "- Alice | city: Lisbon (since 2024-01-05) [S1T2]\n",
        "- ~~Alice | city: Lisbon~~ (2024-01-05 until 2024-06-01) [S1T2]\n"
        "- Alice | city: Berlin (since 2024-06-01) [S5T1]\n",
    )
    # B: more about the same person, in the same file, and its own (earlier) change of the city
    _edit(
        b,
        "- Alice's sister Carol lives in Porto [S2T1]\n",
        "- Alice's sister Carol lives in Porto [S2T1]\n- Alice's niece Ana was born in May [S4T2]\n",
    )
    _edit(
        b,
        "- Alice | city: Lisbon (since 2024-01-05) [S1T2]\n",
        "- ~~Alice | city: Lisbon~~ (2024-01-05 until 2024-03-10) [S1T2]\n"
        "- Alice | city: Madrid (since 2024-03-10) [S4T5]\n",
    )
    create(b, "/memories/people/carol.md", "# Carol\n- Carol is a pilot [S4T7]\n", "carol")
    before = _facts(a) | _facts(b)
    sync(a)
    merged = sync(b)
    assert merged.pulled and merged.pushed
    assert merged.superseded == [f"{PATH}: Alice | city"]
    sync(a)
    assert memory_files(a) == memory_files(b) == remote_files(remote)
    text = _text(a)
    assert "<<<<<<<" not in text and "=======" not in text and SYNC_ONE not in text
    city = [f for f in keyed_facts(PATH, text) if f.attribute == "city"]
    assert [(f.value, f.live, f.since, f.until) for f in city] == [
        ("Lisbon", False, "2024-01-05", "2024-03-10"),
        ("Madrid", False, "2024-03-10", "2024-06-01"),
        ("Berlin", True, "2024-06-01", None),
    ]
    # every fact of both stores is there, a struck-through value counting as its live line's
    after = _facts(a)
    missing = {f for f in before - after if "city" not in f[1]}
    assert not missing
    assert "Alice's niece Ana was born in May [S4T2]" in text
    assert (a / "people/carol.md").exists()
    store = Store(a)
    report = check(store)
    assert not [p for p in report.problems if p.rule in ("supersede", "sync-conflict")], report.problems


def test_a_line_edited_differently_keeps_both_marked_and_check_reports_it(tmp_path: Path) -> None:
    _remote, a, b = _pair(tmp_path)
    _edit(
        a, "works as a nurse at the city hospital [S1T4]", "works as a head nurse at the city hospital [S1T4]"
    )
    _edit(
        b,
        "works as a nurse at the city hospital [S1T4]",
        "works as a nurse at the children's hospital [S1T4]",
    )
    sync(a)
    report = sync(b)
    assert report.conflicts == [PATH]
    sync(a)
    text = _text(b)
    assert "head nurse at the city hospital" in text and "nurse at the children's hospital" in text
    assert "<<<<<<<" not in text and ">>>>>>>" not in text and "\n=======\n" not in text
    assert memory_files(a) == memory_files(b)
    problems = [p for p in check(Store(b)).problems if p.rule == "sync-conflict"]
    assert [p.path.split(":")[0] for p in problems] == [PATH]
    assert sync(a).in_sync and sync(b).in_sync  # the marked lines merge no further


def test_a_sync_is_one_operation_and_revert_undoes_it(tmp_path: Path) -> None:
    _remote, a, b = _pair(tmp_path)
    create(a, "/memories/people/dan.md", "# Dan\n- Dan bakes bread [S6T1]\n", "dan")
    sync(a)
    before = memory_files(b)
    report = sync(b)
    assert report.operation is not None
    assert memory_files(b) != before
    store = open_store(b)
    try:
        undone = revert_operation(store, report.operation)
    finally:
        release_store(store)
    assert undone.operation == report.operation
    assert memory_files(b) == before


def _force_push_without(remote: str, tmp: Path, name: str) -> None:
    """Someone rewrites the remote's branch by hand: a new history without `name`, force-pushed."""
    work = tmp / "hand"
    subprocess.run(["git", "clone", "--quiet", "-b", "main", remote, str(work)], check=True)
    env = ["-c", "user.name=someone", "-c", "user.email=someone@example.com"]
    subprocess.run(["git", "-C", str(work), "checkout", "--quiet", "--orphan", "fresh"], check=True)
    subprocess.run(["git", "-C", str(work), "rm", "--quiet", "--cached", name], check=True)
    (work / name).unlink()
    subprocess.run(["git", "-C", str(work), *env, "commit", "--quiet", "-m", "start over"], check=True)
    subprocess.run(["git", "-C", str(work), "push", "--quiet", "--force", "origin", "fresh:main"], check=True)


def test_a_force_pushed_remote_that_dropped_a_file_deletes_nothing_here(tmp_path: Path) -> None:
    remote, a, _b = _pair(tmp_path)
    _force_push_without(remote, tmp_path, "people/bob.md")
    assert "people/bob.md" not in remote_files(remote)
    report = sync(a)
    assert (a / "people/bob.md").exists()
    assert report.kept == ["/memories/people/bob.md: - Bob plays the cello [S3T3]"]
    assert "people/bob.md" in remote_files(remote)  # sent back, as a fast-forward of the new history
    assert memory_files(a) == remote_files(remote)


def test_a_file_deleted_on_the_remote_keeps_its_facts_here_and_says_so(tmp_path: Path) -> None:
    remote, a, b = _pair(tmp_path)
    call(b, "delete", path="/memories/people/bob.md")
    sync(b)
    report = sync(a)
    assert report.kept == ["/memories/people/bob.md: - Bob plays the cello [S3T3]"]
    assert "Bob plays the cello [S3T3]" in _text(a, "/memories/people/bob.md")
    assert "people/bob.md" in remote_files(remote)


def test_folder_indexes_are_regenerated_not_merged(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    with Memory(a) as memory:  # the API keeps folder indexes, as the file tools' upkeep does
        memory.call("create", {"path": "/memories/people/alice.md", "file_text": fm("alice", "Alice", ALICE)})
        sync_report = memory.sync(remote)
    assert sync_report.pushed
    b = tmp_path / "b"
    clone(remote, b)
    with Memory(a) as memory:
        memory.call(
            "create", {"path": "/memories/people/xia.md", "file_text": fm("xia", "Xia", "- x [S7T1]\n")}
        )
    with Memory(b) as memory:
        memory.call(
            "create", {"path": "/memories/people/yuri.md", "file_text": fm("yuri", "Yuri", "- y [S8T1]\n")}
        )
    sync(a)
    sync(b)
    sync(a)
    index = (a / "people/MEMORY.md").read_text()
    assert "[xia.md](xia.md): Xia" in index and "[yuri.md](yuri.md): Yuri" in index, index
    assert "memdir sync" not in index
    assert memory_files(a) == memory_files(b) == remote_files(remote)


def test_a_value_the_remote_replaced_without_its_date_stays_as_a_past_value(tmp_path: Path) -> None:
    """The other store overwrote the live city with a new one instead of striking it through:
    the old value is kept here as a past value ending when the new one began."""
    _, a, b = _pair(tmp_path)
    _edit(
        b,
        "- Alice | city: Lisbon (since 2024-01-05) [S1T2]\n",
        "- Alice | city: Faro (since 2024-09-09) [S9T1]\n",
    )
    sync(b)
    report = sync(a)
    assert report.kept == [f"{PATH}: - Alice | city: Lisbon (since 2024-01-05) [S1T2]"]
    city = [f for f in keyed_facts(PATH, _text(a)) if f.attribute == "city"]
    assert [(f.value, f.live, f.until) for f in city] == [
        ("Lisbon", False, "2024-09-09"),
        ("Faro", True, None),
    ]
