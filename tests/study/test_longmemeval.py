"""The LongMemEval loader on small synthetic files in the official format (the real files are
hundreds of MB and not in the shared data): locators, dates, evidence, the session-level gold,
and the errors a missing file or a malformed item must give."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir.conventions import turn_numbers
from memdir.errors import MemdirError
from memdir_study.bench import BENCHMARKS, DEFAULTS, load_sample, longmemeval
from memdir_study.bench.data import DataUnavailable, UnknownSample


def turn(role: str, content: str, has_answer: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": content}
    if has_answer is not None:
        out["has_answer"] = has_answer
    return out


FLAGGED: dict[str, Any] = {
    "question_id": "e47becba",
    "question_type": "single-session-user",
    "question": "What degree did I graduate with?",
    "answer": "Business Administration",
    "question_date": "2023/05/30 (Tue) 23:40",
    "haystack_session_ids": ["sharegpt_a1", "answer_280352e9", "ultrachat_9"],
    "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00", "sometime in May"],
    "haystack_sessions": [
        [turn("user", "Any tips for tea?"), turn("assistant", "Try oolong.")],
        [
            turn("user", "I graduated in Business Administration.", True),
            turn("assistant", "Congratulations!", False),
            turn("user", "Thanks, it took four years.", True),
        ],
        [turn("user", "Recommend a film."), turn("assistant", "Try Alien.")],
    ],
    "answer_session_ids": ["answer_280352e9"],
}
UNFLAGGED: dict[str, Any] = {
    "question_id": "gpt4_2655b836",
    "question_type": "multi-session",
    "question": "How many bikes do I own?",
    "answer": 3,
    "question_date": "2023/06/01 (Thu) 09:00",
    "haystack_session_ids": ["answer_b1", "filler_2", "answer_b2"],
    "haystack_dates": ["2023/02/13 (Mon) 08:15", "2023/02/30 (Thu) 08:15", "2023-03-01"],
    "haystack_sessions": [
        [turn("user", "I bought a road bike."), turn("assistant", "Nice.")],
        [turn("user", "Weather?")],
        [turn("user", "Now I have two mountain bikes too.")],
    ],
    "answer_session_ids": ["answer_b1", "answer_b2"],
}
ABSTAIN: dict[str, Any] = {
    "question_id": "e47becba_abs",
    "question_type": "single-session-user",
    "question": "What degree did my sister graduate with?",
    "answer": "The information provided is not enough.",
    "question_date": "2023/05/30 (Tue) 23:40",
    "haystack_session_ids": ["answer_280352e9_abs", "sharegpt_z"],
    "haystack_dates": ["2023/05/21 (Sun) 10:00", "2023/05/22 (Mon) 11:00"],
    "haystack_sessions": [
        [turn("user", "I graduated in Business Administration.", True), turn("assistant", "Great!")],
        [turn("user", "Hello")],
    ],
    "answer_session_ids": ["answer_280352e9_abs"],
}


def write(root: Path, name: str, items: list[dict[str, Any]]) -> Path:
    path = root / "longmemeval" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.fixture
def data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """MEMDIR_DATA at a folder with a synthetic `_s` file and an oracle file (the flagged item's
    answer session only); the cache points at an empty folder."""
    root = tmp_path / "data"
    write(root, "longmemeval_s.json", [FLAGGED, UNFLAGGED, ABSTAIN])
    oracle = dict(FLAGGED)
    for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
        oracle[key] = FLAGGED[key][1:2]
    write(root, "longmemeval_oracle.json", [oracle])
    monkeypatch.setenv("MEMDIR_DATA", str(root))
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMDIR_OFFLINE", "1")
    return root


def test_turns_get_session_turn_locators_roles_and_iso_dates(data: Path) -> None:
    sample = longmemeval.load("e47becba")
    assert (sample.benchmark, sample.id, sample.speakers) == (
        "longmemeval",
        "e47becba",
        ["user", "assistant"],
    )
    assert [t.locator for t in sample.turns] == ["S1T1", "S1T2", "S2T1", "S2T2", "S2T3", "S3T1", "S3T2"]
    assert all(turn_numbers(t.locator) is not None for t in sample.turns)
    assert [t.speaker for t in sample.turns][:3] == ["user", "assistant", "user"]
    assert sample.turns[2].text == "I graduated in Business Administration."
    assert sample.session_dates == {1: "2023-05-20", 2: "2023-05-21", 3: None}
    assert [t.date for t in sample.turns] == ["2023-05-20"] * 2 + ["2023-05-21"] * 3 + [None] * 2
    assert sample.session_ids == {1: "sharegpt_a1", 2: "answer_280352e9", 3: "ultrachat_9"}
    assert [c.session for c in sample.chunks()] == [1, 2, 3]


def test_flagged_turns_are_the_evidence(data: Path) -> None:
    sample = longmemeval.load("e47becba")
    (q,) = sample.questions
    assert (q.id, q.category, q.order, q.gold) == (
        "e47becba",
        "single-session-user",
        1,
        "Business Administration",
    )
    assert q.evidence == ("S2T1", "S2T3")
    assert q.date == "2023-05-30"  # question_date, as ISO
    assert longmemeval.answer_sessions(sample) == {2}
    assert sample.unresolved_evidence() == {}


def test_unflagged_answer_sessions_cite_every_turn(data: Path) -> None:
    sample = load_sample("longmemeval", "gpt4_2655b836")
    (q,) = sample.questions
    assert q.gold == "3" and q.category == "multi-session"
    assert q.evidence == ("S1T1", "S1T2", "S3T1")
    assert longmemeval.answer_sessions(sample) == {1, 3}
    assert {sample.session_ids[n] for n in longmemeval.answer_sessions(sample)} == set(
        UNFLAGGED["answer_session_ids"]
    )
    # 2023/02/30 is no date; 2023-03-01 is read as well
    assert sample.session_dates == {1: "2023-02-13", 2: None, 3: "2023-03-01"}
    cut = sample.sliced(1, 2)
    assert cut.session_ids == {1: "answer_b1", 2: "filler_2"} and cut.questions == []


def test_abstention_keeps_its_type(data: Path) -> None:
    sample = longmemeval.load("e47becba_abs")
    (q,) = sample.questions
    assert q.category == "single-session-user" and q.id.endswith("_abs")
    assert q.evidence == ("S1T1",) and longmemeval.answer_sessions(sample) == {1}


def test_listing_loading_all_and_the_oracle_file(data: Path) -> None:
    assert longmemeval.question_ids() == ["e47becba", "gpt4_2655b836", "e47becba_abs"]
    assert [s.id for s in longmemeval.load_all()] == longmemeval.question_ids("s")
    assert longmemeval.question_ids("oracle") == ["e47becba"]
    oracle = load_sample("longmemeval", "oracle:e47becba")
    assert oracle.id == "oracle:e47becba" and longmemeval.load(oracle.id).id == oracle.id
    assert oracle.session_ids == {1: "answer_280352e9"}
    assert oracle.questions[0].evidence == ("S1T1", "S1T3")
    assert [s.id for s in longmemeval.load_all("oracle")] == ["oracle:e47becba"]


def test_the_cleaned_s_file_is_accepted(data: Path) -> None:
    (data / "longmemeval" / "longmemeval_s.json").rename(data / "longmemeval" / "longmemeval_s_cleaned.json")
    assert longmemeval.data_file().name == "longmemeval_s_cleaned.json"
    assert longmemeval.load("gpt4_2655b836").questions[0].gold == "3"


def test_registry_knows_longmemeval_but_gives_it_no_default(data: Path) -> None:
    assert "longmemeval" in BENCHMARKS and "longmemeval" not in DEFAULTS
    with pytest.raises(UnknownSample, match="no default sample"):
        load_sample("longmemeval")
    with pytest.raises(UnknownSample, match=r"has no question 'nope'.*3"):
        load_sample("longmemeval", "nope")
    with pytest.raises(UnknownSample, match="oracle:<question_id>"):
        load_sample("longmemeval", "m:e47becba")


def test_a_missing_file_says_which_where_and_from_where(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMDIR_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    for sample_id, name in (("e47becba", "longmemeval_s.json"), ("oracle:x", "longmemeval_oracle.json")):
        with pytest.raises(DataUnavailable) as err:
            longmemeval.load(sample_id)
        msg = str(err.value)
        assert name in msg and str(tmp_path / "empty" / "longmemeval" / name) in msg
        assert "https://huggingface.co/datasets/xiaowu0162/longmemeval" in msg
        assert "github.com/xiaowu0162/LongMemEval" in msg
    assert not (tmp_path / "cache").exists()  # nothing was downloaded


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda item: item.pop("answer_session_ids"), "answer_session_ids"),
        (lambda item: item["haystack_dates"].pop(), "haystack_sessions"),
        (lambda item: item["haystack_session_ids"].append("extra"), "haystack_sessions"),
        (lambda item: item.__setitem__("answer_session_ids", ["ghost"]), "answer_session_ids"),
        (lambda item: item["haystack_sessions"][0][1].pop("role"), r"haystack_sessions\[0\]\[1\]"),
    ],
)
def test_a_malformed_item_names_its_question_and_field(data: Path, change: Any, field: str) -> None:
    broken = json.loads(json.dumps(UNFLAGGED))
    change(broken)
    write(data, "longmemeval_s.json", [FLAGGED, broken])
    assert longmemeval.load("e47becba").id == "e47becba"  # item-wise: the sound item still loads
    with pytest.raises(MemdirError, match=rf"'gpt4_2655b836'.*{field}"):
        longmemeval.load("gpt4_2655b836")
    with pytest.raises(MemdirError, match="gpt4_2655b836"):
        longmemeval.load_all()


def test_a_file_that_is_not_a_list_is_refused(data: Path) -> None:
    (data / "longmemeval" / "longmemeval_s.json").write_text('{"question_id": "x"}', encoding="utf-8")
    with pytest.raises(MemdirError, match="not a JSON list"):
        longmemeval.question_ids()
