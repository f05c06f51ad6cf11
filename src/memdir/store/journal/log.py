"""The journal's step log: each writing step's record, appended before its tool call returns and
made into its git commit just after, by the committer process (`commitd.py`).

Why a log: a step's commit writes four or more git objects (its blobs, the folders above them,
the commit), each a new file, and a new file costs more than the rest of the step; one append to
one open file costs microseconds (benchmarks/journal_overhead.py; figures:
benchmarks/results/2026-12-06-docstring-figures.md, "store/journal/log.py"). The record holds
everything the commit needs (the step's time, its message, the bytes of each path it changed,
read through the store's link-safe descriptors under the writer lock), so the commit made from
it later is the commit the step would have made at once. The log is the journal's, inside
`journal.git`, so it goes wherever the journal goes.

    <git dir>/memdir-steps.log:
      header    [u64 start of the first record not yet committed][u64 end of the record
                being committed][20 bytes: the commit it makes] (little-endian)
      records   [u32 length][u32 CRC-32 of the payload][payload: marshal of
                (time, message, ((path relative to the root, bytes or None), ...))]

A path whose value is None has no plain file now (deleted, a folder, a link: the message names
what was skipped). Writers append under the writer lock, at the file's end, so the records of
several processes queue in step order; committers land them under the journal lock
(`catch_up.py`). A writer killed mid-append leaves a short or corrupt last record: that step
was never acknowledged, and the in-flight mark makes the next writer cut it and reconcile its
files as a `recovered` step. Just before HEAD moves to a record's commit (`tree.commit`'s
hook) the header names that commit in one write, so whoever reads the log next knows from HEAD
whether the move happened: a record is committed exactly once, whatever moment a kill came.
Not fsynced: a killed process loses nothing the kernel has accepted, and a record a power cut
takes is a step the next process's whole-tree check commits from the files.
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

from memdir.store.journal.format import rolled_forward
from memdir.store.journal.tree import Captured, apply, commit, head_tree, staged_from

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


def commit_record(repo: pygit2.Repository, record: Record, log: StepLog) -> pygit2.Oid:
    """Commit `record` on HEAD (the journal lock held) and move the log past it."""
    tree = head_tree(repo)
    staged = staged_from(repo, tree, record.captured())
    if tree is not None and not staged.updates and rolled_forward(record.message):
        head = repo.head.target
        assert isinstance(head, pygit2.Oid)
        return head  # the landing it finished was committed by the step a kill stopped
    new = apply(repo, tree, staged.updates) if staged.updates or tree is None else tree.id
    return commit(repo, new, record.message, record.time, before_head=lambda oid: log.landing(record, oid))


class StepLog:
    """The log of one journal. Appends come from writers (the writer lock held, so one at a
    time across processes); the header is moved by whoever commits (the journal lock held)."""

    def __init__(self, git_dir: Path, *, create: bool = True) -> None:
        self.path = Path(git_dir) / RECORDS
        self.create = create
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            flags = os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if self.create else 0)
            self._fd = os.open(self.path, flags, 0o600)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def size(self) -> int:
        return os.fstat(self._open()).st_size

    def maybe_pending(self) -> bool:
        """Could a record be waiting? False means surely not (one small read, no git)."""
        fd = self._open()
        head = os.pread(fd, HEADER.size, 0)
        if len(head) < HEADER.size:
            return False
        start: int = HEADER.unpack(head)[0]
        return os.fstat(fd).st_size > max(start, HEADER.size)

    def pending(self, head: str | None) -> list[Record]:
        """The records not yet committed when HEAD is `head`, in order, up to the first cut or
        corrupt one (or one still being written)."""
        return self.scan(head)[0]

    def scan(self, head: str | None) -> tuple[list[Record], int]:
        """`pending`, and the offset just past the last whole record."""
        fd = self._open()
        data = os.pread(fd, os.fstat(fd).st_size, 0)
        records = list(_records(data, head))
        return records, records[-1].end if records else _first(data, head)

    def append(self, record: Record) -> Record:
        """Write `record` at the end of the log (the writer lock held); returns it placed."""
        fd = self._open()
        at = os.fstat(fd).st_size
        if at < HEADER.size:  # a new log, or one a kill cut while it was cleared
            self.clear()
            at = HEADER.size
        frame = record.frame()
        written = os.pwrite(fd, frame, at)
        if written != len(frame):
            raise OSError(f"journal: short write to {self.path} ({written} of {len(frame)} bytes)")
        return Record(record.time, record.message, record.files, at, at + len(frame))

    def landing(self, record: Record, oid: pygit2.Oid) -> None:
        """HEAD is about to move to `oid`, the commit of `record`: once it has, every record
        up to its end is in git; until then, every record from its start is still to come."""
        os.pwrite(self._open(), HEADER.pack(record.start, record.end, oid.raw), 0)

    def caught_up(self, end: int, oid: pygit2.Oid) -> None:
        """HEAD is `oid` and every record before `end` is in it: the quick check's answer."""
        os.pwrite(self._open(), HEADER.pack(end, end, oid.raw), 0)

    def clear(self) -> None:
        """Drop every record (all committed; both locks held). Cut first: a kill between the
        two leaves an empty log, never a header pointing into records written after it."""
        fd = self._open()
        os.ftruncate(fd, 0)
        os.pwrite(fd, HEADER.pack(HEADER.size, HEADER.size, bytes(20)), 0)


def _first(data: bytes, head: str | None) -> int:
    """Where the first record not yet committed starts, HEAD being `head`."""
    if len(data) < HEADER.size:
        return HEADER.size
    start, end, landing = HEADER.unpack_from(data, 0)
    first: int = end if head is not None and landing.hex() == head else start
    return max(first, HEADER.size)


def _records(data: bytes, head: str | None) -> Iterator[Record]:
    if len(data) < HEADER.size:
        return
    at = _first(data, head)
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
