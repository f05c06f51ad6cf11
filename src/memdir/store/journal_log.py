"""The journal's step log: each writing step's record, appended before its tool call returns and
turned into its git commit just after, on the committer's thread (`journal_queue.py`).

Why a log: a step's commit writes four or more git objects (its blobs, the folders above them,
the commit), each a new file, and a new file cost ~0.2 ms here, more than the rest of the step
(benchmarks/journal_overhead.py). One append to one open file costs a few microseconds. The
record holds everything the commit needs (the step's time, its message, the bytes of each path
it changed, read through the store's link-safe descriptors under the writer lock), so the
commit made from it later is the commit the step would have made at once. The log is the
journal's, inside `journal.git`, so it goes wherever the journal goes.

    <git dir>/memdir-steps.log:
      header    [u64 start of the first record not yet committed][u64 end of the record
                being committed][20 bytes: the commit it makes] (little-endian)
      records   [u32 length][u32 CRC-32 of the payload][payload: marshal of
                (time, message, ((path relative to the root, bytes or None), ...))]

A path whose value is None has no plain file now (deleted, a folder, a link: the message names
what was skipped). A writer killed mid-append leaves a short or corrupt last record: that step
was never acknowledged, and the journal's in-flight mark makes the next writer reconcile its
files as a `recovered` step. The header moves past a record just before HEAD moves to its
commit (`journal_tree.commit`'s hook), so a record is never committed twice; a kill between
the two leaves that one step to the same reconciliation. Not fsynced, like the objects: a killed
process loses nothing the kernel has accepted.
"""

from __future__ import annotations

import marshal
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2

from memdir.store.journal_tree import Captured, apply, commit, head_tree, staged_from

RECORDS = "memdir-steps.log"
HEADER = struct.Struct("<QQ20s")
FRAME = struct.Struct("<II")


@dataclass(frozen=True)
class Record:
    """One step, as its commit will be made."""

    time: int
    message: str
    files: tuple[tuple[str, bytes | None], ...]
    start: int = 0  # where this record sits in the log, once appended
    end: int = 0

    def captured(self) -> Captured:
        return [(rel, data, None) for rel, data in self.files]

    def frame(self) -> bytes:
        payload = marshal.dumps((self.time, self.message, self.files))
        return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def land(repo: pygit2.Repository, record: Record, log: StepLog) -> pygit2.Oid:
    """Commit `record` on HEAD (the journal lock held) and move the log past it."""
    tree = head_tree(repo)
    staged = staged_from(repo, tree, record.captured())
    new = apply(repo, tree, staged.updates) if staged.updates or tree is None else tree.id
    return commit(repo, new, record.message, record.time, before_head=lambda oid: log.landing(record, oid))


class StepLog:
    """The log of one journal, open while this process holds the journal lock."""

    def __init__(self, git_dir: Path) -> None:
        self.path = Path(git_dir) / RECORDS
        self._fd: int | None = None
        self._end = 0

    def open(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self._end = os.fstat(self._fd).st_size

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def pending(self, head: str | None) -> list[Record]:
        """The records not yet committed when HEAD is `head`, in order, up to the first cut or
        corrupt one."""
        self.open()
        assert self._fd is not None
        data = os.pread(self._fd, self._end, 0)
        return list(_records(data, head))

    def append(self, record: Record) -> Record:
        """Write `record` at the end of the log; returns it with its end offset set."""
        self.open()
        assert self._fd is not None
        if self._end < HEADER.size:  # a new log, or one a kill cut while it was cleared
            self.clear()
        frame = record.frame()
        written = os.pwrite(self._fd, frame, self._end)
        if written != len(frame):
            raise OSError(f"journal: short write to {self.path} ({written} of {len(frame)} bytes)")
        start, self._end = self._end, self._end + len(frame)
        return Record(record.time, record.message, record.files, start, self._end)

    def landing(self, record: Record, oid: pygit2.Oid) -> None:
        """HEAD is about to move to `oid`, the commit of `record`: once it has, every record
        up to its end is in git; until then, every record from its start is still to come."""
        assert self._fd is not None
        os.pwrite(self._fd, HEADER.pack(record.start, record.end, oid.raw), 0)

    def clear(self) -> None:
        """Drop every record (all committed). Cut first: a kill between the two leaves an empty
        log, never a header pointing into records written after it."""
        self.open()
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, HEADER.pack(HEADER.size, HEADER.size, bytes(20)), 0)
        self._end = HEADER.size


def _records(data: bytes, head: str | None) -> Iterator[Record]:
    if len(data) < HEADER.size:
        return
    start, end, landing = HEADER.unpack_from(data, 0)
    at = max(end if head is not None and landing.hex() == head else start, HEADER.size)
    while at + FRAME.size <= len(data):
        size, crc = FRAME.unpack_from(data, at)
        start, end = at + FRAME.size, at + FRAME.size + size
        payload = data[start:end]
        if end > len(data) or zlib.crc32(payload) != crc:
            return  # cut by a kill mid-append: that step was never acknowledged
        try:
            when, message, files = marshal.loads(payload)
            files = tuple((str(rel), data_) for rel, data_ in files)
        except (ValueError, EOFError, TypeError):
            return
        yield Record(int(when), str(message), files, at, end)
        at = end
