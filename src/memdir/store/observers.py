"""Which derived views follow a store's writes. Imported lazily so `store` needs neither."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memdir.store.store import ObserverFactory

# (module, attribute): each attribute is a callable `factory(store) -> StoreObserver`.
# Observers must be cheap to build: open their state lazily on the first step they see.
DEFAULT_OBSERVERS = (("memdir.store.index", "observer"), ("memdir.store.journal", "observer"))


def default_factories() -> list[ObserverFactory]:
    factories: list[ObserverFactory] = []
    for mod_name, attr in DEFAULT_OBSERVERS:
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as exc:
            if exc.name == mod_name:
                continue  # that view is not part of this build
            raise
        factories.append(getattr(mod, attr))
    return factories
