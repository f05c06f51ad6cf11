"""The journal: one git commit per writing step in `<root>/.memdir/journal.git`, so a store's
whole history can be replayed (docs/reliability.md).

Everything outside the journal goes through these names, so the parts behind them (the step
log, the committer process, the tree splicing, recovery and repair) can change without a
caller noticing:

- record a step: `journal_observer(store)`, the store observer `tools/wiring.py` attaches; it
  logs each writing step before the call returns and a committer process commits it just after
  (`stop_committer` ends this process's committer, as `Memory.close` does);
- list steps: `Journal(root).steps()`, oldest first, each a `JournalStep`; `Journal.head()`
  names the snapshot as it is now;
- list operations: `group(steps)`, the steps grouped back into the operations that made them
  (`find` one by id, `is_baseline` for step 0's);
- the files at a step: `Journal.files_at(commit)`, {path: blob};
- read a file at a step: `Journal.blob_chunks(blob)`, streamed a chunk at a time, or
  `Journal.blobs(blobs)` for many small files whole.

`repository.py` is the reader; `observer.py` the writer's entry, whose docstring names the rest.
"""

from memdir.store.journal.commitd import stop as stop_committer
from memdir.store.journal.format import BASELINE, MEMORY_PREFIX, RECOVERED, JournalStep
from memdir.store.journal.observer import JournalObserver
from memdir.store.journal.observer import observer as journal_observer
from memdir.store.journal.operations import OperationSteps, find, group, is_baseline
from memdir.store.journal.repository import Journal

__all__ = [
    "BASELINE",
    "MEMORY_PREFIX",
    "RECOVERED",
    "Journal",
    "JournalObserver",
    "JournalStep",
    "OperationSteps",
    "find",
    "group",
    "is_baseline",
    "journal_observer",
    "stop_committer",
]
