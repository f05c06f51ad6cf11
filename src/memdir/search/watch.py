"""Freshness without a walk per search: the kernel's change notices for a store's folders.

The index must never answer from a file as it was (docs/retrieval.md). A stat walk before each
search guarantees that, at a cost that grows with the store
(benchmarks/results/2026-12-06-docstring-figures.md, "search/watch.py"). inotify gives the same
guarantee for almost nothing: the kernel queues a change notice inside the writing system call,
before the writer returns, so an edit finished before a search began is always waiting in the
queue when the search drains it (one non-blocking read: microseconds). watchfiles was the other
candidate; it batches notices over a debounce window, so a search right after an edit could miss
it, and it needs a thread per store.

Watches cover every visible folder down to MAX_DEPTH. A folder created or moved in is watched,
then walked, so files written into it before its watch existed are still seen. A queue
overflow, a failure to add a watch (the kernel's per-user limit) or a platform without inotify
means: walk, as before. Only Linux has inotify; elsewhere every search walks, and so it does
with `MEMDIR_WATCH=0`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.store.paths import MAX_DEPTH, PREFIX
from memdir.store.safefs import utf8_name

log = logging.getLogger(__name__)

try:
    from inotify_simple import INotify, flags  # type: ignore[import-untyped]
except ImportError:  # not Linux, or not installed: every search walks
    INotify = None
    flags = None

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_IN_DONT_FOLLOW = 0x02000000
_IN_ONLYDIR = 0x01000000


@dataclass
class Changes:
    """What changed since the last drain: .md files, and folders whose whole subtree must be
    looked at again (created, moved in or out, or removed)."""

    files: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        return not self.files and not self.folders


class Watcher:
    """inotify watches on every visible folder of one store."""

    def __init__(self, root: Path) -> None:
        assert INotify is not None and flags is not None
        self.root = root
        self._ino: Any = INotify(nonblocking=True)
        self._mask = (
            flags.MODIFY
            | flags.ATTRIB
            | flags.CLOSE_WRITE
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.CREATE
            | flags.DELETE
            | flags.DELETE_SELF
            | _IN_DONT_FOLLOW
            | _IN_ONLYDIR
        )
        self._folders: dict[int, str] = {}
        self._lock = threading.Lock()
        self._add_tree(PREFIX)

    @classmethod
    def start(cls, root: Path) -> Watcher | None:
        """A watcher, or None (with the reason logged) where notices are not available or
        `MEMDIR_WATCH=0` turns them off (a network file system, whose other clients' writes
        raise no local notice)."""
        if INotify is None or os.environ.get("MEMDIR_WATCH", "1") == "0":
            return None
        try:
            return cls(root)
        except OSError as exc:
            log.info("no change notices for %s (%s); every search walks the store", root, exc)
            return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._ino.close()

    def _disk(self, folder: str) -> Path:
        rel = folder[len(PREFIX) :].lstrip("/")
        return self.root / rel if rel else self.root

    def _add_tree(self, folder: str) -> None:
        """Watch `folder` and every visible folder under it. Raises OSError when the kernel
        refuses a watch (the caller then walks)."""
        stack = [folder]
        while stack:
            current = stack.pop()
            depth = current.count("/") - PREFIX.count("/")
            try:
                wd = self._ino.add_watch(self._disk(current), self._mask)
            except FileNotFoundError:
                continue  # removed meanwhile
            except NotADirectoryError:
                continue  # replaced by a file or a link
            self._folders[wd] = current
            if depth >= MAX_DEPTH:
                continue
            try:
                with os.scandir(self._disk(current)) as it:
                    for ent in it:
                        if ent.name[0] != "." and utf8_name(ent.name) and ent.is_dir(follow_symlinks=False):
                            stack.append(f"{current}/{ent.name}")
            except OSError:
                continue

    def drain(self) -> Changes | None:
        """The changes queued since the last drain, or None when the queue cannot be trusted
        (it overflowed, or a new folder could not be watched): then walk everything."""
        with self._lock:
            try:
                events = self._ino.read(timeout=0)
            except OSError as exc:
                log.warning("change notices failed (%s); walking the store", exc)
                return None
            out = Changes()
            for ev in events:
                if ev.mask & flags.Q_OVERFLOW:
                    return None
                folder = self._folders.get(ev.wd)
                if folder is None:
                    continue
                if ev.mask & flags.IGNORED:
                    self._folders.pop(ev.wd, None)
                    continue
                if not ev.name:  # the watched folder itself went away
                    out.folders.add(folder)
                    continue
                if ev.name[0] == "." or not utf8_name(ev.name):
                    continue
                child = f"{folder}/{ev.name}"
                if ev.mask & flags.ISDIR:
                    out.folders.add(child)
                    if ev.mask & (flags.CREATE | flags.MOVED_TO):
                        try:
                            self._add_tree(child)
                        except OSError as exc:
                            log.warning("cannot watch %s (%s); walking the store", child, exc)
                            return None
                elif ev.name.endswith(".md"):
                    out.files.add(child)
            return out
