"""The one place a store is built with the views that follow its writes and the operator's guards.

A bare :class:`Store` writes files and nothing else. The search index and the journal follow
its steps only when their factories are handed to it at construction, and the guards hold only
when it is built as a :class:`GuardedStore`. Every caller that serves tool calls (the CLI, the
MCP server, the Python API, a plugin's runs) builds its store here, so
they all get the same views and no guard is swapped in after a store exists.

It lives in `tools` because the guards do: `store` <- `tools` (ARCHITECTURE.md), so the store
layer names no observer and imports nothing from here; a store-layer helper that writes takes
a store built by its caller.
"""

from __future__ import annotations

import os

from memdir.store import spec
from memdir.store.journal import journal_observer
from memdir.store.store import ObserverFactory, Store
from memdir.tools.guards import GuardedStore, Guards


def observer_factories(*, index: bool = True, journal: bool = True) -> list[ObserverFactory]:
    """The factories of the derived views: the search index, then the journal.

    The index is left out of a build that lacks its module (a partial install); a module that
    is present but fails to import (a missing dependency) is an error, not a silent gap.
    """
    factories: list[ObserverFactory] = []
    if index:
        try:
            import memdir.search.index as index_module
        except ModuleNotFoundError as exc:
            if exc.name != "memdir.search.index":
                raise
        else:
            factories.append(index_module.observer)
    if journal:
        factories.append(journal_observer)
    return factories


def open_store(
    root: str | os.PathLike[str],
    *,
    create: bool = False,
    init: bool = False,
    index: bool = True,
    journal: bool = True,
    guards: Guards | None = None,
) -> Store:
    """The store at `root`, followed by the index and the journal (each unless switched off),
    held to `guards` when they are given (a :class:`GuardedStore`, even with every guard off).

    `create` makes the folder; `init` also makes it a valid memory (`spec.init`: the stock
    MEMORY.md). That file is the operator's, not the model's, so it is written through an
    unguarded store with the same views before the guarded one takes any call.
    """
    observers = observer_factories(index=index, journal=journal)
    if guards is None:
        store = Store(root, create=create, observers=observers)
        if init:
            spec.init(store)
        return store
    guarded = GuardedStore(root, guards, create=create, observers=observers)
    if init:
        spec.init(Store(guarded.root, observers=observers))
    return guarded


def release_store(store: Store, settle_s: float = 30.0) -> None:
    """Close what a store holds open (a tenant leaving the server's pool, a `Memory` closed).
    The search index and the listing's description cache are shared per root in the process,
    each in a registry of its own (bounded there too), so this root's instance is taken out and
    closed; the next use opens a new one. Each observer is then let finish: a journal's
    whole-tree check on its own thread is waited for (`settled`, which also lands every logged
    step), and anything with a `flush` or `close` gets it."""
    from memdir.search import index
    from memdir.store.descriptions import DescriptionCache

    index.SearchIndex.registry.release(store.root)
    DescriptionCache.registry.release(store.root)
    for obs in store.observers:
        settled = getattr(obs, "settled", None)
        if callable(settled):
            settled(settle_s)
        for name in ("flush", "close"):
            method = getattr(obs, name, None)
            if callable(method):
                method()
