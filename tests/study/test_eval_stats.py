"""Sign tests on paired items and summaries with and without defective golds."""

from __future__ import annotations

import pytest

from memdir.sign_test import paired, sign_p, sign_test
from memdir_study.eval.records import AnswerRow
from memdir_study.eval.stats import comparisons, summarize


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
        AnswerRow(conversation="c", variant="v", question_id=q, order=i, category=cat, correctness=s)
        for i, (q, cat, s) in enumerate([
            ("q1", "temporal", 1.0), ("q2", "temporal", 0.0),
            ("q3", "single-hop", 1.0), ("q4", "single-hop", None),
        ])
    ]  # fmt: skip
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


def test_appendix_d1_one_sided_sign_test_recomputed_from_the_papers_counts() -> None:
    """Appendix D.1: 9 wins, 3 losses gives p = .073, one-sided (two-sided it is .146)."""
    wins = {f"q{i}": 1.0 for i in range(12)} | {"tie": 1.0}
    losses = {f"q{i}": 0.0 if i < 9 else 1.0 for i in range(12)} | {"tie": 1.0}
    for i in range(9, 12):
        wins[f"q{i}"] = 0.0
    one = sign_test(wins, losses, "greater")
    assert (one.wins, one.losses, one.ties, one.sidedness) == (9, 3, 1, "greater")
    assert round(one.p_value, 3) == 0.073 and one.p_value == pytest.approx(299 / 4096)
    assert round(sign_test(wins, losses).p_value, 3) == 0.146  # the two-sided test, the default
    assert round(sign_p(9, 3, "greater"), 3) == 0.073


def test_the_reports_comparisons_name_their_sidedness() -> None:
    rows = [
        AnswerRow(benchmark="b", conversation="c", variant=v, question_id=f"q{i}", order=i, correctness=s)
        for v, scores in {
            "closed-book": [0.0] * 12,
            "verbatim-dump": [1.0] * 9 + [0.0] * 3,
            "agent-curated": [0.0] * 9 + [1.0] * 3,
        }.items()
        for i, s in enumerate(scores)
    ]
    got = {(c.variant, c.against): c for c in comparisons(rows)}
    assert set(got) == {
        ("verbatim-dump", "closed-book"),
        ("agent-curated", "closed-book"),
        ("agent-curated", "verbatim-dump"),
    }
    dump = got[("verbatim-dump", "closed-book")]
    assert (dump.wins, dump.losses, dump.sidedness) == (9, 0, "greater")
    assert dump.p_value == pytest.approx(0.5**9, abs=1e-6)
    curated = got[("agent-curated", "verbatim-dump")]
    assert (curated.wins, curated.losses, curated.sidedness) == (3, 9, "two-sided")
    assert round(curated.p_value, 3) == 0.146
