"""A save made while `memdir adopt` lands: noticed, kept, and the landing put back whole.

An editor takes no memdir lock, so a note can be saved between adopt's plan and the moment its
planned text replaces the note, during a landing of hundreds of notes as well. `checked` holds
the landing to the bytes adopt read under the writer lock: each path is compared with them just
before landing first replaces, moves or removes it, and a difference stops the landing (`Saved`)
with the save recorded as that path's old bytes, so landing's own undo leaves it in place and
adopt plans again (docs/reliability.md, section 8). The store's own methods do every write,
its guards included; only their calls are watched, for the landing's duration.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from memdir.agents.landing import sha256
from memdir.errors import MemdirError, NotFoundError
from memdir.store.paths import MemoryPath
from memdir.store.store import Store


class Saved(MemdirError):
    """A note held other bytes than adopt had checked, just before the landing replaced it."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} was saved while adopt landed")
        self.path = path


@contextlib.contextmanager
def checked(store: Store, now: dict[str, bytes | None], old: dict[str, bytes]) -> Iterator[None]:
    """While the landing runs, each path's first write, removal or move first compares the path
    with `now` (what adopt checked); a difference stops the landing with `Saved`, and `old`
    then holds the saved bytes, so landing's undo leaves the save in place (and does not remove
    a file someone made at a path adopt was to create). A later call on the same path (the
    rewrite of a note just moved, or the undo's) runs unless the path no longer holds what the
    landing put there (saved again since: that save stays). The store's own methods (its
    guards too) do the writing."""
    real = {name: getattr(store, name) for name in ("write", "create", "delete", "rename")}
    ours: dict[str, str | None] = {}  # digest of what the landing's calls left at each path

    def held(p: str) -> str | None:
        """What `p` should hold: what the landing put there, else what adopt checked."""
        if p in ours:
            return ours[p]
        data = now.get(p)
        return None if data is None else sha256(data)

    def saved(p: str) -> bool:
        return present(store, p)[0] != held(p)

    def watched(name: str) -> Callable[..., object]:
        def call(*args: str | MemoryPath) -> object:
            paths = [store.parse(a).text for a in (args[:2] if name == "rename" else args[:1])]
            if any(p in ours for p in paths):  # a path the landing changed already
                if any(p in ours and saved(p) for p in paths):
                    return None
            else:
                for p in paths:
                    if p in now and saved(p):
                        data = present(store, p)[1]
                        if data is not None:
                            old[p] = data
                        raise Saved(p)
            before = {p: held(p) for p in paths}
            result = real[name](*args)
            if name == "rename":
                ours[paths[0]], ours[paths[1]] = None, before[paths[0]]
            else:
                text = args[1] if name != "delete" else None
                ours[paths[0]] = None if not isinstance(text, str) else sha256(text.encode("utf-8"))
            return result

        return call

    for name in real:
        setattr(store, name, watched(name))
    try:
        yield
    finally:
        for name in real:
            delattr(store, name)


def present(store: Store, path: str) -> tuple[str | None, bytes | None]:
    """(digest, bytes) of what `path` holds now; (None, None) when nothing is there."""
    try:
        data = store.read_bytes(path)
    except NotFoundError:
        return None, None
    except MemdirError:
        return "unreadable: a link, a FIFO or a folder now", None
    return sha256(data), data
