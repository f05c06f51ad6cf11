"""memdir: long-term memory for LLM agents as a folder of markdown files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from memdir.api import AddResult, Answer, AsyncMemory, Memory, SearchHit
    from memdir.errors import MemdirError, NoOpWarning
    from memdir.store.journal import JournalStep
    from memdir.store.store import Change
    from memdir.tools.guards import Guards

__all__ = [
    "AddResult",
    "Answer",
    "AsyncMemory",
    "Change",
    "Guards",
    "JournalStep",
    "MemdirError",
    "Memory",
    "NoOpWarning",
    "SearchHit",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # Lazy, so `import memdir` (the CLI's version string) does not load the whole harness; each
    # name comes from the module that defines it, on first use.
    if name in ("Memory", "AsyncMemory", "Change", "JournalStep"):
        from memdir import api

        return getattr(api, name)
    if name in ("AddResult", "Answer", "SearchHit"):
        from memdir.api import results

        return getattr(results, name)
    if name in ("MemdirError", "NoOpWarning"):
        from memdir import errors

        return getattr(errors, name)
    if name == "Guards":
        from memdir.tools.guards import Guards

        return Guards
    raise AttributeError(f"module 'memdir' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
