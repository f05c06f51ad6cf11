"""Store: the only code that writes memory files.

Every write happens inside a :meth:`Store.step` (one tool call = one step): the step holds the
writer lock, records what changed, and hands the changes to the observers (the search index,
the journal) when it ends. Files are the truth; observers only derive from them.
A Store is handed its observers when built and names none (they import this module);
`memdir.tools.wiring.open_store` is the one place that builds a store with them and the guards.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, cast

from memdir.errors import ExistsError, NotFoundError, PathError
from memdir.store import landing_intent, operations, scratch
from memdir.store.atomic import WriterLock
from memdir.store.paths import (
    MAX_DEPTH,
    ROOT,
    STATE_DIR,
    Confinement,
    MemoryPath,
    parse_memory_path,
    unplain,
)
from memdir.store.safefs import TMP_PREFIX, Found, SafeRoot, Unread, private_dirs
from memdir.store.safefs import unread as _unread
from memdir.store.secrets import SecretHit, redact

ChangeKind = Literal["create", "modify", "delete", "rename"]
CHANGE_KINDS: tuple[ChangeKind, ...] = ("create", "modify", "delete", "rename")


@dataclass(frozen=True)
class Change:
    """One file-level effect of a step; directory operations expand to their files. The one
    definition: the journal records these and the API returns them (`memdir.api.Change`)."""

    kind: ChangeKind
    path: str
    new_path: str | None = None


@dataclass
class Step:
    """One tool call's worth of writes, with who made it (role, chunk or task id) when known."""

    tool: str
    meta: landing_intent.StepMeta = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    landed_intent: bool = False  # carried out a landing's intent record: removed once observed


ORPHAN_AGE = 60.0  # seconds: a temp file older than this, seen under the writer lock, is orphaned
_stepping = threading.local()  # .roots: the roots this thread is in a step on, whichever Store


def _in_step(root: Path) -> bool:
    roots: set[Path] = getattr(_stepping, "roots", set())
    return root in roots


class StoreObserver(Protocol):
    """What follows a store's steps: the index, the journal, a span's renames (`moves.py`).

    `on_step` gets every step that changed something, after its writes. `before_step` and
    `after_step` are for an observer that must see the store before the tool writes (the
    journal commits what a killed writer left, under the same lock) or the end of every step,
    changes or none (the journal's record is due then); an observer subclasses this class to
    inherit their no-ops, so the Store calls all three on every observer and asks none which it
    has. `keeps_description_cache`: the listing's description cache follows the store only where
    an observer keeps it (the search index's, `descriptions.py`). `records_steps`: the observer
    is the store's record of its steps (the journal), so a stopped landing's intent record may go
    once it has the step (`Store._resume_landing`)."""

    keeps_description_cache: ClassVar[bool] = False
    records_steps: ClassVar[bool] = False

    def before_step(self, store: Store, step: Step) -> None:
        """Under the writer lock, before the tool writes."""
        return None

    def on_step(self, store: Store, step: Step) -> None: ...

    def after_step(self, store: Store, step: Step) -> None:
        """Under the writer lock, once the step is over, whether it changed anything or not."""
        return None


ObserverFactory = Callable[["Store"], StoreObserver]


@dataclass(frozen=True)
class Entry:
    """A file or folder found by a walk: memory path, disk path, size in bytes, mtime."""

    path: MemoryPath
    disk: Path
    is_dir: bool
    size: int
    mtime_ns: int = 0


def _is_temp(name: str) -> bool:
    return name.startswith(TMP_PREFIX)


class Store:
    """A memory root on disk. Paths in and out are memory paths (`/memories/...`). Each of
    `observers` is called once with the store, and what it builds sees every step; without them
    the store writes files and nothing else (for readers and throwaway copies)."""

    def __init__(
        self, root: str | os.PathLike[str], *, create: bool = False, observers: Sequence[ObserverFactory] = ()
    ) -> None:
        root_path = Path(root)
        if create:
            private_dirs(root_path)  # a new root is its owner's alone (safefs.DIR_MODE)
        if not root_path.is_dir():
            raise NotFoundError(f"memory root {str(root)!r} does not exist; run 'memdir init {root}' first")
        self.confine = Confinement(root_path)
        self.root = self.confine.root
        self.safe = SafeRoot(self.root)
        self._lock: WriterLock | None = None
        self._local = threading.local()
        self._swept = False
        self.observers: list[StoreObserver] = [factory(self) for factory in observers]
        self.finish_landing()

    # -- locations -------------------------------------------------------------------
    @property
    def state_dir(self) -> Path:
        """Where derived state lives (index, journal, lock): hidden from every agent tool."""
        path = self.root / STATE_DIR
        private_dirs(path)  # it holds copies of every file (the journal, the index)
        return path

    @staticmethod
    def parse(path: str | MemoryPath) -> MemoryPath:
        """A checked memory path. Store I/O then goes through `safe` (link-safe descriptors),
        so no separate disk walk is needed first."""
        return path if isinstance(path, MemoryPath) else parse_memory_path(path)

    def resolve(self, path: str | MemoryPath) -> tuple[MemoryPath, Path]:
        """A checked memory path and its disk path, every existing component verified (for
        callers that hand a path to something outside the store, such as ripgrep)."""
        mp = path if isinstance(path, MemoryPath) else parse_memory_path(path)
        return mp, self.confine.disk(mp)

    # -- steps and locking -----------------------------------------------------------
    @property
    def writer_lock(self) -> WriterLock:
        if self._lock is None:
            self._lock = WriterLock(self.state_dir / "writer.lock")
        return self._lock

    @contextlib.contextmanager
    def step(self, tool: str, **meta: Any) -> Iterator[Step]:
        """Hold the writer lock for one tool call and publish its changes when it succeeds."""
        outer: Step | None = getattr(self._local, "step", None)
        if outer is not None:  # nested: fold into the enclosing step
            yield outer
            return
        step = Step(tool, {k: v for k, v in meta.items() if v is not None})
        operations.for_step(self.root, tool).stamp(step.meta)  # what the person did (operations.py)
        with self.writer_lock.hold():
            if not self._swept:
                self._swept = True
                self.sweep_orphans()
            self._resume_landing()
            for obs in self.observers:  # see the store as it is before this step
                obs.before_step(self, step)
            self._local.step = step
            roots: set[Path] = getattr(_stepping, "roots", set())
            _stepping.roots = roots | {self.root}
            try:
                yield step
            finally:
                self._local.step = None
                _stepping.roots = roots
                # Published even when the call failed after writing: derived views follow disk.
                if step.changes:
                    for obs in self.observers:
                        obs.on_step(self, step)
                if step.landed_intent:  # the journal has the landing now: its plan may go
                    landing_intent.clear(self.root / STATE_DIR)
                for obs in self.observers:  # the step is over, changes or none
                    obs.after_step(self, step)

    def current_step(self) -> Step | None:
        """The step this thread is in, if any (a landing records its plan under its tool)."""
        step: Step | None = getattr(self._local, "step", None)
        return step

    def finish_landing(self) -> bool:
        """Roll forward a landing a kill stopped part way, if its intent record is there: every
        Store does this when it is built, so any process that opens the store, a reader too,
        sees it whole (docs/reliability.md). Under the writer lock, as the next writer would
        (`_resume_landing`); a landing still running in another process or thread is waited
        for, one running in this thread's own step is left alone. Costs one stat when no record
        is there. A process that cannot take the lock (no write permission) reads the store as
        the kill left it, with a warning; returns whether a record was handled."""
        state = self.root / STATE_DIR
        try:
            if not landing_intent.path(state).is_file() or _in_step(self.root):
                return False
            with self.writer_lock.hold():
                self._resume_landing()
        except OSError as exc:  # a read-only store or state folder, or a lock held past its timeout
            warnings.warn(
                f"a landing stopped part way in {self.root} could not be finished here ({exc}); "
                "this process reads the store as the stop left it: run any memdir command that "
                "can write the store (e.g. 'memdir check' as its owner) to finish it",
                stacklevel=3,
            )
            return False
        return True

    def _resume_landing(self) -> None:
        """Finish a landing a kill stopped part way (its intent record is still there), before
        anything else sees the store: its files are given their target bytes and the observers
        get it as the step it was, so the journal records it whole, under its own tool
        (`landing_intent.py`; if the killed step had already reached the journal, the journal
        finds nothing new and makes no second commit). The record goes only once that is done.
        A store no journal follows (a bare reader's, or one with the index only) puts the files
        in place and leaves the record, marked landed, for the next store the journal follows;
        that one leaves the files as they are by then (an edit made since is the person's, not
        the landing's)."""
        state = self.root / STATE_DIR
        intent = landing_intent.pending(state)
        if intent is None:
            return
        step = Step(
            intent.tool,
            {**intent.meta, landing_intent.ROLLED_FORWARD: "a kill stopped this landing part way"},
        )
        if not intent.landed:
            landing_intent.roll_forward(self.safe, intent)
        step.changes.extend(Change(cast(ChangeKind, k), p, n) for k, p, n in intent.changes)
        if step.changes:
            for obs in self.observers:
                obs.on_step(self, step)
        if any(getattr(obs, "records_steps", False) for obs in self.observers):
            landing_intent.clear(state)
        elif not intent.landed:  # no journal here: the record waits, marked, for one
            landing_intent.write(state, intent.as_landed())

    def sweep_orphans(self, older_than: float = ORPHAN_AGE) -> list[str]:
        """Remove the temp files killed writers left (`.memdir-tmp-*`); returns their names.

        Runs on a Store's first step, with the writer lock held: every write into the memory
        tree happens under that lock, so a temp file present then belongs to no live writer. The
        age margin also spares a file someone made by hand with that prefix a moment ago. The
        walk is `SafeRoot.scan`: descriptors, no link followed, no hidden folder entered (derived
        state included; no tool writes there), nothing below MAX_DEPTH levels. A temp folder is
        one a removal parked mid-way (`safefs.remove_tree`) when its process was killed. The
        throwaway copies a killed process left in the state folder go too (`scratch.py`).
        """
        cutoff = time.time() - older_than
        gone: list[str] = scratch.sweep_root(self.root)
        for f in self.safe.scan((), "/memories", hidden=True, only_files=_is_temp):
            if not _is_temp(f.parts[-1]) or f.kind not in ("file", "dir"):
                continue
            if f.mtime_ns / 1e9 >= cutoff:
                continue
            try:
                self.safe.delete(f.parts, f.parts[-1])
                gone.append(f.parts[-1])
            except (OSError, NotFoundError, PathError):
                continue
        return gone

    def _record(self, change: Change) -> None:
        step: Step | None = getattr(self._local, "step", None)
        if step is None:
            raise RuntimeError("store writes must happen inside Store.step()")
        step.changes.append(change)

    # -- reads -----------------------------------------------------------------------
    def read_bytes(self, path: str | MemoryPath) -> bytes:
        mp = self.parse(path)
        if mp.is_root:
            raise PathError(f"{mp.text} is a folder, not a file")
        return self.safe.read(mp.parts, mp.text)

    def read_text(self, path: str | MemoryPath) -> str:
        mp = self.parse(path)
        data = self.read_bytes(mp)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise PathError(f"{mp.text} is not UTF-8 text") from None

    def _lstat(self, path: str | MemoryPath) -> tuple[MemoryPath, os.stat_result | None]:
        mp = self.parse(path)
        return mp, self.safe.lstat(mp.parts, mp.text)

    def lstat(self, path: str | MemoryPath) -> os.stat_result | None:
        """The entry's lstat, or None when nothing is there: `exists` and `is_dir` on one walk."""
        return self._lstat(path)[1]

    def exists(self, path: str | MemoryPath) -> bool:
        return self._lstat(path)[1] is not None

    def is_dir(self, path: str | MemoryPath) -> bool:
        st = self._lstat(path)[1]
        return st is not None and stat.S_ISDIR(st.st_mode)

    def walk(self, top: str | MemoryPath = ROOT, *, unread: list[Unread] | None = None) -> Iterator[Entry]:
        """Every visible file and folder under `top`, sorted per folder, never through a link,
        never below MAX_DEPTH folder levels. What it leaves unread on purpose (a deeper folder,
        a name that is not UTF-8) is appended to `unread`, for callers that report it."""
        for f in self.scan(top, unread=unread):
            yield Entry(
                MemoryPath(f.parts), self.root.joinpath(*f.parts), f.kind == "dir", f.size, f.mtime_ns
            )

    def scan(self, top: str | MemoryPath = ROOT, *, unread: list[Unread] | None = None) -> Iterator[Found]:
        """`walk`'s files and folders as the scan meets them (path parts, kind, size, mtime),
        for a reader of every entry that needs no disk path: an Entry's Path and MemoryPath
        were half of walking 100,000 files."""
        mp = self.parse(top)
        if not self.is_dir(mp):
            return
        for f in self.safe.scan(mp.parts, mp.text):
            if f.kind == "dir" or f.kind == "file":
                yield f
            elif unread is not None:
                finding = _unread(f)
                if finding is not None:
                    unread.append(finding)

    def files(
        self, top: str | MemoryPath = ROOT, suffix: str = ".md", *, unread: list[Unread] | None = None
    ) -> list[Entry]:
        """Visible regular files under `top` ending in `suffix`, sorted by memory path."""
        found = [e for e in self.walk(top, unread=unread) if not e.is_dir and e.path.name.endswith(suffix)]
        return sorted(found, key=lambda e: e.path.parts)

    def snapshot(self) -> dict[str, tuple[int, int]]:
        """{memory path: (size, mtime_ns)} of every visible file; cheap change detection."""
        snap: dict[str, tuple[int, int]] = {}
        for e in self.walk():
            if not e.is_dir:
                snap[e.path.text] = (e.size, e.mtime_ns)  # one lstat per file, taken by the walk
        return snap

    # -- writes (inside a step) ------------------------------------------------------
    def create(self, path: str | MemoryPath, text: str) -> MemoryPath:
        mp = self.parse(path)
        if mp.is_root:
            raise PathError("the memory root is a folder; create files below it")
        self._check_parent(mp)
        self.safe.write(mp.parts, mp.text, text.encode("utf-8"), must_exist=False)
        self._record(Change("create", mp.text))
        return mp

    def write(self, path: str | MemoryPath, text: str) -> MemoryPath:
        """Replace the whole content of an existing file."""
        mp = self.parse(path)
        if mp.is_root:
            raise NotFoundError(f"{mp.text} does not exist")
        self.safe.write(mp.parts, mp.text, text.encode("utf-8"), must_exist=True)  # missing: NotFoundError
        self._record(Change("modify", mp.text))
        return mp

    def redact(self, text: str) -> tuple[str, list[SecretHit]]:
        """`text` as a write would store it: each secret as `[redacted: kind]`, unless this store's
        allowlist holds it (docs/secrets.md); for a caller that says what it wrote."""
        return redact(text, self.safe.allowed)

    def delete(self, path: str | MemoryPath) -> list[str]:
        mp = self.parse(path)
        if mp.is_root:
            raise PathError("the memory root cannot be deleted; delete the files or folders inside it")
        st = self._lstat(mp)[1]  # one walk to it for both questions (issue 47: per-call cost)
        if st is None:
            raise NotFoundError(f"{mp.text} does not exist; nothing was deleted")
        gone = [e.path.text for e in self.walk(mp) if not e.is_dir] if stat.S_ISDIR(st.st_mode) else [mp.text]
        self.safe.delete(mp.parts, mp.text)
        for g in gone:
            self._record(Change("delete", g))
        return gone

    def rename(self, old: str | MemoryPath, new: str | MemoryPath) -> tuple[MemoryPath, MemoryPath]:
        omp = self.parse(old)
        nmp = self.parse(new)
        if omp.is_root or nmp.is_root:
            raise PathError("the memory root itself cannot be renamed")
        st = self._lstat(omp)[1]  # looked at once, for existence and for `_movable`
        if st is None:
            raise NotFoundError(f"{omp.text} does not exist; view its folder to find the right name")
        if self.exists(nmp):
            raise ExistsError(f"{nmp.text} already exists; choose another destination or delete it first")
        if nmp.is_within(omp):
            raise PathError(f"cannot move {omp.text} into itself ({nmp.text})")
        moved = self._movable(omp, nmp, st)
        self._check_parent(nmp)
        self.safe.rename(omp.parts, nmp.parts, omp.text, nmp.text)
        for src, dst in moved:
            self._record(Change("rename", src.text, MemoryPath(dst).text))
        return omp, nmp

    def _movable(
        self, omp: MemoryPath, nmp: MemoryPath, st: os.stat_result
    ) -> list[tuple[MemoryPath, tuple[str, ...]]]:
        """(source, destination parts) of every file a rename moves, after every check that
        can refuse it: an error here means nothing moved. A file must be plain (one link, so
        not shared with anything outside the store; regular, so not a FIFO or a device); a
        folder must land with its deepest folder at most MAX_DEPTH levels down. `st`: the
        source's lstat."""
        if not stat.S_ISDIR(st.st_mode):
            problem = unplain(st)
            if problem is not None:
                raise PathError(f"{omp.text} {problem}; nothing was moved")
            return [(omp, nmp.parts)]
        skipped: list[Unread] = []
        entries = list(self.walk(omp, unread=skipped))
        deep = [u for u in skipped if u.kind == "too-deep"]
        if deep:
            raise PathError(
                f"{omp.text} holds folders deeper than {MAX_DEPTH} levels (e.g. {deep[0].path}); delete "
                "or flatten them before moving it; nothing was moved"
            )
        shift = len(nmp.parts) - len(omp.parts)
        levels = max([len(omp.parts)] + [len(e.path.parts) + (0 if e.is_dir else -1) for e in entries])
        if levels + shift > MAX_DEPTH:
            raise PathError(
                f"moving {omp.text} to {nmp.text} would put folders {levels + shift} levels deep; memory "
                f"holds at most {MAX_DEPTH} levels of folders below /memories; choose a shallower "
                "destination; nothing was moved"
            )
        return [(e.path, nmp.parts + e.path.parts[len(omp.parts) :]) for e in entries if not e.is_dir]

    def _check_parent(self, mp: MemoryPath) -> None:
        """The nearest existing ancestor must be a folder (error text names the culprit)."""
        parent = mp.parent
        while not parent.is_root:
            st = self._lstat(parent)[1]
            if st is not None:
                if not stat.S_ISDIR(st.st_mode):
                    raise PathError(f"{parent.text} is a file, so it cannot hold {mp.text}")
                return
            parent = parent.parent

    def record_external(self, before: Mapping[str, Hashable], after: Mapping[str, Hashable]) -> None:
        """Record changes made outside the tools (e.g. by the shell) by comparing snapshots.

        Values are whatever identifies a file's content: `snapshot()`'s (size, mtime) or a digest.
        A path that vanished and one that appeared with the same value, each the only one with
        that value, count as a rename, so history follows a moved file.
        """
        created = sorted(after.keys() - before.keys())
        deleted = sorted(before.keys() - after.keys())
        by_value: dict[Hashable, list[str]] = {}
        for path in deleted:
            by_value.setdefault(before[path], []).append(path)
        new_counts = Counter(after[p] for p in created)
        renamed: dict[str, str] = {}
        for path in created:
            olds = by_value.get(after[path], [])
            if len(olds) == 1 and new_counts[after[path]] == 1:
                renamed[olds[0]] = path
        for path in created:
            if path not in renamed.values():
                self._record(Change("create", path))
        for path in deleted:
            if path in renamed:
                self._record(Change("rename", path, renamed[path]))
            else:
                self._record(Change("delete", path))
        for path in sorted(before.keys() & after.keys()):
            if before[path] != after[path]:
                self._record(Change("modify", path))
