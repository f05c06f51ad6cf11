"""Update accuracy (HaluMem's update split) in `memdir study bench writes -b generated`: a
hand-made store whose every verdict is known before the run, a small generated sample through
the offline curator session by session, a stopped run resumed at a session, and the command end
to end (docs/metrics.md, "Update accuracy")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.models import OfflineModel
from memdir.store.store import Store
from memdir.stream import Turn
from memdir.tools.wiring import open_store
from memdir_study.bench import load_sample
from memdir_study.bench.types import Fact, Question, Sample
from memdir_study.eval.updates import changed_keys, live_value, said_value, score_updates, verdict
from memdir_study.eval.updates_run import UPDATES, first_hits
from memdir_study.eval.writes import store_fact_lines
from memdir_study.eval.writes_run import ROWS, WritesRun, run_writes
from memdir_study.runfolder import JsonlTable

MARCH, APRIL = "2024-03-01", "2024-04-05"
DATES = {f"S1T{i}": MARCH for i in range(1, 9)} | {f"S2T{i}": APRIL for i in range(1, 9)}


def _changed(subject: str, attribute: str, old: str, new: str, turn: int) -> list[Fact]:
    """A key that held `old` from session 1 and `new` from session 2 (ground truth)."""
    return [
        Fact(subject, attribute, old, MARCH, APRIL, f"S1T{turn}"),
        Fact(subject, attribute, new, APRIL, None, f"S2T{turn}"),
    ]


FACTS = [
    *_changed("Ana", "home city", "Lisbon", "Porto", 1),  # stale live line: omitted
    *_changed("Ana", "job", "nurse", "teacher", 2),  # a value never said: hallucinated
    *_changed("Ana", "diet", "vegetarian", "vegan", 3),  # superseded as it should: correct
    *_changed("Ana", "hobby", "chess", "pottery", 4),  # distilled only, new value later: correct
    *_changed("Ana", "car", "Volvo XC60", "Honda Civic", 5),  # distilled, old value later: omitted
    *_changed("Ana", "favorite cuisine", "Thai", "Korean", 6),  # another attribute's stale value
    *_changed("Ana", "workout", "yoga", "rowing", 7),  # nothing in the store: omitted
    Fact("Ana", "morning drink", "chai", MARCH, None, "S1T8"),  # never changed: not scored
]
FILE = f"""---
description: Ana's keyed facts
---
# Ana

- ana | home: Lisbon (since {MARCH}) [S1T1]
- Ana | job: astronaut (since {APRIL}) [S2T2]
- ana | diet: vegan (since {APRIL}) [S2T3]
- ~~ana | diet: vegetarian~~ ({MARCH} until {APRIL}) [S1T3]
- ana | favorite food: Thai (since {MARCH}) [S1T6]
- ana | morning drink: green tea (since {MARCH}) [S1T8]
- {MARCH}: Ana | fact: plays chess [S1T4]
- {APRIL}: Ana | event: took up pottery [S2T4]
- {MARCH}: Ana | event: bought a Honda Civic [S1T5]
- Ana | event: drove the Volvo XC60 to the coast [S2T5]
"""


def _store(root: Path, text: str = FILE) -> Store:
    store = open_store(root, create=True, init=True, journal=False, index=False)
    with store.step("create"):
        store.create("/memories/people/ana/facts.md", text)
    return store


def test_the_keys_scored_are_those_changed_by_the_session() -> None:
    assert [(k.attribute, k.current, k.past) for k in changed_keys(FACTS, 2)][:2] == [
        ("home city", "Porto", ("Lisbon",)),
        ("job", "teacher", ("nurse",)),
    ]
    assert changed_keys(FACTS, 1) == []  # nothing has changed after session 1
    assert len(changed_keys(FACTS, 2)) == 7  # the morning drink never changed


@pytest.mark.parametrize(
    ("attribute", "expected", "source"),
    [
        ("home city", "omitted", "keyed"),  # `home` names `home city`; its live value is the old one
        ("job", "hallucinated", "keyed"),  # astronaut was never said
        ("diet", "correct", "keyed"),
        ("hobby", "correct", "distilled"),  # pottery (April) after chess (March)
        ("car", "omitted", "none"),  # the Volvo stated after the Honda (its turn's date, April)
        ("favorite cuisine", "omitted", "keyed"),  # `favorite food: Thai`, the old cuisine, live
        ("workout", "omitted", "none"),
    ],
)
def test_the_store_live_value_by_the_stated_rule(
    tmp_path: Path, attribute: str, expected: str, source: str
) -> None:
    store = _store(tmp_path / "m")
    lines = store_fact_lines(store)
    key = next(k for k in changed_keys(FACTS, 2) if k.attribute == attribute)
    live = live_value(lines, key, DATES)
    assert (verdict(key, live), live.source) == (expected, source)


def test_counts_and_accuracy_of_the_hand_made_store(tmp_path: Path) -> None:
    scored = score_updates(store_fact_lines(_store(tmp_path / "m")), FACTS, 2, DATES).as_json()
    assert {k: scored[k] for k in ("scored", "correct", "hallucinated", "omitted", "update_accuracy")} == {
        "scored": 7,
        "correct": 2,
        "hallucinated": 1,
        "omitted": 4,
        "update_accuracy": round(2 / 7, 4),
    }
    assert any(e.startswith("hallucinated: Ana | job: nurse -> teacher") for e in scored["examples"])


def test_a_stale_value_live_beside_the_new_one_is_not_correct(tmp_path: Path) -> None:
    """Two live lines for one key (`home` and `home city`): the old value is still served."""
    text = FILE.replace(
        f"- ana | home: Lisbon (since {MARCH}) [S1T1]",
        f"- ana | home: Lisbon (since {MARCH}) [S1T1]\n- ana | home city: Porto (since {APRIL}) [S2T1]",
    )
    key = changed_keys(FACTS, 2)[0]
    live = live_value(store_fact_lines(_store(tmp_path / "m", text)), key, DATES)
    assert sorted(v or "" for v in live.values) == ["Lisbon", "Porto"]
    assert verdict(key, live) == "omitted"
    fixed = text.replace(f"- ana | home: Lisbon (since {MARCH}) [S1T1]\n", "")
    assert verdict(key, live_value(store_fact_lines(_store(tmp_path / "n", fixed)), key, DATES)) == "correct"


def test_values_match_by_content_words() -> None:
    key = changed_keys(_changed("Bo", "car", "Subaru Outback", "Toyota Prius", 1), 2)[0]
    assert said_value("a Toyota Prius", key) == "Toyota Prius"
    assert said_value("Thai", key) is None
    assert said_value("Toyota", key) == "Toyota Prius"  # content F1 .67
    assert said_value("sold the Subaru Outback, got a Toyota Prius", key) == "Subaru Outback"  # tie: old


GEN = "gen-s4-p2-n4-t6-a3-c1"


def test_a_generated_sample_through_the_offline_curator(tmp_path: Path) -> None:
    """GEN's changed keys: Alice's diet and home and Bruno's job change in session 2 (the offline
    curator keys "I've gone vegan", "I live in Nairobi now", "I'm working as a data analyst
    now"), Alice's morning drink in session 3 ("I've swapped my morning drink for ...") and
    Bruno's reading genre and workout in session 4: every one correct, none hallucinated."""
    rows = run_writes(WritesRun("generated", "offline"), OfflineModel(), [GEN], tmp_path / "run")
    by_session = [
        (s["session"], s["scored"], s["correct"], s["hallucinated"], s["omitted"])
        for s in rows[0]["updates_by_session"]
    ]
    assert by_session == [(1, 0, 0, 0, 0), (2, 3, 3, 0, 0), (3, 4, 4, 0, 0), (4, 6, 6, 0, 0)]
    pooled = rows[0]["updates"]
    assert (pooled["scored"], pooled["correct"], pooled["omitted"], pooled["update_accuracy"]) == (
        13,
        13,
        0,
        1.0,
    )
    assert rows[0]["updates_final"]["update_accuracy"] == 1.0
    saved = JsonlTable(tmp_path / "run" / UPDATES).rows()
    assert [r["chunks"] for r in saved] == [2, 2, 2, 2]  # scored at a session's last chunk only
    assert rows[0]["chunks"] == len(load_sample("generated", GEN).chunks()) == 8


def test_a_stopped_run_resumes_after_its_last_saved_session(tmp_path: Path) -> None:
    """The run stopped in session 4 after writing: its conversation row and session 4's row were
    never saved. The rerun puts the store back as session 3 left it and ingests session 4 only."""
    out = tmp_path / "run"
    first = run_writes(WritesRun("generated", "offline"), OfflineModel(), [GEN], out)[0]
    final = (out / "stores" / GEN / "people" / "bruno" / "facts.md").read_text(encoding="utf-8")
    JsonlTable(out / ROWS).withdraw({"conversation": GEN})
    JsonlTable(out / UPDATES).withdraw({"session": 4})
    said: list[str] = []
    again = run_writes(WritesRun("generated", "offline"), OfflineModel(), [GEN], out, say=said.append)[0]
    assert said == [f"generated {GEN}: resuming after session 3"]
    assert [r["session"] for r in JsonlTable(out / UPDATES).rows()] == [1, 2, 3, 4]
    assert again["updates"] == first["updates"] and again["chunks"] == first["chunks"]
    assert (out / "stores" / GEN / "people" / "bruno" / "facts.md").read_text(encoding="utf-8") == final
    assert again["score"]["fact_lines"] == first["score"]["fact_lines"]  # no turn filed twice


def test_a_store_changed_since_its_last_saved_session_is_built_again(tmp_path: Path) -> None:
    """An edit made outside the tools after the last saved session: the store is not as that
    session left it, so it is built again from nothing, and the session rows with it."""
    out = tmp_path / "run"
    first = run_writes(WritesRun("generated", "offline"), OfflineModel(), [GEN], out)[0]
    JsonlTable(out / ROWS).withdraw({"conversation": GEN})
    facts = out / "stores" / GEN / "people" / "bruno" / "facts.md"
    facts.write_text(
        facts.read_text(encoding="utf-8") + "- bruno | job: astronaut (since 2023-03-01) [S4T2]\n"
    )
    said: list[str] = []
    again = run_writes(WritesRun("generated", "offline"), OfflineModel(), [GEN], out, say=said.append)[0]
    assert said == [
        f"generated {GEN}: {out / 'stores' / GEN} is not as session 4 left it",
        f"generated {GEN}: rebuilding {out / 'stores' / GEN}, left unfinished by an earlier run",
    ]
    assert "astronaut" not in facts.read_text(encoding="utf-8")
    assert again["updates"] == first["updates"]
    assert [r["session"] for r in JsonlTable(out / UPDATES).rows()] == [1, 2, 3, 4]


def _home_store(root: Path, lines: str) -> Store:
    store = open_store(root, create=True, init=True, journal=False)
    with store.step("create"):
        store.create(
            "/memories/people/ana/facts.md", f"---\ndescription: Ana\n---\n# Ana\n\n## home\n{lines}"
        )
    return store


@pytest.mark.parametrize(
    ("lines", "counts"),
    [
        # only the struck-through value: the first hit serves a past value
        (f"- ~~ana | home: Lisbon~~ ({MARCH} until {APRIL}) [S1T1]\n", (1, 1, 0, 0, 0)),
        # the live value above it: live first, and the current one
        (
            f"- ana | home: Porto (since {APRIL}) [S2T1]\n"
            f"- ~~ana | home: Lisbon~~ ({MARCH} until {APRIL}) [S1T1]\n",
            (1, 0, 1, 0, 0),
        ),
        # the old value never struck: live first but not current (update accuracy's omitted)
        (f"- ana | home: Lisbon (since {MARCH}) [S1T1]\n", (1, 0, 1, 0, 1)),
    ],
)
def test_stale_first_reads_each_key_under_the_store_own_key(
    tmp_path: Path, lines: str, counts: tuple[int, ...]
) -> None:
    """Ana's `home city` went Lisbon -> Porto and the store keys it `home`: searched by the
    benchmark's question, read under `home` (under `home city` every row would be missed)."""
    facts = _changed("Ana", "home city", "Lisbon", "Porto", 1)
    question = Question(
        "ana-home-city-current", "current", "What is Ana's current home city?", "Porto", ("S2T1",)
    )
    turns = [
        Turn("S1T1", "Ana", "Life in Lisbon is good.", MARCH),
        Turn("S2T1", "Ana", "I live in Porto now.", APRIL),
    ]
    sample = Sample("generated", "hand", turns, [question], {1: MARCH, 2: APRIL}, ["Ana"], facts)
    found = first_hits(_home_store(tmp_path / "m", lines), sample, changed_keys(facts, 2))
    assert found is not None
    assert tuple(found[k] for k in ("keys", "stale", "live", "missed", "not_current")) == counts
    assert found["stale_first_rate"] == counts[1]
    if counts[1]:
        assert found["examples"] == [f"/memories/people/ana/facts.md:7: Lisbon for {question.question!r}"]


def test_the_command_prints_the_update_keys(tmp_path: Path) -> None:
    """gen-s1-p2-n3-t4-a2-c1: Alice's favorite cuisine goes Japanese -> Thai in session 3 ("My
    taste has changed: Thai is my favorite cuisine now."); the offline curator keys both under
    `favorite food` (a cuisine is a food), so Thai strikes Japanese through: correct."""
    sid = "gen-s1-p2-n3-t4-a2-c1"
    args = ["study", "bench", "writes", "-b", "generated", "-c", sid, "--model", "offline"]
    res = CliRunner().invoke(cli, [*args, "-o", str(tmp_path / "run"), "--json", "--no-progress"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    updates = data["conversations"][sid]["updates"]
    assert {k: updates[k] for k in ("scored", "correct", "hallucinated", "omitted", "update_accuracy")} == {
        "scored": 1,
        "correct": 1,
        "hallucinated": 0,
        "omitted": 0,
        "update_accuracy": 1.0,
    }
    facts = (tmp_path / "run" / "stores" / sid / "people" / "alice" / "facts.md").read_text()
    assert "- alice | favorite food: Thai (since" in facts and "~~alice | favorite food: Japanese~~" in facts
    assert data["pooled"]["updates_final"]["correct"] == 1
    assert [s["scored"] for s in data["conversations"][sid]["updates_by_session"]] == [0, 0, 1]
    assert "update accuracy 1.0 over 1 key-sessions" in res.stderr
    bad = CliRunner().invoke(cli, [*args[:6], "gen-x", "--model", "offline", "-o", str(tmp_path / "bad")])
    assert bad.exit_code != 0 and "not a generated sample id" in bad.output
