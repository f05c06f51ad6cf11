"""The intent record of a landing: what a many-file step (consolidate, revert, a feedback undo)
is about to make of the store, written whole before its first change.

A landing changes several files in one step (`agents/landing.py`); each file write is atomic,
the set of them is not. A SIGKILL between two of them used to leave the store half landed: a
merge with its old files removed and its new file not yet written had lost sourced facts, and
the next writer journaled that state as a `recovered` step. So before it touches anything, a
landing writes this record (atomically, fsynced, under the writer lock): every path it touches
with the bytes it will hold (or None: gone), the folders it keeps, the changes its step records,
and the step's tool and meta. `Store.step` removes the record once the step's observers (the
journal) have it. A record still present means a landing was stopped part way, or just before
that removal: the next step of any process, under the writer lock and before its own work,
rolls it forward (`Store.step`), and so does any process that opens the store, readers
included (`Store.finish_landing`), so no reader sees the store as the kill left it: every path
is given its target bytes, files first, removals after, and the whole landing is handed to the
observers as the step it was (meta `rolled_forward`), so the journal records it under its own
tool, never as half a `recovered` step, and makes no second commit when the killed step had
already reached it (docs/reliability.md). A store no journal follows (a bare reader's) puts the
files in place and keeps the record, marked `landed`, for the next store the journal follows to
record; that store leaves the files as they are then. Rolling forward is idempotent: a kill
during it leaves the record for the next process.

Order, in a landing and in its roll-forward alike (`placing_order`): every file that is to hold
new bytes is put in place before any file is removed, and a rewrite that drops a source locator
comes after the rewrites that do not, so at no instant is a fact the landing keeps absent from
the files. Only a path a removal must clear first (a file where a folder is to be, or the
reverse) waits until after the removals. A move whose bytes change too (adopt's renamed note, a
revert undoing a rename) is a rename, then a rewrite in place of the moved file: a kill between
the two leaves the file at its new path with its old bytes, which the roll-forward rewrites, and
the file keeps its mode throughout.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import stat
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from memdir.conventions import locators
from memdir.errors import MemdirError, NotFoundError, PathError
from memdir.store.atomic import fsync_dir, write_atomic
from memdir.store.paths import parse_memory_path
from memdir.store.safefs import SafeRoot, private_dirs
from memdir.store.secrets import redact_bytes
from memdir.store.secrets_allow import allowed_in

INTENT = "landing.intent"  # in the state folder, beside the writer lock
ROLLED_FORWARD = "rolled_forward"  # the meta key of a step that finished a stopped landing
VERSION = 2  # 2 added `landed`; a version 1 record (without it) still reads

ChangeRow = tuple[str, str, str | None]  # (kind, path, new path) as `Store.Change` has them


StepMeta = dict[str, str | int | None]  # who made a step (role, chunk, task): journal trailers


@dataclass(frozen=True)
class Intent:
    """A landing's plan: the step it belongs to, each path's target bytes (None: absent), the
    changes that step records, and folders to keep even when the removals empty them."""

    tool: str
    meta: StepMeta
    target: dict[str, bytes | None]
    changes: tuple[ChangeRow, ...] = ()
    keep_dirs: tuple[str, ...] = ()
    landed: bool = False  # the files are in place; only the journal's record of the step is due

    def encode(self) -> bytes:
        meta = json.dumps(self.meta, default=str, sort_keys=True)
        fields = (VERSION, self.tool, meta, self.target, self.changes, self.keep_dirs, self.landed)
        body = marshal.dumps(fields)
        return zlib.crc32(body).to_bytes(4, "little") + body

    def as_landed(self) -> Intent:
        return replace(self, landed=True)


def decode(data: bytes) -> Intent:
    """The record `Intent.encode` wrote; MemdirError for anything else."""
    crc, body = data[:4], data[4:]
    if len(crc) < 4 or zlib.crc32(body) != int.from_bytes(crc, "little"):
        raise MemdirError("the landing intent record is damaged (bad checksum)")
    try:
        fields = marshal.loads(body)
        version = fields[0]
        if version in (1, VERSION):
            tool, meta, target, changes, keep = fields[1:6]
            landed = bool(fields[6]) if version == VERSION else False
    except (ValueError, EOFError, TypeError, IndexError) as exc:
        raise MemdirError(f"the landing intent record is damaged ({exc})") from None
    if version not in (1, VERSION):
        raise MemdirError(f"the landing intent record has version {version}; this memdir reads 1-{VERSION}")
    rows = tuple((str(k), str(p), None if n is None else str(n)) for k, p, n in changes)
    return Intent(str(tool), dict(json.loads(meta)), dict(target), rows, tuple(keep), landed)


def path(state_dir: Path) -> Path:
    return state_dir / INTENT


def write(state_dir: Path, intent: Intent) -> None:
    """Put the record in place, whole and durable, before the landing's first change (the state
    folder made private, as the rest of the store makes it, whatever the umask). Its bytes are
    redacted as the files' will be (`safefs.SafeRoot.write`), so no secret waits here either."""
    private_dirs(state_dir)
    allowed = allowed_in(state_dir.parent)
    target = {p: None if d is None else redact_bytes(d, allowed)[0] for p, d in intent.target.items()}
    intent = replace(intent, target=target)
    write_atomic(path(state_dir), intent.encode(), mode=0o600)


def clear(state_dir: Path) -> None:
    """The landing is complete: remove the record (durably, so a power cut cannot bring back
    a plan that has already been carried out and then overwritten by later steps)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path(state_dir))
        fsync_dir(state_dir)


def pending(state_dir: Path) -> Intent | None:
    """The record a stopped landing left, if any (one failed open when there is none). A
    record that cannot be read (written whole, so only a hand edit or a failing disk does
    that) is set aside under a `.damaged` name with a warning, so it cannot stop every step."""
    try:
        data = path(state_dir).read_bytes()
    except FileNotFoundError:
        return None
    try:
        return decode(data)
    except MemdirError as exc:
        aside = path(state_dir).with_name(INTENT + ".damaged")
        os.replace(path(state_dir), aside)
        warnings.warn(
            f"{exc}; it was moved to {aside} and not rolled forward: compare the store with "
            "'memdir history' and revert or mend by hand",
            stacklevel=3,
        )
        return None


def roll_forward(safe: SafeRoot, intent: Intent) -> int:
    """Give every path of `intent` its target bytes in `placing_order` (a move whose source is
    still there is a rename, which keeps the file's mode, then a rewrite in place when the move
    changes its bytes too, as the landing did it), then remove the files it removes and
    the folders that emptied, then place what a removal had to clear; returns how many paths had
    to change."""
    changed = 0
    needed = ancestors(p for p, data in intent.target.items() if data is not None) | set(intent.keep_dirs)
    moved_from = {b: a for kind, a, b in intent.changes if kind == "rename" and b is not None}

    def present(p: str) -> bytes | None:
        mp = parse_memory_path(p)
        st = safe.lstat(mp.parts, mp.text)
        return safe.read(mp.parts, mp.text) if st is not None and stat.S_ISREG(st.st_mode) else None

    def place(p: str) -> None:
        nonlocal changed
        data = intent.target[p]
        assert data is not None
        mp = parse_memory_path(p)
        st = safe.lstat(mp.parts, mp.text)
        if st is not None and stat.S_ISREG(st.st_mode) and safe.read(mp.parts, mp.text) == data:
            return
        src = moved_from.get(p)
        changed += 1
        if st is None and src is not None and present(src) is not None:
            smp = parse_memory_path(src)
            safe.rename(smp.parts, mp.parts, smp.text, mp.text)
            if safe.read(mp.parts, mp.text) == data:
                return
            st = safe.lstat(mp.parts, mp.text)
        safe.write(mp.parts, mp.text, data, must_exist=st is not None)

    early, late = placing_order(intent.target, present, moved_from)
    for p in early:
        place(p)
    for p, data in sorted(intent.target.items()):
        mp = parse_memory_path(p)
        st = safe.lstat(mp.parts, mp.text) if data is None else None
        if st is not None and stat.S_ISREG(st.st_mode):  # a plan removes plain files only
            safe.delete(mp.parts, mp.text)
            changed += 1
    gone = [p for p, data in intent.target.items() if data is None]
    for d in sorted(ancestors(gone) - needed, key=lambda t: t.count("/"), reverse=True):
        mp = parse_memory_path(d)
        with contextlib.suppress(MemdirError, NotFoundError, PathError, OSError):
            st = safe.lstat(mp.parts, mp.text)
            empty = st is not None and stat.S_ISDIR(st.st_mode)
            if empty and next(iter(safe.scan(mp.parts, mp.text, hidden=True)), None) is None:
                safe.delete(mp.parts, mp.text)
    for p in late:
        place(p)
    return changed


def placing_order(
    target: Mapping[str, bytes | None],
    present: Callable[[str], bytes | None],
    moved_from: Mapping[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """The paths that get bytes, in the order that keeps every fact in some file: (before the
    removals, after them). Before: new files and rewrites that drop no source locator, then the
    rewrites that drop one (its new home is written by then). After: paths a removal must clear
    first, a removed file standing where a folder is to be, or a removed file's folder where a
    file is to be. `present(path)`: the path's bytes now, None when it holds no file;
    `moved_from` ({new: old}): the moves, whose new path's bytes before are the old path's (a
    move then a rewrite drops facts as its rewrite does)."""
    gone = {p for p, data in target.items() if data is None}
    gone_dirs = ancestors(gone)
    early: list[tuple[bool, str]] = []
    late: list[str] = []
    for p, data in sorted(target.items()):
        if data is None:
            continue
        if p in gone_dirs or ancestors([p]) & gone:
            late.append(p)
            continue
        old = present(p)
        if old is None and p in (moved_from or {}):
            old = present((moved_from or {})[p])
        early.append((old is not None and drops_facts(old, data), p))
    return [p for _, p in sorted(early)], late


def drops_facts(old: bytes, new: bytes) -> bool:
    """Does `new` cite fewer source locators than `old` did?"""
    cited = set(locators(new.decode("utf-8", "replace")))
    return not set(locators(old.decode("utf-8", "replace"))) <= cited


def ancestors(paths: Iterable[str]) -> frozenset[str]:
    """The folders above each memory path, the root excluded."""
    out: set[str] = set()
    for p in paths:
        parent = parse_memory_path(p).parent
        while not parent.is_root:
            out.add(parent.text)
            parent = parent.parent
    return frozenset(out)
