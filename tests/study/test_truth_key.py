"""The hand-checked truth key (`study/bench/truth_key.json`): the file is well formed and names
turns the data holds, its loader joins it to the data, its scoring (`memdir_study/eval/keyscore.py`)
gives the figures a hand-made store must get, and `memdir study bench writes -b key` runs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.store.store import Store
from memdir.stream import Turn
from memdir_study.bench import truthkey
from memdir_study.bench.data import DataUnavailable
from memdir_study.eval import keyscore
from memdir_study.eval.writes import store_fact_lines

CATEGORIES = ("relatives", "denial", "relative-date", "change", "question", "small-talk")
TUNED = {"conv-26", "conv-50", "conv-30", "conv-43"}


def _data() -> Path:
    """The benchmark data folder, or a skip saying why the test cannot run without it."""
    env = os.environ.get("MEMDIR_DATA")
    if not env:
        pytest.skip("MEMDIR_DATA is not set: the key's turns are checked against LoCoMo and REALTALK files")
    root = Path(env)
    if not (root / "locomo" / "locomo10.json").is_file() or not (root / "realtalk").is_dir():
        pytest.skip(f"MEMDIR_DATA={root} holds no locomo/locomo10.json or realtalk/: the key's data absent")
    return root


# -- the key file ----------------------------------------------------------------------


def test_the_key_is_well_formed_and_picked_as_its_header_says() -> None:
    key = truthkey.read_key()
    about = key.about
    assert about["made_on"] == "2026-12-06" and "one reader" in about["made_by"]
    assert {"sources", "picking", "date_rule", "schema", "tags"} <= set(about)
    assert len(key.turns) >= 60
    tags = {tag for t in key.turns for tag in t.tags}
    assert set(CATEGORIES) <= tags, set(CATEGORIES) - tags
    share = sum(t.benchmark == "locomo" for t in key.turns) / len(key.turns)
    assert 0.55 <= share <= 0.75  # about two thirds LoCoMo, one third REALTALK
    assert len({t.conversation for t in key.turns if t.benchmark == "locomo"}) >= 3
    assert len({t.conversation for t in key.turns if t.benchmark == "realtalk"}) >= 3
    assert not {t.conversation for t in key.turns} & TUNED  # no tuning or untuned evaluation slice
    for t in key.turns:
        if "small-talk" in t.tags:
            assert t.facts == (), t  # small talk states nothing
        for f in t.facts:
            assert f.locator == t.locator
            assert len(f.attribute.split()) <= 2 and len(f.value.split()) <= 16, f
            assert f.date == "" or re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", f.date), f
            assert not (f.approx and not f.date), f  # an approximate day is still a day
            assert f.polarity or not keyscore.negated(f.value), f  # a denial's value is what is denied
    denials = [f for f in key.facts() if not f.polarity]
    assert len(denials) >= 10
    assert sum(1 for t in key.turns if not t.facts) >= 10  # questions and small talk count for precision


def test_a_malformed_key_is_refused_naming_the_entry() -> None:
    good: dict[str, Any] = {
        "benchmark": "locomo",
        "conversation": "conv-42",
        "locator": "S1T1",
        "tags": ["denial"],
        "facts": [
            {"subject": "Joanna", "attribute": "diet", "value": "dairy", "polarity": False, "date": ""}
        ],
    }
    assert truthkey.parse({"about": {}, "turns": [good]}).turns[0].facts[0].polarity is False
    bad_date = {**good, "facts": [{**good["facts"][0], "date": "last week"}]}
    with pytest.raises(MemdirError, match=r"turn 1 \(conv-42 S1T1\) fact 1: date 'last week'"):
        truthkey.parse({"about": {}, "turns": [bad_date]})
    with pytest.raises(MemdirError, match="polarity"):
        truthkey.parse({"about": {}, "turns": [{**good, "facts": [{**good["facts"][0], "polarity": "no"}]}]})
    with pytest.raises(MemdirError, match="tags"):
        truthkey.parse({"about": {}, "turns": [{**good, "tags": ["funny"]}]})
    with pytest.raises(MemdirError, match="appears twice"):
        truthkey.parse({"about": {}, "turns": [good, good]})


def test_every_key_turn_is_in_the_data_and_loads_as_a_sample() -> None:
    _data()
    key = truthkey.read_key()
    held = 0
    for cid in key.conversations():
        sample = truthkey.load(cid)
        wanted = [t.locator for t in key.turns_of(cid)]
        assert sample.benchmark == "key" and sample.id == cid
        assert sorted(t.locator for t in sample.turns) == sorted(wanted)  # exactly the key's turns
        assert not sample.questions and sample.speakers
        for turn in sample.turns:
            assert turn.date and sample.session_dates[turn.session]
        held += len(sample.turns)
        assert len(truthkey.observations(cid).facts) == sum(len(t.facts) for t in key.turns_of(cid))
    assert held == len(key.turns)


def _fake_locomo(root: Path) -> None:
    """A LoCoMo-shaped file of our own making: one conversation, two sessions."""
    conv = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "I quit my job last week."},
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "My brother moved to Porto."}],
    }
    (root / "locomo").mkdir(parents=True)
    sample = {"sample_id": "conv-1", "conversation": conv, "qa": [], "observation": {}}
    (root / "locomo" / "locomo10.json").write_text(json.dumps([sample]))


def _key(*turns: tuple[str, list[dict[str, Any]]], conversation: str = "conv-1") -> truthkey.TruthKey:
    entries = [
        {"benchmark": "locomo", "conversation": conversation, "locator": loc, "tags": [], "facts": facts}
        for loc, facts in turns
    ]
    return truthkey.parse({"about": {}, "turns": entries})


def test_load_holds_exactly_the_key_turns_and_refuses_a_turn_the_data_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_locomo(tmp_path / "data")
    monkeypatch.setenv("MEMDIR_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("MEMDIR_OFFLINE", "1")
    sample = truthkey.load("conv-1", _key(("S1T2", []), ("S2T1", [])))
    assert [(t.locator, t.speaker, t.date) for t in sample.turns] == [
        ("S1T2", "Ben", "2023-05-08"),
        ("S2T1", "Ana", "2023-06-27"),
    ]
    assert sample.session_dates == {1: "2023-05-08", 2: "2023-06-27"} and sample.speakers == ["Ana", "Ben"]
    with pytest.raises(MemdirError, match=r"names conv-1 S3T1, which locomo/locomo10.json does not hold"):
        truthkey.load("conv-1", _key(("S1T2", []), ("S3T1", [])))
    with pytest.raises(MemdirError, match="no conversation 'conv-9'"):
        truthkey.load("conv-9", _key(("S1T2", [])))


def test_absent_data_is_an_error_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDIR_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMDIR_OFFLINE", "1")
    with pytest.raises(DataUnavailable, match=r"locomo/locomo10\.json is missing"):
        truthkey.load("conv-42")
    with pytest.raises(DataUnavailable, match=r"realtalk/Chat_4_Emi_Paola\.json is missing"):
        truthkey.load("Chat_4_Emi_Paola")


# -- scoring ---------------------------------------------------------------------------

DAY = "2024-03-01"
TURNS = [
    Turn("S1T1", "Alice", "My sister Maria moved to Rome last week.", DAY),
    Turn("S1T2", "Alice", "I don't eat meat at all.", DAY),
    Turn("S1T3", "Bob", "Where do you live now?", DAY),
]
MARIA = {
    "subject": "Maria",
    "aliases": ["Alice's sister"],
    "attribute": "home",
    "value": "moved to Rome",
    "polarity": True,
    "date": "2024-02-23",
    "approx": True,
}
MEAT = {"subject": "Alice", "attribute": "diet", "value": "eat meat", "polarity": False, "date": DAY}
KEY = _key(("S1T1", [MARIA]), ("S1T2", [MEAT]), conversation="made-up")  # two turns
WITH_QUESTION = _key(("S1T1", [MARIA]), ("S1T2", [MEAT]), ("S1T3", []), conversation="made-up")
CORRECT = f"- {DAY}: Maria | event: moved to Rome [S1T1]"
POSITIVE = f"- Alice | diet: eat meat (since {DAY}) [S1T2]"
WRONG_SUBJECT = f"- Alice | home: Rome (since {DAY}) [S1T1]"


def _store(root: Path, *lines: str) -> Store:
    store = Store(root, create=True)
    body = "\n".join(lines)
    with store.step("create"):
        store.create("/memories/people/notes.md", f"---\ndescription: notes\n---\n# Notes\n\n{body}\n")
    return store


def _score(root: Path, *lines: str, key: truthkey.TruthKey = KEY) -> keyscore.KeyScore:
    found = store_fact_lines(_store(root, *lines))
    return keyscore.score(found, TURNS, key.turns, ["Alice", "Bob"], {1: DAY})


def test_a_denial_filed_as_positive_and_a_wrong_subject_keep_nothing(tmp_path: Path) -> None:
    s = _score(tmp_path, CORRECT, POSITIVE, WRONG_SUBJECT)
    assert (s.facts, s.kept, s.recall()) == (2, 1, 0.5)  # Maria's move kept; the denial is not
    assert (s.lines, s.matched) == (3, 1) and s.precision() == pytest.approx(1 / 3)
    assert s.false == {"negated": 1, "wrong subject": 1}
    assert any(e.startswith("negated: ") and "eat meat" in e for e in s.examples)


def test_each_false_reason_and_the_right_ways_to_file(tmp_path: Path) -> None:
    lines = (
        f"- {DAY}: Alice | preference: does not eat meat [S1T2]",  # the denial, kept
        f"- Alice's sister | home: Rome (since {DAY}) [S1T1]",  # the relation: Maria
        f"- {DAY}: Alice | event: her sister moved to Rome [S1T1]",  # filed under Alice, naming the sister
        "- 2024-02-25: Maria | event: moved to Rome [S1T1]",  # the approximate day of "last week"
        "- 1999-12-31: Maria | event: moved to Rome [S1T1]",  # a day the turn never named
        f"- Bob | home: Rome (since {DAY}) [S1T1]",  # someone else
        f"- {DAY}: Bob | fact: lives now [S1T3]",  # a question states nothing
        f"- {DAY}: Alice | fact: at all [S1T2]",  # no fact of the turn says that
        f"- {DAY}: Alice: I don't eat meat at all. [S1T2]",  # verbatim: not an extraction
    )
    s = _score(tmp_path, *lines, key=WITH_QUESTION)
    assert (s.kept, s.lines, s.matched) == (2, 8, 4)
    assert s.false == {"wrong date": 1, "wrong subject": 1, "no fact in turn": 1, "not in key": 1}
    data = s.as_json()
    assert data["recall"] == 1.0 and data["precision"] == 0.5 and data["false_line_count"] == 4
    assert keyscore.KeyScore.from_json(data).as_json() == data
    assert (s + s).lines == 16


def test_a_positive_fact_is_not_kept_by_a_negated_line(tmp_path: Path) -> None:
    s = _score(tmp_path, f"- {DAY}: Maria | event: never moved to Rome [S1T1]")
    assert (s.kept, s.matched) == (0, 0) and s.false == {"negated": 1}


# -- the command -----------------------------------------------------------------------


@pytest.mark.slow
def test_cli_writes_on_the_key_prints_the_key_figures(tmp_path: Path) -> None:
    _data()
    out = tmp_path / "keyrun"
    args = ["study", "bench", "writes", "-b", "key", "--model", "offline"]
    args += ["-o", str(out), "--no-progress", "--json"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    key = truthkey.read_key()
    assert set(data["conversations"]) == set(key.conversations())
    pooled = data["pooled"]["key"]
    assert pooled["facts"] == len(key.facts()) and 0 <= pooled["kept"] <= pooled["facts"]
    assert set(pooled["false_lines"]) == set(keyscore.REASONS)
    assert data["pooled"]["observations"] == len(key.facts())  # the key is the reference
    rows = [json.loads(line) for line in (out / "writes.jsonl").read_text().splitlines()]
    assert sum(r["turns"] for r in rows) == len(key.turns)
    assert "key R" in res.stderr
