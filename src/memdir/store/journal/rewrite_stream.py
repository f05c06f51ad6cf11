"""The new line of a forget, written by one `git fast-import` as one pack.

Made object by object through libgit2, a 1,000-step rewrite wrote ~2,200 loose objects (a tree
and a commit per step) at ~3 ms each here, before the prune had to pack them again
(benchmarks/results/2026-12-06-forget.md); the baseline met the same cost and took the same
way out (`baseline.py`). Each commit is its first parent's new tree plus the paths the old
commit changed, each passed through the request's rule: the rule works on each file alone, so
this is the old tree rewritten whole, and only the changed paths are read. The commits before
the first one the words reach are kept as they are; the first rewritten one starts from the
last of them. The line goes onto a ref of its own (`REF`), which the caller reads and drops.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pygit2

from memdir.conventions import locators
from memdir.errors import MemdirError
from memdir.store.journal.baseline import quoted
from memdir.store.journal.repository import _changed_blobs
from memdir.store.redaction import Forget

REF = "refs/memdir/redacting"
TRAILER = "Memdir-Redacted"


class Stream:
    """The fast-import input for one request: rewritten blobs by mark, once each."""

    def __init__(self, repo: pygit2.Repository, request: Forget) -> None:
        self.repo = repo
        self.request = request
        self.blobs: dict[str, tuple[bytes, int]] = {}  # old sha -> (dataref, lines touched)
        self.out: list[bytes] = []
        self.marks = 0
        self.cited: set[str] = set()

    def _mark(self) -> int:
        self.marks += 1
        return self.marks

    def blob(self, sha: str) -> tuple[bytes, int]:
        got = self.blobs.get(sha)
        if got is None:
            text = self.repo.odb.read(sha)[1].decode("utf-8", "surrogateescape")
            new, touched = self.request.apply(text)
            if touched:
                kept = set(new.split("\n"))
                self.cited.update(locators("\n".join(x for x in text.split("\n") if x not in kept)))
                data = new.encode("utf-8", "surrogateescape")
                mark = self._mark()
                self.out.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
                got = (b":%d" % mark, touched)
            else:
                got = (sha.encode(), 0)
            self.blobs[sha] = got
        return got

    def commit(
        self, c: pygit2.Commit, changes: list[tuple[str, str, str]], parent: bytes | None, marker: str | None
    ) -> bytes:
        """Add `c` as rewritten (`changes`: what it changed, `_changed_blobs`); its mark."""
        message = self.request.scrub(c.message)
        if marker is not None:
            message = message.rstrip("\n") + f"\n{TRAILER}: {marker}\n"
        msg = message.encode("utf-8", "surrogateescape")
        mark = self._mark()
        lines = [b"commit %s\nmark :%d\n" % (REF.encode(), mark)]
        lines.append(b"author %s\ncommitter %s\n" % (_who(c.author), _who(c.committer)))
        lines.append(b"data %d\n%s\n" % (len(msg), msg))
        if parent is not None:
            lines.append(b"from %s\n" % parent)
        for status, sha, path in changes:
            if status == "D" or self.request.file_goes(path):
                lines.append(b"D %s\n" % quoted(path))
            else:
                ref, _ = self.blob(sha)
                lines.append(b"M 100644 %s %s\n" % (ref, quoted(path)))
        self.out.append(b"".join(lines) + b"\n")
        return b":%d" % mark


def _who(sig: pygit2.Signature) -> bytes:
    sign = "-" if sig.offset < 0 else "+"
    off = abs(sig.offset)
    return f"{sig.name} <{sig.email}> {sig.time} {sign}{off // 60:02d}{off % 60:02d}".encode()


def run(repo: pygit2.Repository, stream: Stream, env: dict[str, str], cwd: Path) -> pygit2.Oid:
    """Feed the stream to `git fast-import`; the new tip (REF is left for the caller to drop)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run(
            ["git", "fast-import", "--quiet", "--done", "--force"],
            input=b"".join([*stream.out, b"done\n"]),
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            cwd=cwd,
            check=False,
        )
        if proc.returncode != 0:
            err.seek(0)
            raise MemdirError(
                f"journal: git fast-import failed: {err.read().decode('utf-8', 'replace')[-500:]}"
            )
    tip = repo.references[REF].target
    assert isinstance(tip, pygit2.Oid)
    return tip


def changes_of(
    repo: pygit2.Repository, c: pygit2.Commit, last: pygit2.Commit | None
) -> list[tuple[str, str, str]]:
    """What `c` changed against `last` (its first parent in the line), renames as delete+add."""
    return _changed_blobs(repo, c, last)
