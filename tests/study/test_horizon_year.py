"""The horizon bench's year (`memdir_study/bench/horizon/`): deterministic per seed, and its
truth consistent: a key's values never overlap in time, each is said on the day it starts."""

from __future__ import annotations

import itertools
import os
from collections import defaultdict
from pathlib import Path

import pytest

from memdir.words import terms
from memdir_study.bench.data import DataUnavailable
from memdir_study.bench.horizon import build_year
from memdir_study.bench.horizon.kinds import KINDS
from memdir_study.bench.horizon.life import plan_life
from memdir_study.bench.horizon.year import month_days

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("MEMDIR_DATA") or REPO.parent / "shared" / "data")
needs_data = pytest.mark.skipif(
    not (DATA / "locomo" / "locomo10.json").is_file(),
    reason=f"LoCoMo not found under {DATA}; set MEMDIR_DATA",
)


def test_life_is_deterministic_per_seed_and_seeds_differ() -> None:
    days = month_days(1, 10) + month_days(2, 10) + month_days(3, 10)
    one, again, other = plan_life(3, days, 10), plan_life(3, days, 10), plan_life(4, days, 10)
    assert one == again
    assert one.statements != other.statements


def test_life_truth_never_overlaps_and_changes_at_most_three_times() -> None:
    days = [d for m in range(1, 13) for d in month_days(m, 14)]
    life = plan_life(11, days, 14)
    spans = defaultdict(list)
    for s in life.spans:
        spans[(s.subject, s.attribute)].append(s)
    assert len(spans) == 16
    for held in spans.values():
        assert 1 <= len(held) <= 4
        assert held[0].since <= days[13]  # stated in the first month
        for a, b in itertools.pairwise(held):
            assert a.until == b.since and a.since < b.since and a.value != b.value
        assert held[-1].until is None
    acts = {s.act for s in life.statements}
    assert {"state", "change", "implied", "repeat"} <= acts
    forms = {s.text.replace(s.value, "{v}") for s in life.statements}
    assert len(forms) > 30  # many surface forms, not one template per fact


@needs_data
def test_year_is_deterministic_and_every_fact_cites_the_turn_that_says_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMDIR_DATA", str(DATA))
    year = build_year(5, months=3, sessions_per_month=9)
    assert build_year(5, months=3, sessions_per_month=9).facts == year.facts
    assert [s.number for s in year.sessions] == list(range(1, 28))
    assert {s.source.split()[0] for s in year.sessions} == {"life", "locomo", "realtalk"}
    turns = {t.locator: t for t in year.turns()}
    assert len(turns) == len(year.turns())  # one locator, one turn, over the whole year
    for f in year.facts:
        said = turns[f.locator]
        assert said.date == f.since and said.speaker == f.subject
    for o in year.observations:
        assert all(e in turns for e in o.evidence)
    carried = [o for o in year.observations if turns[o.evidence[0]].speaker not in year.people]
    assert carried  # LoCoMo's reference facts came along with its sessions


def test_absent_data_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMDIR_DATA", str(tmp_path))
    monkeypatch.setenv("MEMDIR_OFFLINE", "1")
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataUnavailable, match=r"locomo/locomo10\.json"):
        build_year(1, months=1, sessions_per_month=6)


def test_no_two_kinds_share_a_value_word() -> None:
    """The update scorer ties a stored value to a key by content words, so a goal "learn to
    sail" would read as the hobby "sailing": the kinds' values must not share one."""
    owner: dict[str, str] = {}
    for kind in KINDS:
        for value in kind.values:
            for word in terms(value):
                assert owner.setdefault(word, kind.attribute) == kind.attribute, (word, kind.attribute)
