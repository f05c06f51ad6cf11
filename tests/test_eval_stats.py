"""Sign tests on paired items and summaries with and without defective golds."""

from __future__ import annotations

import pytest

from memdir.eval.stats import paired, sign_test, summarize


def test_sign_test_counts_wins_losses_ties_and_drops_unscored() -> None:
    a = {f"q{i}": 1.0 for i in range(8)} | {"t": 0.5, "u": None, "only_a": 1.0}
    b = {f"q{i}": 0.0 for i in range(8)} | {"t": 0.5, "u": 1.0}
    r = sign_test(a, b)
    assert (r.wins, r.losses, r.ties, r.n) == (8, 0, 1, 9)
    assert r.p_value == pytest.approx(2 * 0.5**8)
    assert sign_test(b, a).losses == 8


def test_sign_test_balanced_and_empty() -> None:
    a = {"1": 1.0, "2": 0.0, "3": 1.0, "4": 0.0}
    b = {"1": 0.0, "2": 1.0, "3": 0.0, "4": 1.0}
    assert sign_test(a, b).p_value == pytest.approx(1.0)
    assert sign_test({}, {}).p_value == 1.0


def test_summary_with_and_without_defective_golds() -> None:
    rows = [
        {"question_id": "q1", "category": "temporal", "correctness": 1.0},
        {"question_id": "q2", "category": "temporal", "correctness": 0.0},
        {"question_id": "q3", "category": "single-hop", "correctness": 1.0},
        {"question_id": "q4", "category": "single-hop", "correctness": None},
    ]
    s = summarize(rows, "correctness", defective=["q2"])
    assert s.all.mean == pytest.approx(2 / 3) and s.all.n == 3 and s.all.unscored == 1
    assert s.clean.mean == 1.0 and s.clean.n == 2
    assert s.by_category["temporal"].mean == 0.5 and s.by_category["single-hop"].n == 1


def test_paired_reads_one_answers_table() -> None:
    rows = [
        {"variant": "dump", "question_id": "q1", "correctness": 1.0},
        {"variant": "dump", "question_id": "q2", "correctness": 1.0},
        {"variant": "closed-book", "question_id": "q1", "correctness": 0.0},
        {"variant": "closed-book", "question_id": "q2", "correctness": 1.0},
        {"variant": "other", "question_id": "q1", "correctness": 0.0},
    ]
    r = paired(rows, "correctness", "dump", "closed-book")
    assert (r.wins, r.losses, r.ties) == (1, 0, 1)
