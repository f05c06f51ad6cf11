"""The journal: one git commit per writing tool call, so a store's whole history can be replayed.

It lives in `<root>/.memdir/journal.git` with the memory root as its work tree; hidden names
(`.memdir` itself included) are excluded, so the journal holds exactly what agents can see, and
agents never see the journal. Like the index it is derived: the files are the truth. It stays
a plain git repository: `git --git-dir <root>/.memdir/journal.git log` reads it.

Steps are committed in process with libgit2 (`tree.py`), where git processes took
~10 ms a step here (75 ms on the loaded machine), and off the call's path: a step appends its
record to the step log (`log.py`, from the store observer in `observer.py`)
before its call returns, and the committer process makes the commit from it just after
(`commitd.py`, `land.py`: in step order, under the journal lock); a reader
first commits whatever is still logged. The baseline goes
through one `git fast-import` (`baseline.py`). The readers below drive the git CLI
with a clean environment, so a user's git config, hooks or `GIT_*` variables cannot change
what is read. Each commit message names the tool and carries trailers:

    Memdir-Tool: str_replace
    Memdir-Role: manage          (step meta `role`, when given)
    Memdir-Chunk: 12             (step meta `chunk`, when given)
    Memdir-Task: 7               (step meta `task`, when given)
    Memdir-Operation: 3f2a9c41d0b7   (the operation the step belongs to: `operations.py`)
    Memdir-Operation-Kind: ingest
    Memdir-Operation-Label: ingest chat.jsonl
    Memdir-Meta-<key>: value     (any other scalar meta the caller passed)
    Memdir-Change: modify<TAB>/memories/people/alice.md
    Memdir-Change: rename<TAB>/memories/a.md<TAB>/memories/b.md
    Memdir-Skipped: /memories/x.md<TAB>this file has 2 hard links; ...   (not journaled, and why)
    Memdir-Recovered: <why>      (tool `recovered`: changes no tool step recorded)

The first step on a store without a journal first commits the store as it is (tool
`baseline`, step 0), so every later step is a true difference. A step commits only the paths
it changed, and its record is logged before the tool call returns: every acknowledged write is
in the journal, committed or logged, and a logged step left by a killed writer is committed,
with its own tool and meta, by whoever next takes the journal lock (`land.py`).

What no step recorded is found by the whole-tree check (`reconcile.py`):
  * a writer killed after writing files but before logging the step leaves the one-byte
    in-flight mark set; the next step, in any process, first commits the difference as a
    `recovered` step (`Memdir-Recovered: a writer stopped ...`), before it writes anything;
  * an edit made by hand outside the tools (not through the shell tool, which reports its
    changes) is found by the check of the first step of each process and of every FULL_EVERY-th
    step. On a small store (its stat cache under SYNC_CACHE_BYTES) the first step's check runs
    inside that step and folds the edits into its commit; otherwise, and for the periodic
    checks, it runs on a thread of its own and lands as a `recovered` step, so no write waits
    for a walk of a large store.

The journal never reads through a link: a step reads each path through the store's link-safe
descriptors; a file hard-linked from outside (another tenant's, say), a symlink, a FIFO, a
folder below MAX_DEPTH levels or a name that is not UTF-8 is left out of the commit and named in
a `Memdir-Skipped` trailer.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pygit2

from memdir.errors import MemdirError
from memdir.store.journal.baseline import baseline
from memdir.store.journal.format import (
    BASELINE,
    JOURNAL_DIR,
    MEMORY_PREFIX,
    RECOVERED,
    JournalStep,
    parse_message,
)
from memdir.store.journal.land import READ_WAIT, journal_lock, land_pending
from memdir.store.journal.repair import repair
from memdir.store.paths import STATE_DIR
from memdir.store.safefs import SafeRoot, private_dirs

__all__ = ["BASELINE", "MEMORY_PREFIX", "RECOVERED", "Journal", "JournalStep"]

_IDENTITY = {"name": "memdir", "email": "memdir@localhost"}


def _clean_env(git_dir: Path, work_tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME=_IDENTITY["name"],
        GIT_AUTHOR_EMAIL=_IDENTITY["email"],
        GIT_COMMITTER_NAME=_IDENTITY["name"],
        GIT_COMMITTER_EMAIL=_IDENTITY["email"],
        GIT_TERMINAL_PROMPT="0",
    )
    return env


class Journal:
    """The git history of one memory root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.git_dir = self.root / STATE_DIR / JOURNAL_DIR

    @property
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def git(self, *args: str, stdin: str | None = None) -> str:
        data = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
        return self._git(args, data).decode("utf-8", "replace")

    def _git(self, args: tuple[str, ...], stdin: bytes | None) -> bytes:
        self._landed()
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=false", "-c", "safe.directory=*", *args],
            input=stdin,
            capture_output=True,
            env=_clean_env(self.git_dir, self.root),
            cwd=self.root,
            check=False,
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise MemdirError(f"journal: git {args[0]} failed: {err}")
        return proc.stdout

    def _landed(self) -> None:
        """Before a read: commit the steps acknowledged and still in the step log (the
        committer may not have got to them), so every reader sees every acknowledged step. A
        reader that cannot (no write access, the lock held too long) reads what has landed."""
        with contextlib.suppress(MemdirError, OSError, pygit2.GitError):
            land_pending(self.git_dir, READ_WAIT)

    def ensure(self) -> None:
        """Create the journal and commit the store as it is now as step 0 (the baseline)."""
        if self.exists:
            return
        private_dirs(self.git_dir.parent)  # `.memdir/`, if the journal is the first to need it
        self.git_dir.mkdir(exist_ok=True)
        self.git("init", "-q")
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_text(".*\n", encoding="utf-8")
        baseline(self.repo(), SafeRoot(self.root), _clean_env(self.git_dir, self.root), self.root)

    def repo(self) -> pygit2.Repository:
        # Every object the journal links is one it has just written or read: libgit2's check
        # that they exist costs a lookup per entry and can never fail here.
        pygit2.option(pygit2.enums.Option.ENABLE_STRICT_OBJECT_CREATION, False)
        try:
            return pygit2.Repository(str(self.git_dir))
        except pygit2.GitError as exc:
            raise MemdirError(f"journal: cannot open {self.git_dir}: {exc}") from None

    def head(self) -> str | None:
        """The commit of the newest step: the id of the store's snapshot as it is now."""
        if not self.exists:
            return None
        try:
            return self.git("rev-parse", "--verify", "-q", "HEAD").strip() or None
        except MemdirError:
            return None

    def steps(self, *, raw: bool = False) -> list[JournalStep]:
        """Every step, oldest first; with `raw`, each step's file blobs changed (for replay)."""
        if not self.exists:
            return []
        args = ["log", "--reverse", "--first-parent", "--format=%x1e%H%x00%ct%x00%B%x00", "-z"]
        if raw:
            args += ["--raw", "--no-renames", "--no-abbrev", "-r", "--root"]
        try:
            out = self.git(*args)
        except MemdirError as exc:
            # A damaged head is put back on the newest whole commit; a ref read while a lander
            # rewrote it (outside the journal lock) reads whole once the lock is had.
            self.repair()
            if self._unborn():
                return []  # a journal with no commit yet
            try:
                out = self.git(*args)
            except MemdirError:
                raise MemdirError(f"journal: the history of {self.root} cannot be read ({exc})") from None
        steps: list[JournalStep] = []
        for record in out.split("\x1e")[1:]:
            items = record.split("\x00")
            step = parse_message(len(steps), items[0], int(items[1]), items[2])
            rest = [it.lstrip("\n") for it in items[3:]]
            rest = [it for it in rest if it]
            for meta, path in zip(rest[0::2], rest[1::2], strict=False):
                fields = meta.split()
                step.raw.append((fields[4], fields[3], path))
            steps.append(step)
        return steps

    def repair(self) -> str | None:
        """Put a head that cannot be read back on the newest whole commit (`repair.py`);
        what was wrong and done, or None when nothing was (or it could not be done here)."""
        try:
            with journal_lock(self.git_dir, READ_WAIT):
                repo = self.repo()
                try:
                    return repair(repo, self.git_dir)
                finally:
                    repo.free()
        except (MemdirError, OSError, pygit2.GitError):
            return None

    def _unborn(self) -> bool:
        try:
            repo = self.repo()
        except MemdirError:
            return False
        try:
            return bool(repo.head_is_unborn)
        except pygit2.GitError:
            return False
        finally:
            repo.free()

    def files_at(self, commit: str) -> dict[str, str]:
        """{path relative to the root: blob sha} of every file in the snapshot `commit` names."""
        try:
            out = self._git(("ls-tree", "-r", "-z", "--full-tree", commit), None)
        except MemdirError as exc:
            raise MemdirError(
                f"journal: the snapshot of commit {commit[:12]} cannot be read; its objects are missing "
                f"or damaged ({exc})"
            ) from None
        files: dict[str, str] = {}
        for entry in out.split(b"\x00"):
            if not entry:
                continue
            head, _, path = entry.partition(b"\t")
            mode, kind, sha = head.split()
            if kind == b"blob" and mode != b"120000":  # links are never followed, so never replayed
                files[path.decode("utf-8", "surrogateescape")] = sha.decode()
        return files

    def blobs(self, shas: list[str]) -> Iterator[tuple[str, bytes]]:
        """(sha, content) for each blob, through one `git cat-file --batch` process."""
        if not shas:
            return
        self._landed()
        proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_clean_env(self.git_dir, self.root),
            cwd=self.root,
        )
        assert proc.stdin is not None and proc.stdout is not None
        feed = proc.stdin

        def write() -> None:  # a thread, so neither pipe can fill up and block the other side
            with contextlib.suppress(OSError):  # the reader stopped early (a missing object)
                feed.write("".join(s + "\n" for s in shas).encode())
                feed.close()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        for sha in shas:
            header = proc.stdout.readline().split()
            if len(header) != 3:  # "<sha> missing": the object is gone (power loss, a hand edit)
                proc.kill()
                writer.join()
                proc.wait()
                raise MemdirError(
                    f"journal: the file content {sha} is missing from the journal's objects, so this "
                    "snapshot cannot be read whole"
                )
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            yield sha, data
        writer.join()
        proc.wait()

    def blob_chunks(self, sha: str, chunk: int = 1 << 20) -> Iterator[bytes]:
        """The content of one blob, `chunk` bytes at a time, through `git cat-file blob`: a
        page of a big file as it was (`store/window.py`) costs a chunk, not the file."""
        self._landed()
        proc = subprocess.Popen(
            ["git", "cat-file", "blob", sha],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_clean_env(self.git_dir, self.root),
            cwd=self.root,
        )
        assert proc.stdout is not None
        out = proc.stdout
        try:
            yield from iter(lambda: os.read(out.fileno(), chunk), b"")
        finally:  # also when the reader stops early: git then ends on its broken pipe
            out.close()
            code = proc.wait()
        if code != 0:
            raise MemdirError(
                f"journal: the file content {sha} is missing from the journal's objects, so this "
                "snapshot cannot be read whole"
            )
