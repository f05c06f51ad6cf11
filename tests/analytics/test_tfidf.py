"""memdir's TF-IDF rows equal scikit-learn's `TfidfVectorizer()` bit for bit (analytics/tfidf.py):
the same data, indices and indptr, so every cosine and every argmin over them is the same."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memdir.analytics import tfidf

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")

WORDS = st.sampled_from(
    [
        "alice",
        "Alice",
        "bob",
        "nurse",
        "a",
        "I",
        "x1",
        "tea",
        "green",
        "ÉTÉ",
        "straße",
        "日本",
        "2023",
        "_id",
        "it's",
    ]
)
TEXTS = st.lists(
    st.one_of(
        st.lists(WORDS, max_size=40).map(" ".join),
        st.text(st.sampled_from(list("ab é-_.!?\n\t19")), max_size=30),
    ),
    min_size=1,
    max_size=30,
)


def _theirs(texts: list[str]) -> object:
    try:
        return sklearn_text.TfidfVectorizer().fit_transform(texts)
    except ValueError:
        return None


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
@example(["alice bob", "bob alice alice", "?"])
@example(["one word " * 30, "word one"])
@example(["!", "?"])
def test_rows_equal_scikit_learns_bit_for_bit(texts: list[str]) -> None:
    mine, theirs = tfidf.vectorize(texts), _theirs(texts)
    if theirs is None:
        assert mine is None
        return
    assert mine is not None
    assert mine.shape == theirs.shape
    assert np.array_equal(mine.indptr, theirs.indptr)
    assert np.array_equal(mine.indices, theirs.indices)
    assert mine.data.tobytes() == theirs.data.tobytes()


def test_a_large_corpus_of_long_rows_is_equal_too() -> None:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(3000)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 400)))) for _ in range(2000)]
    mine, theirs = tfidf.vectorize(texts), _theirs(texts)
    assert mine is not None and theirs is not None
    assert np.array_equal(mine.indices, theirs.indices)
    assert mine.data.tobytes() == theirs.data.tobytes()
