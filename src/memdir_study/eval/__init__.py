"""The conversational study (docs/eval.md): cells of benchmark x conversation x variant, run,
scored, summarized and reported from their run folder alone.

- Running: `runner.py` runs `ConversationCell`s into a run folder (`folder.py`: its layout over
  `memdir_study/runfolder.py`), 8 questions in flight, resumable from per-cell build markers plus
  `answers.jsonl`, a failing cell aborted whole (its answers withdrawn); `progress.py` the
  progress bars; `stores_from.py` (`--stores-from RUN`: the cells' stores taken from another
  run instead of built, Table 7's grid); `asking.py` (the one way a cell's questions are put
  to what its build left, chosen once: closed-book, the search or read search over the store,
  or, under a profile that can write, `shell_search.py`: each question on its own scratch
  copy); the cells go through an executor, `LocalExecutor` (asyncio, the default) or
  `ray_executor.py` (`--executor ray`, each cell a Ray task carrying only settings, over
  `memdir_study/cluster.py`).
- Records: `records.py` types them (an answer row, a cell and a run summary, the timings);
  `summary.py` derives `summary.json` from the folder alone with no wall time in it
  (those go to `timings.json`), so the same cells give the same bytes on either executor;
  `report.py` renders `report.md` and plots from those two files alone (`report_tables.py`: the
  paired comparisons and Table 18's caching efficiency).
- Scoring: `lexical.py` (LoCoMo token F1 and exact match: what `--judge offline` grades by),
  `citations.py` (through the product's one resolver, `store/citations.py`), `judges.py`
  (fixed-prompt LLM judges answering in JSON: correctness, and attribution on three 0-1 scales),
  `composite.py` (the study's run-to-run composite of grounding, correctness and attribution),
  `model_settings.py` (Table 11's per-role settings, recorded
  in the manifest), `stats.py` (the comparisons, one- or two-sided as their claim, by the leaf
  `sign_test.py`; scores with and without defective golds).
- Without a model: `retrieval.py` (`bench retrieval`: recall@k, nDCG@10, session level, per
  category and search mode, against the gold evidence) and `writes.py` (`bench writes`: fact
  recall against LoCoMo's observations, precision and junk, cost per kept fact;
  `writes_run.py` its resumable run folder, `writes_report.py` summary, table and plot).
"""
