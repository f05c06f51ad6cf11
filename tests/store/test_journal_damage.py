"""A damaged journal (issue 33, defect 8): HEAD naming a commit whose object is gone, garbage or
nothing in the ref or in HEAD, snapshot objects deleted. Each is made on a real journal by
removing or overwriting its files, as a power cut or a hand edit would; then the next writer
must go on journaled, its write landing once and its call never raising, the damage reported
once (one warning, one `recovered` step whose message says what was lost and done), and
`history`, `at` and `revert` must work or say clearly why not."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from tests.conftest import fm
from tests.workers import journal_behind

from memdir.agents.revert import RevertError, revert
from memdir.api.memory import Memory
from memdir.errors import MemdirError
from memdir.store.journal import Journal
from memdir.store.journal.repair import NOTE
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def _journaled(root: Path, n: int = 3) -> Journal:
    h = Harness(open_store(root, create=True), "manage", role="t")
    for i in range(n):
        text = fm(f"f{i}", "a note", f"- 2023-05-0{i + 1}: fact {i} [S1T{i + 1}]\n")
        assert not h.call("create", {"path": f"/memories/f{i}.md", "file_text": text}).is_error
    for obs in h.store.observers:
        settled = getattr(obs, "settled", None)
        if settled is not None:
            settled()
    return Journal(root)


def _ref(journal: Journal) -> Path:
    return journal.git_dir / (journal.git_dir / "HEAD").read_text().split()[-1]


def _loose(journal: Journal, sha: str) -> Path:
    return journal.git_dir / "objects" / sha[:2] / sha[2:]


def _write(root: Path, name: str) -> tuple[bool, list[str]]:
    """One create through a new store (the next process's first write): (error?, journal warnings)."""
    h = Harness(open_store(root), "manage", role="next")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = h.call(
            "create", {"path": f"/memories/{name}.md", "file_text": fm(name, "later", "- later [S2T1]\n")}
        )
        for obs in h.store.observers:
            settled = getattr(obs, "settled", None)
            if settled is not None:
                settled()
    return res.is_error, [str(w.message) for w in seen if "journal" in str(w.message)]


def _missing_head(j: Journal) -> str:
    head = j.head()
    assert head is not None
    _loose(j, head).unlink()
    return head


def _garbage_ref(j: Journal) -> str:
    _ref(j).write_text("garbage\n")
    return "corrupted"


def _empty_ref(j: Journal) -> str:
    _ref(j).write_text("")
    return "corrupted"


def _empty_head(j: Journal) -> str:
    (j.git_dir / "HEAD").write_text("")
    return "HEAD"


DAMAGE: dict[str, Callable[[Journal], str]] = {
    "missing head commit": _missing_head,
    "garbage in the ref": _garbage_ref,
    "empty ref": _empty_ref,
    "empty HEAD": _empty_head,
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_head_is_repaired_by_the_next_writer_reported_once_and_writes_stay_journaled(
    tmp_path: Path, case: str
) -> None:
    root = tmp_path / "mem"
    j = _journaled(root)
    before = len(j.steps())
    named = DAMAGE[case](j)

    failed, warned = _write(root, "g0")
    assert not failed and (root / "g0.md").is_file()
    assert len(warned) == 1 and "journal was damaged" in warned[0] and named in warned[0], warned
    assert "recovered step" in warned[0] and ("reset to" in warned[0] or "new root" in warned[0])
    warned_first = warned[0].removeprefix("journal: ")
    failed, warned = _write(root, "g1")  # reported once: the next write is quiet
    assert not failed and warned == []
    assert not (j.git_dir / NOTE).exists()

    steps = Journal(root).steps()
    assert [s.tool for s in steps[-3:]] == ["recovered", "create", "create"]
    assert steps[-3].meta["recovered"] == warned_first
    assert [c.path for c in steps[-1].changes] == ["/memories/g1.md"]
    assert journal_behind(root) == []  # every write journaled, the files and the head agree
    lost = 1 if case == "missing head commit" else 0
    assert len(steps) == before - lost + 3

    report = revert(open_store(root), steps[-1].index)
    assert report.step is not None and not (root / "g1.md").exists()
    mem = Memory(root)
    assert [s.tool for s in mem.history()][: len(steps) + 1] == [*(s.tool for s in steps), "revert"]
    with mem.at(steps[-1].index) as snap:
        assert "/memories/g1.md" in snap.paths()


def test_a_reader_that_meets_a_garbage_ref_repairs_it_and_the_next_writer_reports_it(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    j = _journaled(root)
    before = [s.commit for s in j.steps()]
    _ref(j).write_text("garbage\n")
    assert [s.commit for s in Journal(root).steps()] == before  # not [] ("no history yet")
    failed, warned = _write(root, "g0")
    assert not failed and len(warned) == 1 and "no step was lost" in warned[0]
    assert [s.tool for s in Journal(root).steps()[len(before) :]] == ["recovered", "create"]


def test_a_journal_with_no_whole_commit_starts_again_from_the_files(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    j = _journaled(root)
    objects = j.git_dir / "objects"
    for sub in objects.iterdir():
        if sub.name not in ("info", "pack"):
            shutil.rmtree(sub)
    for pack in (objects / "pack").iterdir():
        pack.unlink()
    failed, warned = _write(root, "g0")
    assert not failed and len(warned) == 1 and "new root commit" in warned[0]
    steps = Journal(root).steps()
    assert [s.tool for s in steps] == ["recovered", "create"]
    assert journal_behind(root) == []


def test_a_step_whose_file_objects_are_gone_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    j = _journaled(root)
    steps = j.steps()
    repo = pygit2.Repository(str(j.git_dir))
    tip = repo[steps[-1].commit]
    assert isinstance(tip, pygit2.Commit)
    for entry in tip.tree:
        if entry.name == "f0.md":
            _loose(j, str(entry.id)).unlink()
    # Writes go on (the journal splices trees by id, it never reads the old blob).
    failed, warned = _write(root, "g0")
    assert not failed and warned == []
    mem = Memory(root)
    with pytest.raises(
        MemdirError, match=rf"step {steps[-1].index} \(commit {steps[-1].commit[:12]}\).*missing"
    ):
        mem.at(steps[-1].index)
    h = Harness(open_store(root), "manage", role="t")
    assert not h.call(
        "str_replace", {"path": "/memories/f0.md", "old_str": "fact 0", "new_str": "fact zero"}
    ).is_error
    edited = (root / "f0.md").read_bytes()
    with pytest.raises(RevertError, match=r"cannot be restored.*missing.*nothing was changed"):
        revert(open_store(root), len(Journal(root).steps()) - 1)  # needs f0.md's lost bytes
    assert (root / "f0.md").read_bytes() == edited
