"""memdir: long-term memory for LLM agents as a folder of markdown files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from memdir.api import AsyncMemory, Memory
    from memdir.tools.guards import Guards

__all__ = ["AsyncMemory", "Guards", "Memory", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy, so `import memdir` (the CLI's version string) does not load the whole harness.
    if name in ("Memory", "AsyncMemory"):
        from memdir import api

        return getattr(api, name)
    if name == "Guards":
        from memdir.tools.guards import Guards

        return Guards
    raise AttributeError(f"module 'memdir' has no attribute {name!r}")
