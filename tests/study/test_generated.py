"""The generated supersede benchmark: deterministic, self-consistent, and scalable."""

from __future__ import annotations

import itertools

import pytest

from memdir.stream import MAX_TURNS
from memdir_study.bench import generated
from memdir_study.bench.data import UnknownSample


def test_same_seed_same_stream_other_seed_other_stream() -> None:
    a, b, c = generated.generate(), generated.generate(), generated.generate(seed=7)
    assert a.turns == b.turns and a.questions == b.questions and a.facts == b.facts
    assert a.turns != c.turns
    assert a.id == "gen-s42-p3-n12-t8-a4-c2"


def test_questions_agree_with_the_stream_and_the_ground_truth() -> None:
    s = generated.generate(seed=3, people=4, sessions=20)
    by_loc = {t.locator: t for t in s.turns}
    assert s.unresolved_evidence() == {}
    cats = s.categories()
    assert cats["current"] > 0 and cats["previous"] > 0 and cats["previous"] == cats["changed-when"]
    for q in s.questions:
        turn = by_loc[q.evidence[0]]
        if q.category == "changed-when":
            assert q.gold == turn.date == s.session_dates[turn.session]
        else:
            assert q.gold in turn.text, (q, turn)
    assert [q.order for q in s.questions] == list(range(1, len(s.questions) + 1))


def test_facts_form_one_dated_history_per_key_with_one_live_value() -> None:
    s = generated.generate(seed=11, people=3, sessions=25, max_changes=2)
    keys: dict[tuple[str, str], list[generated.Fact]] = {}
    for f in s.facts:
        keys.setdefault((f.subject, f.attribute), []).append(f)
    assert any(len(h) > 1 for h in keys.values()), "some values must change"
    for history in keys.values():
        assert len(history) <= 3  # first value + at most max_changes changes
        assert [f.until for f in history][-1] is None
        assert all(f.until is not None for f in history[:-1])
        for old, new in itertools.pairwise(history):
            assert old.until == new.since and old.since < new.since and old.value != new.value
    current = {q.id: q.gold for q in s.questions if q.category == "current"}
    for (subject, attribute), history in keys.items():
        assert current[f"{subject.lower()}-{attribute.replace(' ', '-')}-current"] == history[-1].value


def test_repeats_restate_without_changing_and_chitchat_dilutes() -> None:
    s = generated.generate(seed=5, sessions=30)
    repeats = [
        t
        for t in s.turns
        for a in generated.ATTRIBUTES
        if any(t.text == a.repeat.format(v=v) for v in a.values)
    ]
    assert repeats, "values must be restated unchanged"
    chit = [t for t in s.turns if t.text in generated.CHITCHAT]
    assert len(chit) > len(s.turns) // 4


def test_size_parameters_scale_the_corpus() -> None:
    small = generated.generate(sessions=10, turns_per_session=8)
    large = generated.generate(sessions=40, turns_per_session=8)
    wide = generated.generate(sessions=10, turns_per_session=16, people=6, attributes=6)
    for sample, per in ((small, 8), (large, 8), (wide, 16)):
        sizes = [len(ts) for ts in sample.session_turns().values()]
        assert len(sizes) == len(sample.session_dates) and min(sizes) >= per
    assert len(large.turns) > 3 * len(small.turns)
    assert len(wide.turns) > len(small.turns) and len(wide.questions) > len(small.questions)
    assert len(large.chunks()) > len(small.chunks())
    assert all(len(c.turns) <= MAX_TURNS for c in large.chunks())


def test_ids_carry_parameters_and_bad_ones_are_refused() -> None:
    s = generated.load("gen-s7-p4-n30-t10-a5-c1")
    assert s.id == "gen-s7-p4-n30-t10-a5-c1" and len(s.speakers) == 4 and len(s.session_dates) == 30
    assert generated.load("gen-s7-p4-n30-t10-a5-c1").turns == s.turns
    with pytest.raises(UnknownSample, match="gen-s42"):
        generated.load("generated-42")
    with pytest.raises(UnknownSample, match="at least 2 people"):
        generated.generate(people=1)
