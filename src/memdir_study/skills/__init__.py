"""The skill setting (docs/skills.md): ALFWorld task chains whose stores are built from their
own trajectories; task i sees only a store built from tasks 1..i-1.

- `chain.py`: a `ChainCell` per variant and chain; the executor is an offline policy
  (`offline`, `offline-novice`) or a model (`execution.py`, the ALFWorld execution role); a
  cell whose model calls fail is aborted whole; each row names the journal snapshot after its
  task and prices deploy and build usage per task. `ray_executor.py`: one chain per Ray task, played in order.
- `variants.py`: the `SkillVariant`s (no-store, episode-log, curated skills, skills+mem, GS),
  each serving before a task and recording after it through `Roles` (a curator and a search
  model, or their offline baselines `distill.py` and `guidance.py`); the outcome gate, on
  skills+mem and GS only (`variants.GATED`), is a store guard (`tools/guards.py`).
- Serving: `retrieve.py` (whole-entry retrieval per tool set: grep, bm25, shell), `serving.py`
  (with a model: the search agent picks entries or writes GS guidance on a throwaway copy),
  `render.py` (an episode as markdown: the curator's chunk, the episode log's entry).
- No-model executors: `policy.py` (procedures built in) with `hints.py` (what it reads from
  entries; the patterns the distiller and guidance writer share), `novice.py` (must learn each
  family's procedure from memory).
- Records: `folder.py` (`tasks.jsonl`, `aborted.jsonl`, manifest and stores, over
  `memdir_study/runfolder.py`), `bills.py` (search and execution bills, the search bill's climb, the
  invalid-action rate), `fate.py` (the early files' fate, Figure 8), `paired.py` (each store
  against no-store, one-sided sign tests), `report.py`.
"""
