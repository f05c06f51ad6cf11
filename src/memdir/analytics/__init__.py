"""Analytics: what a store, or a step of its journal, measures. Reads, never writes; imports
only `store` (definitions: docs/metrics.md).

- `tree.py`: the combined tree (root, folders, files, headings) every metric shares;
  `stats.py`: `memdir stats`, the profile and shape panel.
- `taxonomy.py`: B1-B4 by TF-IDF cosine (B3 in `leakage.py`), the rows from `tfidf.py`,
  scikit-learn's `TfidfVectorizer()` reproduced bit for bit without importing it.
- `facts.py`: the fact lines of a file (the keyed-fact grammar, locators and fact identity
  come from `memdir.conventions`); `integrity.py`: `check` and `diff --facts`;
  `injection.py`: the lines that address a model, `check`'s `injection` warnings.
- `growth.py` + `growth_plots.py`: growth replayed from the journal, and its plots.
- `health.py`: `health`, `check`'s problems and the content checks as `Finding`s
  (`health_types.py`) with a stable key, a path, an action and the detail to act on;
  `health_facts.py` from `check`, `health_content.py` from the tree and B1/B3,
  `health_cache.py` each file's subtree and the last result per store object (docs/health.md).
"""
