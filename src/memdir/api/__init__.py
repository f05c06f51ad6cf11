"""The Python API for agent builders (`memory.py`), its typed results (`results.py`), the
store's past from the journal (`history.py`), and what `add` accepts (`inputs.py`)."""

from __future__ import annotations

from memdir.api.memory import AsyncMemory, Memory, Snapshot
from memdir.api.results import AddResult, Answer, Citation, Profile, SearchHit, SearchMode
from memdir.store.journal import JournalStep
from memdir.store.store import Change

__all__ = [
    "AddResult",
    "Answer",
    "AsyncMemory",
    "Change",
    "Citation",
    "JournalStep",
    "Memory",
    "Profile",
    "SearchHit",
    "SearchMode",
    "Snapshot",
]
