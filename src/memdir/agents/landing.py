"""Bringing a store's files to a target state through the store's own write API, in one step.

Consolidation lands a working copy's changes and revert lands a journal snapshot; both are "make
these files hold these bytes", planned here by content digest (and the moves the caller knows
of: adopt's renames, the renames a revert takes back) and applied with `Store.delete`,
`rename`, `write` and `create` inside the caller's `Store.step`, so the guards hold and the
observers (index, journal) see one step. Each file is written atomically, and the set of them
lands whole: the plan is written as an intent record first, which the next process to open the
store (a reader too) rolls forward if a kill stops the landing part way; new files are in place
before old ones go, so not even the files a kill leaves lack a fact the landing keeps; if a write
fails part way, the files already changed are put back before the error goes on
(docs/consolidate.md, docs/reliability.md).

Only plain files count (regular, one link, visible, within the walk's depth): exactly what the
journal records. A hard-linked or special file is never read, written or removed here.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from memdir.errors import MemdirError
from memdir.store import landing_intent
from memdir.store.landing_intent import ancestors
from memdir.store.paths import STATE_DIR, MemoryPath
from memdir.store.store import Store

Digest = Callable[[bytes], str]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob(data: bytes) -> str:
    """The id git gives these bytes as a blob, so live files compare with a journal snapshot."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def plain_files(store: Store) -> list[MemoryPath]:
    """The plain files a bounded, link-safe walk of `store` finds, in walk order."""
    found = store.safe.scan((), "/memories")
    return [MemoryPath(f.parts) for f in found if f.kind == "file" and f.nlink == 1]


def digests(store: Store, digest: Digest = sha256) -> dict[str, str]:
    """{memory path: digest of its bytes} of every plain file."""
    return {mp.text: digest(store.read_bytes(mp)) for mp in plain_files(store)}


def read(store: Store, paths: Iterable[str]) -> dict[str, bytes]:
    return {p: store.read_bytes(p) for p in paths}


@dataclass(frozen=True)
class Plan:
    """The file operations that turn one state into another: removals, moves, rewrites and new
    files (paths are memory paths). A move whose destination is also in `writes` is a move then
    a rewrite: the file keeps its mode (a rewrite keeps the mode it finds) and the journal
    records a rename."""

    deletes: tuple[str, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    writes: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.deletes or self.renames or self.writes or self.creates)

    @property
    def needed(self) -> list[str]:
        """Paths whose new bytes the caller must supply."""
        return [*self.writes, *self.creates]

    @property
    def old_side(self) -> list[str]:
        """Paths that exist now and change: their present bytes let a failed landing be undone."""
        moved_to = {b for _, b in self.renames}
        return [*self.deletes, *(a for a, _ in self.renames), *(p for p in self.writes if p not in moved_to)]


def plan(
    current: Mapping[str, str], target: Mapping[str, str], moves: Mapping[str, str] | None = None
) -> Plan:
    """Operations from `current` to `target` ({path: digest}). A path that goes and one that comes
    with the same digest, each the only one with it, are a move (as `Store.record_external`
    reads them), so the journal keeps the file's history. `moves` ({old: new}) names the moves
    the caller knows of whose bytes change too (adopt's renamed note, the undoing of a recorded
    rename): each whose ends are not paired already is a move then a rewrite of its new path,
    so the file keeps its mode instead of coming back as a new private file."""
    gone = sorted(current.keys() - target.keys())
    new = sorted(target.keys() - current.keys())
    by_digest: dict[str, list[str]] = defaultdict(list)
    for p in gone:
        by_digest[current[p]].append(p)
    new_count = Counter(target[p] for p in new)
    renames = [
        (by_digest[target[c]][0], c)
        for c in new
        if len(by_digest.get(target[c], [])) == 1 and new_count[target[c]] == 1
    ]
    moved_from = {a for a, _ in renames}
    moved_to = {b for _, b in renames}
    rewritten: list[str] = []
    for a, b in sorted((moves or {}).items()):
        if a in gone and b in new and a not in moved_from and b not in moved_to:
            renames.append((a, b))
            moved_from.add(a)
            moved_to.add(b)
            rewritten += [b] if current[a] != target[b] else []
    changed = [p for p in current.keys() & target.keys() if current[p] != target[p]]
    return Plan(
        deletes=tuple(p for p in gone if p not in moved_from),
        renames=tuple(renames),
        writes=tuple(sorted([*changed, *rewritten])),
        creates=tuple(p for p in new if p not in moved_to),
    )


def apply(
    store: Store,
    ops: Plan,
    new: Mapping[str, bytes],
    old: Mapping[str, bytes],
    *,
    keep_dirs: frozenset[str] = frozenset(),
) -> None:
    """Carry out `ops` inside the caller's step: `new` holds the bytes of `ops.needed`, `old` the
    present bytes of `ops.old_side` (to undo a landing that fails part way). Folders the
    removals empty go too, unless a target path or `keep_dirs` needs them.

    The plan is first written whole as the store's intent record (`store/landing_intent.py`), so
    a SIGKILL at any later point leaves a store the next process to open it rolls forward, not
    one with half the landing's files. The files go in `landing_intent.placing_order`: moves
    (one atomic rename each, a moved file's rewrite right after it), new files and rewrites
    first, removals last, so a kill anywhere
    leaves every fact the landing keeps in some file even before that. An error part way rolls
    back instead: the record is rewritten to the old state first, so a kill during the undo
    still ends whole."""
    if ops.empty:
        return
    needed = ancestors([*ops.creates, *(b for _, b in ops.renames)]) | keep_dirs
    state = store.root / STATE_DIR
    target = _target(ops, new, old)
    landing_intent.write(state, _intent(store, target, _changes(ops), keep_dirs))
    moved_from = {b: a for a, b in ops.renames}
    early, late = landing_intent.placing_order(target, old.get, moved_from)
    rewrites = set(ops.writes)

    def place(p: str) -> None:
        if p in moved_from:
            store.rename(moved_from[p], p)
            if p not in rewrites:
                return
        put(store, p, new[p], exists=p in rewrites)

    try:
        for p in early:
            place(p)
        for p in ops.deletes:
            store.delete(p)
        _prune(store, [*ops.deletes, *moved_from.values()], needed)
        for p in late:
            place(p)
    except BaseException:
        back = {p: None for p in [*ops.creates, *(b for _, b in ops.renames)]} | dict(old)
        with contextlib.suppress(MemdirError, OSError):
            landing_intent.write(state, _intent(store, back, (), frozenset()))
        _undo(store, ops, old)
        with contextlib.suppress(OSError):
            landing_intent.clear(state)
        raise
    step = store.current_step()
    assert step is not None  # `_intent` checked it
    step.landed_intent = True  # `Store.step` removes the record once the observers have the step


def _target(ops: Plan, new: Mapping[str, bytes], old: Mapping[str, bytes]) -> dict[str, bytes | None]:
    """Every path `ops` touches, with the bytes it holds once they are carried out (None: gone)."""
    out: dict[str, bytes | None] = {p: None for p in ops.deletes}
    for a, b in ops.renames:
        out[a], out[b] = None, old[a]
    out.update({p: new[p] for p in ops.needed})
    return out


def _changes(ops: Plan) -> tuple[tuple[str, str, str | None], ...]:
    """The changes the landing's step records, as `Store.delete`, `rename`, `write` and
    `create` record them."""
    return (
        *(("delete", p, None) for p in ops.deletes),
        *(("rename", a, b) for a, b in ops.renames),
        *(("modify", p, None) for p in ops.writes),
        *(("create", p, None) for p in ops.creates),
    )


def _intent(
    store: Store,
    target: dict[str, bytes | None],
    changes: tuple[tuple[str, str, str | None], ...],
    keep: frozenset[str],
) -> landing_intent.Intent:
    step = store.current_step()
    if step is None:
        raise RuntimeError("a landing must run inside Store.step()")
    return landing_intent.Intent(step.tool, dict(step.meta), target, changes, tuple(sorted(keep)))


def put(store: Store, path: str, data: bytes, *, exists: bool) -> None:
    """Write `data` at `path` byte for byte: as text through `Store.write`/`create` (the guards'
    hooks), or, for bytes that are not UTF-8, through the store's link-safe writer with the
    change recorded in the step."""
    mp = store.parse(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        before = {path: sha256(store.read_bytes(mp))} if exists else {}
        store.safe.write(mp.parts, mp.text, data, must_exist=exists)
        store.record_external(before, {path: sha256(data)})
        return
    if exists:
        store.write(mp, text)
    else:
        store.create(mp, text)


def _prune(store: Store, removed: Iterable[str], needed: frozenset[str]) -> None:
    """Remove the folders `removed` left with nothing in them at all (hidden entries count)."""
    candidates = {a for a in ancestors(removed) if a not in needed}
    for d in sorted(candidates, key=lambda t: t.count("/"), reverse=True):
        mp = store.parse(d)
        if store.is_dir(mp) and next(iter(store.safe.scan(mp.parts, mp.text, hidden=True)), None) is None:
            store.delete(mp)


def _undo(store: Store, ops: Plan, old: Mapping[str, bytes]) -> None:
    """Best effort: put every path `ops` touches back to its bytes in `old` (or absent); a moved
    file is moved back first, so it keeps its mode."""
    for a, b in ops.renames:
        with contextlib.suppress(MemdirError, OSError):
            if not store.exists(a) and store.exists(b) and not store.is_dir(b):
                store.rename(b, a)
    for p in [*ops.creates, *(b for _, b in ops.renames)]:
        with contextlib.suppress(MemdirError, OSError):
            if p not in old and store.exists(p) and not store.is_dir(p):
                store.delete(p)
    for p, data in old.items():
        with contextlib.suppress(MemdirError, OSError):
            present = store.exists(p)
            if not present or store.read_bytes(p) != data:
                put(store, p, data, exists=present)
    with contextlib.suppress(MemdirError, OSError):
        _prune(store, [*ops.creates, *(b for _, b in ops.renames)], frozenset())
