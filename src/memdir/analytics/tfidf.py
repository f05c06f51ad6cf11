"""TF-IDF rows as scikit-learn's `TfidfVectorizer()` makes them at its defaults, bit for bit.

The taxonomy metrics compare texts by the cosine of these rows (docs/metrics.md), and B1's most
confusable pair is the argmin over those cosines, so a last-bit difference can pick another pair
among tied ones. Importing scikit-learn costs more than the rest of `memdir stats` on a large
store after the file reads (its `sklearn.utils` pulls in `scipy.stats`; figures:
benchmarks/results/2026-12-06-docstring-figures.md, "analytics/tfidf.py"); every process that
shows a store's health paid it. So the same steps run here on numpy and scipy.sparse, in the
order the library takes them, each named after its source (`CountVectorizer._count_vocab`,
`_limit_features`, `_sort_features`, `TfidfTransformer`, `inplace_csr_row_normalize_l2`): word
tokens of two or more characters from the lower-cased text, raw counts, smoothed idf
`ln((1 + n) / (1 + df)) + 1`, rows scaled to unit length with the norm summed left to right.
tests/analytics/test_tfidf.py holds data, indices and indptr equal to scikit-learn's, which
stays a test dependency for that.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np
from scipy import sparse

TOKEN = re.compile(r"(?u)\b\w\w+\b")  # TfidfVectorizer's default token_pattern


def counts(text: str) -> dict[str, int]:
    """The token counts of one text, keyed in order of first occurrence (as `_count_vocab`)."""
    out: dict[str, int] = {}
    for tok in TOKEN.findall(text.lower()):
        out[tok] = out.get(tok, 0) + 1
    return out


def vectorize(texts: Iterable[str]) -> sparse.csr_matrix | None:
    """`TfidfVectorizer().fit_transform(texts)`; None when no text has a token (scikit-learn's
    "empty vocabulary")."""
    return from_counts([counts(t) for t in texts])


def from_counts(rows: list[Mapping[str, int]]) -> sparse.csr_matrix | None:
    """The TF-IDF matrix of texts given by their token counts (each in first-occurrence order)."""
    vocab: dict[str, int] = {}
    j: list[int] = []
    values: list[int] = []
    indptr = [0]
    for row in rows:  # _count_vocab: columns numbered in order of first occurrence in the corpus
        j.extend(vocab.setdefault(tok, len(vocab)) for tok in row)
        values.extend(row.values())
        indptr.append(len(j))
    if not vocab:
        return None
    x = sparse.csr_array(
        (
            np.asarray(values, dtype=np.intc),
            np.asarray(j, dtype=np.int32),
            np.asarray(indptr, dtype=np.int32),
        ),
        shape=(len(rows), len(vocab)),
        dtype=np.float64,
    )
    x.sort_indices()
    x = x[:, np.arange(len(vocab))]  # _limit_features: at the default df bounds every column stays
    order = sorted(vocab.items())  # _sort_features: columns renumbered by term
    remap = np.empty(len(order), dtype=x.indices.dtype)
    for new, (_, old) in enumerate(order):
        remap[old] = new
    x.indices = remap.take(x.indices, mode="clip")
    df = np.bincount(x.indices, minlength=x.shape[1]).astype(np.float64)  # TfidfTransformer.fit
    df += 1.0
    idf = np.full_like(df, fill_value=len(rows) + 1, dtype=np.float64)
    idf /= df
    np.log(idf, out=idf)
    idf += 1.0
    x.data *= idf[x.indices]
    _normalize_rows(x)
    return sparse.csr_matrix(x)


def _normalize_rows(x: sparse.csr_array) -> None:
    """`inplace_csr_row_normalize_l2`: each row's sum of squares taken left to right, from 0.0,
    one position at a time across all rows (numpy's own sums pair the terms up, which rounds
    otherwise), then every entry divided by its row's root; an all-zero row is left as it is."""
    data, starts = x.data, x.indptr[:-1]
    lengths = np.diff(x.indptr)
    sums = np.zeros(len(lengths))
    for k in range(int(lengths.max()) if len(lengths) else 0):
        live = lengths > k
        v = data[starts[live] + k]
        sums[live] += v * v
    norms = np.sqrt(sums)
    per_entry = np.repeat(norms, lengths)
    nonzero = per_entry != 0.0
    data[nonzero] /= per_entry[nonzero]
