"""One open instance per memory root in a process, the least recently used closed past a cap.

The search index and the listing's description cache each hold descriptors and a database
connection per store; an evaluation touches hundreds of stores and a server thousands of
tenants, so each keeps a bounded registry of open instances. A closed instance reopens on its
next use, so eviction never loses anything: it only costs a reopen. This is that registry,
shared so both evict and release by one rule.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, Protocol, TypeVar


class Closable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=Closable)


class PerRoot(Generic[T]):
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: OrderedDict[Path, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, root: Path, make: Callable[[], T]) -> T:
        """The instance of `root`, made on first use; marks it the most recently used."""
        with self._lock:
            found = self._open.pop(root, None)
            if found is None:
                found = make()
            self._open[root] = found
            evicted = [self._open.popitem(last=False)[1] for _ in range(len(self._open) - self.cap)]
        for old in evicted:
            old.close()
        return found

    def release(self, root: Path) -> bool:
        """Take `root`'s instance out and close it (a tenant leaving the pool); True if open."""
        with self._lock:
            held = self._open.pop(root, None)
        if held is not None:
            held.close()
        return held is not None

    def __contains__(self, root: Path) -> bool:
        with self._lock:
            return root in self._open
