"""Search: the indexes derived from a store's files, and the one ranking every surface shares.

The files are the truth (`memdir.store`); everything here is derived from them, lives in
`<root>/.memdir/index/` and can be deleted: the next search rebuilds it. This room imports the
store and the leaves; the store imports nothing from here (a Store built by
`tools/wiring.open_store` is handed `index.observer` as one of its observers).

To change how search ranks, open `hybrid.py`: sections by BM25, by meaning or both, fused by
weighted reciprocal rank (`RRF_K`, `RRF_WEIGHTS`, `CANDIDATES`), content before navigation
(`content_first`), then live values before past ones (`live_first.py`). `search_sections` is
the ranking the `section_search` tool, `Memory.search`, `memdir search --mode`, the UI and the
read search all call. What it ranks over, one file each:
- `analysis.py`: the one analyzer (words, stopwords, stemming) for documents and queries alike;
  `ANALYSIS_VERSION` rebuilds an index built otherwise.
- `index.py`: `SearchIndex`, files by BM25 on tantivy (`BOOSTS`: body against signage) with a
  SQLite manifest; `bm25_full_search` ranks with it. It keeps the section index in step.
- `units.py`: what a section is (a unit: the body under one heading, long ones windowed) and the
  text each embeds; `unit_index.py`: the section index, BM25 over units and their vectors.
- `embed.py`: the embedding models (all-MiniLM-L6-v2 or its static distillation, the `embed`
  extra; `MEMDIR_EMBEDDER`).
- `live_first.py`: a key's live line above its struck-through past lines, on every surface.

Freshness (docs/retrieval.md): a tool's write is noted by the observer and committed by the next
search; an edit made outside the tools is caught by `watch.py` (inotify change notices) or, where
those are missing, the stat walk of `scan.py`.

`chunks.py` builds the chunk-retrieval store (one file per stream chunk, indexed at once): the
retrieval baseline a curated store's search is measured against.
"""
