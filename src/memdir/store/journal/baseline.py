"""The journal's step 0: the store as it was before its first journaled step, in one pack.

A step writes its few objects one by one (`tree.py`); a baseline writes one blob per file, and
that many loose objects take minutes at 100,000 files
(benchmarks/results/2026-12-06-docstring-figures.md, "store/journal/baseline.py").
`git fast-import` takes the same bytes on its stdin and writes them as one pack with the commit on
the branch HEAD names. The bytes are still read by memdir, through the store's link-safe
descriptors, so git opens no file of the store; a link, a hard-linked file, a FIFO, a deep
folder or a name that is not UTF-8 is left out and named in a `Memdir-Skipped` trailer, as in
every step.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

import pygit2

from memdir.errors import MemdirError
from memdir.store.journal.format import baseline_message, why_skipped
from memdir.store.journal.tree import IDENTITY, StatCache, head_tree, look
from memdir.store.safefs import SafeRoot, Unread


def quoted(path: str) -> bytes:
    """A path in fast-import's C-style quotes: every byte that could end or bend the line as
    an octal escape, so any name the store allows reaches git unchanged."""
    out = bytearray(b'"')
    for b in path.encode("utf-8", "surrogateescape"):
        out += b"\\%03o" % b if b < 0x20 or b in (0x22, 0x5C, 0x7F) else bytes([b])
    return bytes(out + b'"')


def baseline(repo: pygit2.Repository, safe: SafeRoot, env: dict[str, str], cwd: Path) -> None:
    """Commit every plain file of the store as step 0, and keep the stat cache of them."""
    taken = time.time_ns()
    skipped: list[Unread] = []
    rels: list[str] = []
    for f in safe.scan((), "/memories"):
        if f.kind == "file" and f.nlink == 1:
            rels.append("/".join(f.parts))
        elif f.kind != "dir":
            skipped.append(why_skipped(f))
    branch = repo.references["HEAD"].target
    if not isinstance(branch, str):
        raise MemdirError("journal: HEAD of a new journal is not a branch")
    entries: dict[str, tuple[int, int, str]] = {}
    files: list[bytes] = []
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            ["git", "fast-import", "--quiet", "--done"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            cwd=cwd,
        )
        assert proc.stdin is not None
        feed = proc.stdin
        try:
            for rel in rels:
                data, st = look(safe, rel)
                if isinstance(data, Unread):
                    skipped.append(data)
                if not isinstance(data, bytes) or st is None:
                    continue
                mark = len(files) + 1
                feed.write(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
                files.append(b"M 100644 :%d %s\n" % (mark, quoted(rel)))
                entries[rel] = (st.st_size, st.st_mtime_ns, str(pygit2.hash(data)))
            msg = baseline_message(skipped).encode("utf-8", "surrogateescape")
            who = f"{IDENTITY[0]} <{IDENTITY[1]}> {int(time.time())} +0000".encode()
            feed.write(b"commit %s\ncommitter %s\ndata %d\n%s\n" % (branch.encode(), who, len(msg), msg))
            feed.writelines(files)
            feed.write(b"\ndone\n")
            feed.close()
        except BrokenPipeError:
            pass  # fast-import stopped: its exit status and message say why
        if proc.wait() != 0:
            err.seek(0)
            raise MemdirError(
                f"journal: git fast-import failed: {err.read().decode('utf-8', 'replace')[-500:]}"
            )
    tree = head_tree(repo)
    if tree is None:
        raise MemdirError("journal: the baseline commit did not land")
    StatCache(str(tree.id), taken, entries).save(Path(repo.path))
