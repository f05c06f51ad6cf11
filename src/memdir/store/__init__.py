"""The store: the canonical markdown tree on disk and the only code that writes it.

Everything else derives from these files or serves them. Writes go through `Store.step()`
(one tool call = one step, under the per-store writer lock; the step's changes go to the
observers the Store was handed when built, and a Store's first step sweeps the temp files
killed writers left). A bare `Store(root)` writes files and nothing else; `tools/wiring.py`
builds one with its search index, journal and guards. Derived state lives in `<root>/.memdir/`;
search, which derives from these files, is a room of its own (`memdir.search`): it imports the
store, the store imports nothing from it.

- Confinement: `paths.py` parses `/memories/...` and refuses every way out (`..` in any
  spelling, hidden segments, NUL, lone surrogates, over-long names, more than `MAX_DEPTH` (32)
  folder levels; every walk stops there and reports what it left unread); `safefs.py` does all
  I/O through descriptor chains opened `O_NOFOLLOW` (iterative walk and removal, bounded
  descriptors); `dirsync.py` the folder fsyncs that make a write, move or removal durable
  before the call returns (a move's two folders at once); `listing_walk.py` the walk behind a
  listing; `window.py` a page of a file's lines in bounded memory.
- Files: `store.py` (`Store`, `Store.step`); `atomic.py` (atomic writes, the writer lock on
  `oslock.py`, the one file lock: an flock per holder, reentrant in a thread); `frontmatter.py`
  (lenient, no YAML 1.1 retyping) over `safeyaml.py` (the one YAML loader: no aliases, no deep
  nesting); `outline.py` (headings with line ranges); `spec.py` (the Agent Memory convention:
  validate, core memory, init); `boundary.py` (the data boundary memory is shown to models in:
  a note, one tagged block, lookalike tags neutralised); `folder_index.py` (a folder index,
  `MEMORY.md`, as memdir writes it); `folder_index_plan.py` (the folder indexes one write
  needs); `descriptions.py` (listing descriptions and their cache); `citations.py` (the one
  citation resolver, for `Memory.ask` and every answer scored).
- Landing and recovery: `landing_intent.py` (the intent record a many-file landing writes
  first, and the order its files are placed in, new before removed; rolled forward after a
  kill by the next process to open the store, readers included: `Store.finish_landing`;
  docs/reliability.md); `scratch.py` (throwaway copies under
  `.memdir/scratch/`, swept once their process is gone); `workcopy.py` + `mirror.py` (the
  shell's private working copy and the link-safe, content-digest mirror carrying its changes
  back); `moves.py` (a span of steps' renames composed, so findings follow a moved file);
  `retarget.py` (the `see /memories/...` references a rename moves, rewritten store-wide);
  `operations.py` (the operation each step belongs to); `ingest_ledger.py` (where a batch of
  turns goes in the stream; turns already ingested, known by their place in their conversation,
  left out while their batch has lines in the store; one ingest at a time).
- Per root: `per_root.py` (one open search index or description cache per root, least
  recently used closed first).
- History: `journal/`, one git commit per writing step in `.memdir/journal.git`, behind a
  small facade (record a step, list steps and operations, files at a step; its `__init__`).
  A step is logged before the call returns (`log.py`) and committed just after by the
  committer process (`commitd.py`), its paths spliced into the last tree (`tree.py`), objects
  fsynced before the ref moves; `format.py` the commit message and trailers, `catch_up.py` the log
  landed in order under the journal lock, `baseline.py` the first snapshot, `reconcile.py` a
  killed writer's in-flight mark and the whole-tree check (`recovered` steps), `repair.py` an
  unreadable head put back on the newest whole commit, `operations.py` the steps grouped back
  into operations.
"""
