"""The journal: one git commit per writing step in `<root>/.memdir/journal.git`.

`repository.py` holds `Journal`, the reader side; the other modules are the writer's parts
(see its docstring). Callers outside the store import from here.
"""

from memdir.store.journal.format import BASELINE, MEMORY_PREFIX, RECOVERED, JournalStep
from memdir.store.journal.repository import Journal

__all__ = ["BASELINE", "MEMORY_PREFIX", "RECOVERED", "Journal", "JournalStep"]
