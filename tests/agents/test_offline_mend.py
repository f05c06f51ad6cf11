"""The offline curator under live feedback (`--feedback health`): the findings a chunk introduced
are mended by rule (a folder over the fanout cap sharded, a dangling reference mended, a stale
live value struck through with its end date), every fact kept, and the run record says what was
found, done and left, as it does for a model. Real stores, real harness, real health."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import new_store, snapshot
from memdir.agents import RunRecord, manage_chunk
from memdir.agents.offline.curator import PEOPLE_INDEX, ROOT_INDEX
from memdir.agents.offline.mend import cut_ref, mend_findings
from memdir.agents.offline.shard import plan
from memdir.analytics.health import HealthReport, health, introduced
from memdir.analytics.integrity import check, diff_facts
from memdir.conventions import fact_identity
from memdir.models import get_model
from memdir.store import spec
from memdir.store.store import Store
from memdir.stream import Chunk, Turn, chunk_stream
from memdir.tools.profiles import Harness

ALICE = "/memories/people/alice"
PETS = f"{ALICE}/pets"
DAYS = [f"2022-{1 + i // 28:02d}-{1 + i % 28:02d}" for i in range(49)]  # with MEMORY.md: the cap, 50
NOTES = "/memories/alice-notes.md"
BOSTON = "- alice | home: Boston (since 2023-01-01) [S1T1]"
WALK = f"- Rex's first walk, see {PETS}/2022-01-03.md [S3T1]"
DIET = f"- Alice's diet is tracked, see {ALICE}/facts.md > ## diet [S1T2]"
DETAILS = f"Details: see {PETS}/2022-01-04.md."
# Alice's dog turns her pets folder's 51st entry (a year folder for 2023); her move gives her a
# live home in facts.md, so the one in the notes goes stale, and facts.md, now there, has no
# `## diet` for the notes' reference to point into.
CHUNK = chunk_stream(
    [
        Turn("S60T1", "Alice", "My dog Rex chased a squirrel today.", "2023-05-01"),
        Turn("S60T2", "Alice", "I moved to Seattle.", "2023-05-01"),
    ]
)[0]


def _index(title: str, lines: list[str]) -> str:
    return f"---\ndescription: {title}\n---\n# {title}\n" + "".join(ln + "\n" for ln in lines)


def _note(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name}\n---\n{body}"


def _plant(store: Any, files: dict[str, str]) -> None:
    with store.step("seed"):
        for path, text in files.items():
            (store.write if store.exists(path) else store.create)(path, text)


def _curated(store: Any) -> None:
    """A store as the curator leaves it, but Alice's pets folder holds 49 days directly (it was
    filed under a larger cap): at the cap of 50, one entry short of a finding."""
    files = {
        "/memories/MEMORY.md": ROOT_INDEX,
        "/memories/people/MEMORY.md": PEOPLE_INDEX + "- alice/: Alice\n",
        f"{ALICE}/MEMORY.md": _index("Alice", ["- pets/: what Alice said about pets, one file per day"]),
        f"{PETS}/MEMORY.md": _index("Alice on pets", [f"- {d}.md: Alice on pets, {d}" for d in DAYS]),
        NOTES: _note("alice-notes", "\n".join(["# Alice", BOSTON, WALK, DIET, DETAILS]) + "\n"),
    }
    for i, d in enumerate(DAYS):
        files[f"{PETS}/{d}.md"] = _note(d, f"# Alice on pets, {d}\n- {d}: Alice: walked Rex [S{i + 2}T1]\n")
    _plant(store, files)


def _manage(store: Any, chunk: Chunk, feedback: str) -> tuple[Any, RunRecord]:
    record = RunRecord(None)
    out = asyncio.run(manage_chunk(get_model("offline"), store, chunk, record=record, feedback=feedback))  # type: ignore[arg-type]
    return out, record


def _lines(record: RunRecord, kind: str) -> list[dict[str, Any]]:
    return [e for e in record.entries if e["kind"] == kind]


class Built:
    """Two copies of the curated store given the same chunk: with feedback, and without."""

    def __init__(self, root: Path) -> None:
        self.plain = new_store(root / "plain")  # the same chunk without feedback
        self.mended = new_store(root / "mended")
        for store in (self.plain, self.mended):
            _curated(store)
        self.before: HealthReport = health(self.mended)
        self.out, self.record = _manage(self.mended, CHUNK, "health")
        _, self.plain_record = _manage(self.plain, CHUNK, "none")
        self.after = health(self.mended)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("mend"))


def test_what_the_chunk_introduced_is_found_and_mended(built: Built) -> None:
    (sent,) = _lines(built.record, "feedback")
    keys = {f"stale-live:alice | home:{NOTES}:boston", f"dangling-ref:{NOTES}:{ALICE}/facts.md > ## diet"}
    keys.add(f"fanout:{PETS}")
    assert sent["introduced"] == 3 and {f["key"] for f in sent["findings"]} == keys
    assert not keys & built.after.keys  # each one gone
    (result,) = _lines(built.record, "feedback_result")
    assert result["introduced"] == 3 and result["mended"] == 3 and result["left"] == 0
    # nothing remains: the shard moved B1's confusable pair, which was there before the chunk
    # and is no more confusable now (renames followed: tests/store/test_moves.py)
    assert result["remaining"] == 0 and introduced(built.before, built.after) == []
    assert [o["kind"] for o in result["outcomes"]] == ["stale-live", "dangling-ref", "fanout"]
    assert all(o["acted"] for o in result["outcomes"])
    report = check(built.mended)
    assert not [p for p in report.problems if p.rule in ("dangling-xref", "fanout", "supersede")]
    assert spec.validate(built.mended).valid


def test_each_finding_is_mended_by_its_rule(built: Built) -> None:
    files = snapshot(built.mended)
    notes = files[NOTES].splitlines()
    assert "- ~~alice | home: Boston~~ (2023-01-01 until 2023-05-01) [S1T1]" in notes  # its locator kept
    assert f"- Alice's diet is tracked, see {ALICE}/facts.md [S1T2]" in notes
    # the shard: the days by year into 2022/, with the index lines that named them; the
    # references to them in other files pointed at their new paths
    assert f"- Rex's first walk, see {PETS}/2022/2022-01-03.md [S3T1]" in notes
    assert f"Details: see {PETS}/2022/2022-01-04.md." in notes
    assert sorted(p.rpartition("/")[2] for p in files if p.startswith(f"{PETS}/2022/")) == sorted(
        [*(f"{d}.md" for d in DAYS), "MEMORY.md"]
    )
    year = files[f"{PETS}/2022/MEMORY.md"]
    assert "# Alice on pets, 2022" in year and all(f"- {d}.md: Alice on pets, {d}" in year for d in DAYS)
    pets = files[f"{PETS}/MEMORY.md"].split("---\n# Alice on pets\n")[1].splitlines()
    assert pets == [f"- 2022/: 49 file(s), {DAYS[0]} to {DAYS[-1]}", "- 2023/: pets in 2023"]


def test_every_fact_is_kept(built: Built) -> None:
    """Against the same chunk filed without feedback: the shard moved facts and lost none; the
    only fact lines not found as they were are the three the mends rewrote, each still there,
    rewritten, with its locator."""
    d = diff_facts(built.plain, built.mended)
    assert d.moved == len(DAYS) and not d.unread and d.new_facts == d.old_facts
    assert sorted(f.text for f in d.missing) == sorted([BOSTON, WALK, DIET])
    now = snapshot(built.mended)[NOTES].splitlines()
    for line in (BOSTON, WALK, DIET):
        ident = fact_identity(line)
        assert ident is not None
        assert [ln for ln in now if (fact_identity(ln) or ((), ""))[0] == ident[0]]


def test_the_mend_is_metered_as_an_offline_step_of_its_own(built: Built) -> None:
    steps = _lines(built.record, "offline_step")
    assert [s.get("feedback") for s in steps] == [None, True]
    curate, mend = steps
    (result,) = _lines(built.record, "feedback_result")
    assert mend["tool_calls"] == result["tool_calls"] == len(mend["calls"]) == mend["harness"]["calls"]
    assert mend["harness"]["writes"] == result["writes"]
    assert built.out.extra["writes"] == curate["harness"]["writes"] + mend["harness"]["writes"]
    assert sum(c["name"] == "rename" for c in mend["calls"]) == len(DAYS)
    assert mend["baseline"] is True and mend["model"] == "offline"
    assert "feedback: 3 introduced, 3 mended, 0 left" in built.out.text


def test_without_feedback_nothing_of_it_runs(built: Built) -> None:
    assert not _lines(built.plain_record, "feedback") and not _lines(built.plain_record, "feedback_result")
    assert [s.get("feedback") for s in _lines(built.plain_record, "offline_step")] == [None]
    kinds = {f.kind for f in health(built.plain).findings}
    assert {"stale-live", "dangling-ref", "fanout"} <= kinds
    assert BOSTON in snapshot(built.plain)[NOTES]


def test_the_curator_still_files_into_the_sharded_folder(tmp_path: Path) -> None:
    """The shard follows the curator's own categories, so it finds a moved day through the
    indexes and adds to it rather than making a second file for that day."""
    store = new_store(tmp_path / "m")
    _curated(store)
    _manage(store, CHUNK, "health")
    later = chunk_stream([Turn("S61T1", "Alice", "My dog Rex got a new collar.", DAYS[4])])[0]
    _, record = _manage(store, later, "health")
    files = snapshot(store)
    assert "Alice: My dog Rex got a new collar. [S61T1]" in files[f"{PETS}/2022/{DAYS[4]}.md"]
    assert f"{PETS}/{DAYS[4]}.md" not in files
    assert [e["introduced"] for e in _lines(record, "feedback")] == [0]
    assert not _lines(record, "feedback_result")


def test_a_kind_it_does_not_mend_is_left_and_said_so(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    # a past home that ended after the date the chunk's new home begins: supersede-dates
    facts = "# Alice: keyed facts\n## home\n- ~~alice | home: Boston~~ (2023-01-01 until 2023-09-01) [S1T1]\n"
    _plant(store, {f"{ALICE}/facts.md": _note("facts", facts)})
    chunk = chunk_stream([Turn("S2T1", "Alice", "I moved to Seattle.", "2023-06-10")])[0]
    _, record = _manage(store, chunk, "health")
    (result,) = _lines(record, "feedback_result")
    assert (result["introduced"], result["mended"], result["remaining"], result["left"]) == (1, 0, 1, 1)
    (left,) = result["outcomes"]
    assert left["kind"] == "supersede-dates" and not left["acted"]
    assert left["note"] == "the offline curator does not mend supersede-dates findings"
    assert left["key"] in health(store).keys
    assert result["tool_calls"] == 0 and result["writes"] == 0


def _copy(store: Any, to: Path) -> Store:
    shutil.copytree(store.root, to, ignore=shutil.ignore_patterns(".memdir"))
    return Store(to)


def test_a_reference_to_a_missing_file_is_pointed_or_cut(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    lines = [
        "# Alice",
        "- Alice adopted Rex [S1T1]; see /memories/pets/rex.md",  # moved: one file of that name
        "- Alice's cat is Tom [S1T2] (see /memories/gone.md)",  # nowhere: cut, the fact stays
        "- see /memories/gone-too.md",  # nowhere, and nothing else on the line: it goes
        "- Alice's vet, see /memories/vet.md [S1T3]",  # two files of that name: left
    ]
    rex = _note("rex", "- Rex is a beagle [S1T4]\n")
    _plant(
        store,
        {
            NOTES: _note("alice-notes", "\n".join(lines) + "\n"),
            f"{PETS}/rex.md": rex,
            "/memories/people/bob/vet.md": _note("vet", "- Bob's vet [S2T1]\n"),
            "/memories/people/carol/vet.md": _note("vet", "- Carol's vet [S3T1]\n"),
        },
    )
    old = _copy(store, tmp_path / "old")
    res = mend_findings(
        Harness(store, "manage"), [f for f in health(store).findings if f.kind == "dangling-ref"]
    )
    notes = {o.key.rpartition(":")[2]: o for o in res.outcomes}
    assert notes["/memories/pets/rex.md"].note == f"pointed it at {PETS}/rex.md"
    assert notes["/memories/gone.md"].acted and notes["/memories/gone-too.md"].acted
    assert (
        not notes["/memories/vet.md"].acted and "2 entries have that name" in notes["/memories/vet.md"].note
    )
    assert res.left == 1
    assert snapshot(store)[NOTES].split("---\n")[2].splitlines() == [
        "# Alice",
        f"- Alice adopted Rex [S1T1]; see {PETS}/rex.md",
        "- Alice's cat is Tom [S1T2]",
        "- Alice's vet, see /memories/vet.md [S1T3]",
    ]
    d = diff_facts(old, store)
    assert sorted(f.text for f in d.missing) == sorted([lines[1], lines[2]])
    assert [f.key for f in health(store).findings if f.kind == "dangling-ref"] == [
        f"dangling-ref:{NOTES}:/memories/vet.md"
    ]


def test_a_reference_is_cut_with_its_separator() -> None:
    t = "/memories/x.md"
    assert cut_ref(f"- A fact [S1T1]; see {t}", t) == "- A fact [S1T1]"
    assert cut_ref(f"- A fact, see {t}, and more [S1T1]", t) == "- A fact, and more [S1T1]"
    assert cut_ref(f"- A fact (see {t} > ## Diet) [S1T1]", t) == "- A fact [S1T1]"
    assert cut_ref(f"- A fact, see {t} > ## Diet [S1T1]", t) == "- A fact [S1T1]"
    assert cut_ref(f"- See {t}.md for more", t) == f"- See {t}.md for more"  # another path: kept


def test_the_shard_plan_follows_the_curators_categories() -> None:
    def files(names: list[str]) -> dict[str, frozenset[str] | None]:
        return {n: None for n in names}

    days = [f"2022-01-{d:02d}.md" for d in range(1, 5)] + ["2023-02-01.md", "2023-02-02.md", "2024-01-01.md"]
    # days by year; a year with one day stays where it is
    assert plan(days, "pets", 6, files([*days, "MEMORY.md"])) == {"2022": days[:4], "2023": days[4:6]}
    # inside a year folder, by month
    months = [f"2022-{m:02d}-0{d}.md" for m in (1, 2) for d in (1, 2, 3)]
    assert plan(months, "2022", 5, files([*months, "MEMORY.md"])) == {
        "2022-01": months[:3],
        "2022-02": months[3:],
    }
    # a year too big for one subfolder goes by month
    assert plan(months, "pets", 5, files([*months, "MEMORY.md"])) == {
        "2022-01": months[:3],
        "2022-02": months[3:],
    }
    # other names by their first word; a name taken by a file gets a suffix; a folder of that
    # name that has room takes them
    names = ["rex-vet.md", "rex-food.md", "tom-vet.md", "tom-toys.md", "misc.md"]
    assert plan(names, "pets", 5, files([*names, "MEMORY.md"])) == {
        "rex": ["rex-vet.md", "rex-food.md"],
        "tom": ["tom-vet.md", "tom-toys.md"],
    }
    taken = {**files([*names, "MEMORY.md", "tom"]), "rex": frozenset({"MEMORY.md", "rex-walks.md"})}
    assert plan(names, "pets", 6, taken) == {
        "rex": ["rex-vet.md", "rex-food.md"],
        "tom-2": ["tom-vet.md", "tom-toys.md"],
    }
    # names that share no word: in runs of names, each run named by its ends
    lone = ["ant.md", "bee.md", "cat.md", "dog.md", "eel.md"]
    assert plan(lone, "misc", 4, files([*lone, "MEMORY.md"])) == {
        "ant-to-cat": lone[:3],
        "dog-to-eel": lone[3:],
    }
    # folders are not moved: when they alone fill the cap, no plan
    full = {**files(["a.md", "MEMORY.md"]), **{f"d{i}": frozenset() for i in range(5)}}
    assert plan(["a.md"], "x", 5, full) is None
