"""The Python API for agent builders (`memory.py`), its typed results (`results.py`), the
store's past from the journal (`history.py`), and what `add` accepts (`inputs.py`).

`Memory(root)` and `AsyncMemory` (the same, awaitable), with a default model and the guards
given at construction: `add` takes text, chat messages, Turns or a file, each call a new session
of derived locators (or the rest of a conversation an earlier call began) placed in the stream
by `store/ingest_ledger.py` as `memdir ingest` places them, and runs the management role; `ask`
runs the answering role (any model name, `local` included; offline by default) and resolves the
answer's citations; `search` ranks sections with no model; `history()`, `operations()` and
`at(step)` read the journal (`at` gives a read-only `Snapshot`); `sync` shares the store through
a git remote (`SyncReport`, docs/sync.md); `tools` in any wire format
(`openai-responses` too), `call` and `context`. It is a context manager: `close()` releases the
store (`tools/wiring.release_store`) and, with the process's last open `Memory`, ends the
journal's committer process. Results are typed records (`AddResult`, `SearchHit`, `Answer` with
resolved `Citation`s; a past step is the journal's `JournalStep`, a change the store's
`Change`).
"""

from __future__ import annotations

from memdir.api.memory import AsyncMemory, Memory, Snapshot
from memdir.api.results import AddResult, Answer, Citation, Profile, SearchHit, SearchMode
from memdir.store.journal import JournalStep
from memdir.store.store import Change
from memdir.sync import SyncReport

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
    "SyncReport",
]
