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
rolls it forward (`Store.step`): every path is given its target bytes, files first, removals
after, and the whole landing is handed to the observers as the step it was (meta
`rolled_forward`), so the journal records it under its own tool, never as half a `recovered`
step, and makes no second commit when the killed step had already reached it
(docs/reliability.md). Rolling forward is idempotent: a kill during it leaves the record for the
next writer.
"""

from __future__ import annotations

import contextlib
import json
import marshal
import os
import stat
import warnings
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.errors import MemdirError, NotFoundError, PathError
from memdir.store.atomic import fsync_dir, write_atomic
from memdir.store.paths import parse_memory_path
from memdir.store.safefs import SafeRoot

INTENT = "landing.intent"  # in the state folder, beside the writer lock
ROLLED_FORWARD = "rolled_forward"  # the meta key of a step that finished a stopped landing
VERSION = 1

ChangeRow = tuple[str, str, str | None]  # (kind, path, new path) as `Store.Change` has them


@dataclass(frozen=True)
class Intent:
    """A landing's plan: the step it belongs to, each path's target bytes (None: absent), the
    changes that step records, and folders to keep even when the removals empty them."""

    tool: str
    meta: dict[str, Any]
    target: dict[str, bytes | None]
    changes: tuple[ChangeRow, ...] = ()
    keep_dirs: tuple[str, ...] = ()

    def encode(self) -> bytes:
        meta = json.dumps(self.meta, default=str, sort_keys=True)
        body = marshal.dumps((VERSION, self.tool, meta, self.target, self.changes, self.keep_dirs))
        return zlib.crc32(body).to_bytes(4, "little") + body


def decode(data: bytes) -> Intent:
    """The record `Intent.encode` wrote; MemdirError for anything else."""
    crc, body = data[:4], data[4:]
    if len(crc) < 4 or zlib.crc32(body) != int.from_bytes(crc, "little"):
        raise MemdirError("the landing intent record is damaged (bad checksum)")
    try:
        version, tool, meta, target, changes, keep = marshal.loads(body)
    except (ValueError, EOFError, TypeError) as exc:
        raise MemdirError(f"the landing intent record is damaged ({exc})") from None
    if version != VERSION:
        raise MemdirError(f"the landing intent record has version {version}; this memdir reads {VERSION}")
    rows = tuple((str(k), str(p), None if n is None else str(n)) for k, p, n in changes)
    return Intent(str(tool), dict(json.loads(meta)), dict(target), rows, tuple(keep))


def path(state_dir: Path) -> Path:
    return state_dir / INTENT


def write(state_dir: Path, intent: Intent) -> None:
    """Put the record in place, whole and durable, before the landing's first change."""
    state_dir.mkdir(exist_ok=True)
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
    """Give every path of `intent` its target bytes: writes and creates first, removals after,
    then the folders the removals emptied; returns how many paths had to change."""
    changed = 0
    needed = ancestors(p for p, data in intent.target.items() if data is not None) | set(intent.keep_dirs)
    for p, data in sorted(intent.target.items()):
        if data is None:
            continue
        mp = parse_memory_path(p)
        st = safe.lstat(mp.parts, mp.text)
        if st is not None and stat.S_ISREG(st.st_mode) and safe.read(mp.parts, mp.text) == data:
            continue
        safe.write(mp.parts, mp.text, data, must_exist=st is not None)
        changed += 1
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
    return changed


def ancestors(paths: Iterable[str]) -> frozenset[str]:
    """The folders above each memory path, the root excluded."""
    out: set[str] = set()
    for p in paths:
        parent = parse_memory_path(p).parent
        while not parent.is_root:
            out.add(parent.text)
            parent = parent.parent
    return frozenset(out)
