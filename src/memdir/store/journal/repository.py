"""The journal: one git commit per writing tool call, so a store's whole history can be replayed.

It lives in `<root>/.memdir/journal.git` with the memory root as its work tree; hidden names
(`.memdir` itself included) are excluded, so the journal holds exactly what agents can see, and
agents never see the journal. Like the index it is derived: the files are the truth. It stays
a plain git repository: `git --git-dir <root>/.memdir/journal.git log` reads it.

Steps are committed in process with libgit2 (`tree.py`), not by git processes (a process start
per step; figures: benchmarks/results/2026-12-06-docstring-figures.md,
"store/journal/repository.py"), and off the call's path: a step appends its record to the step
log (`log.py`, from the store observer in `observer.py`) before its call returns, and the
committer process makes the commit from it just after (`commitd.py`, `catch_up.py`: in step
order, under the journal lock); a reader first commits whatever is still logged. The baseline
goes through one `git fast-import` (`baseline.py`). The readers below use libgit2 too, which
runs no hook and reads no `GIT_*` variable; the few git processes left (init, fast-import, gc, a
big blob streamed) run with a clean environment, so a user's git config, hooks or `GIT_*`
variables cannot change what is written or read. Each commit message names the tool and carries
trailers:

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
with its own tool and meta, by whoever next takes the journal lock (`catch_up.py`).

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

import codecs
import contextlib
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pygit2

from memdir.errors import MemdirError
from memdir.store.atomic import write_atomic
from memdir.store.journal.baseline import baseline
from memdir.store.journal.catch_up import READ_WAIT, commit_pending, journal_lock
from memdir.store.journal.format import (
    BASELINE,
    JOURNAL_DIR,
    MEMORY_PREFIX,
    RECOVERED,
    JournalStep,
    parse_message,
)
from memdir.store.journal.repair import repair
from memdir.store.paths import STATE_DIR
from memdir.store.private import owner_only
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
        self._head_file = str(self.git_dir / "HEAD")  # looked at before every step: joined once

    @property
    def exists(self) -> bool:
        return os.path.isfile(self._head_file)

    def _git(self, *args: str) -> None:
        """Run git itself, for what libgit2 does not do: `init` (its own would write a `.git`
        link into the memory root) and `gc --auto` (libgit2 has no gc)."""
        self._landed()
        self.run_git(*args)

    def run_git(self, *args: str, doing: str = "") -> None:
        """git `args` on the journal, as it is (no pending step landed first: a forget runs it
        under the journal lock, on the history it has just rewritten); `doing` ends the error."""
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=false", "-c", "safe.directory=*", *args],
            capture_output=True,
            env=_clean_env(self.git_dir, self.root),
            cwd=self.root,
            check=False,
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise MemdirError(f"journal: git {args[0]} failed{doing}: {err}")

    def _landed(self) -> None:
        """Before a read: commit the steps acknowledged and still in the step log (the
        committer may not have got to them), so every reader sees every acknowledged step. A
        reader that cannot (no write access, the lock held too long) reads what has landed."""
        with contextlib.suppress(MemdirError, OSError, pygit2.GitError):
            commit_pending(self.git_dir, READ_WAIT)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[pygit2.Repository]:
        """The repository for one read, every logged step landed first; closed after."""
        self._landed()
        repo = self.repo()
        try:
            yield repo
        finally:
            repo.free()

    def ensure(self) -> None:
        """Create the journal and commit the store as it is now as step 0 (the baseline)."""
        if self.exists:
            return
        with owner_only():  # git and libgit2 take the umask: what they make is private (private.py)
            private_dirs(self.git_dir)  # and `.memdir/`, if the journal is the first to need it
            self._git("init", "-q")
            private_dirs(self.git_dir / "info")
            write_atomic(self.git_dir / "info" / "exclude", b".*\n")
            baseline(self.repo(), SafeRoot(self.root), _clean_env(self.git_dir, self.root), self.root)

    def collect(self) -> None:
        """Pack loose objects once there are many (`git gc --auto`), refs left loose."""
        with owner_only():
            self._git("-c", "gc.packRefs=false", "gc", "--auto", "--quiet")

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
            with self._reading() as repo:
                return str(repo.head.target)
        except (MemdirError, pygit2.GitError, KeyError, ValueError):
            return None

    def steps(self, *, raw: bool = False) -> list[JournalStep]:
        """Every step, oldest first; with `raw`, each step's file blobs changed (for replay)."""
        if not self.exists:
            return []
        try:
            return self._steps(raw)
        except MemdirError as exc:
            # A damaged head is put back on the newest whole commit; a ref read while a lander
            # rewrote it (outside the journal lock) reads whole once the lock is had.
            self.repair()
            if self._unborn():
                return []  # a journal with no commit yet
            try:
                return self._steps(raw)
            except MemdirError:
                raise MemdirError(f"journal: the history of {self.root} cannot be read ({exc})") from None

    def _steps(self, raw: bool) -> list[JournalStep]:
        """The first-parent walk from HEAD, oldest first (the journal's history is a line)."""
        steps: list[JournalStep] = []
        with self._reading() as repo:
            try:
                walk = repo.walk(
                    repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
                )
                walk.simplify_first_parent()
                last: pygit2.Commit | None = None
                for commit in walk:
                    body = commit.raw_message.decode("utf-8", "replace")
                    step = parse_message(len(steps), str(commit.id), commit.commit_time, body)
                    if raw:
                        step.raw = _changed_blobs(repo, commit, last)
                    steps.append(step)
                    last = commit
            except (pygit2.GitError, KeyError, ValueError) as exc:
                raise MemdirError(f"journal: the log cannot be read: {exc}") from None
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
        with self._reading() as repo:
            try:
                return _files(repo, repo.revparse_single(commit).peel(pygit2.Tree))
            except (pygit2.GitError, KeyError, ValueError) as exc:
                raise MemdirError(
                    f"journal: the snapshot of commit {commit[:12]} cannot be read; its objects are "
                    f"missing or damaged ({exc})"
                ) from None

    def blobs(self, shas: list[str]) -> Iterator[tuple[str, bytes]]:
        """(sha, content) for each blob, each read whole: for the many small files of a snapshot."""
        if not shas:
            return
        with self._reading() as repo:
            for sha in shas:
                yield sha, _read(repo, sha)

    def blob_chunks(self, sha: str, chunk: int = 1 << 20) -> Iterator[bytes]:
        """The content of one blob, `chunk` bytes at a time: a page of a big file as it was
        (`store/window.py`) costs a chunk, not the file. libgit2 inflates an object whole (its
        blob stream reads from the whole blob, so its memory grows with the file: figures in
        benchmarks/results/2026-12-06-docstring-figures.md, "store/journal/repository.py"), so a
        blob over one chunk is streamed by `git cat-file blob`, which inflates as it writes; a
        smaller one is read in process."""
        with self._reading() as repo:
            try:
                size = repo.odb.read_header(sha)[1]
            except (pygit2.GitError, KeyError, ValueError):
                raise MemdirError(_missing(sha)) from None
            if size <= chunk:
                data = _read(repo, sha)
                if data:
                    yield data
                return
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
            raise MemdirError(_missing(sha))

    def patch(self, commit: str) -> str:
        """The step's patch against the step before it (the baseline against nothing), renames
        found, as `git show` prints it."""
        with self._reading() as repo:
            try:
                step = repo.revparse_single(commit).peel(pygit2.Commit)
                if step.parent_ids:
                    diff = repo[step.parent_ids[0]].peel(pygit2.Tree).diff_to_tree(step.tree)
                else:
                    diff = step.tree.diff_to_tree(swap=True)
                diff.find_similar(pygit2.enums.DiffFind.FIND_RENAMES)
                return _names_unquoted(diff.patch or "")
            except (pygit2.GitError, KeyError, ValueError) as exc:
                raise MemdirError(
                    f"journal: the changes of commit {commit[:12]} cannot be read ({exc})"
                ) from None


_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_HEADS = ("diff --git ", "--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to ")


def _names_unquoted(patch: str) -> str:
    """libgit2 prints a name that is not ASCII C-quoted (`"caf\\303\\251.md"`), as git does
    only with `core.quotepath` on; the history page shows names as they are, so the file
    headers (between `diff --git` and the first hunk) are unquoted, unless the name holds a
    character git quotes even with it off (a control character, a quote, a backslash)."""

    def plain(m: re.Match[str]) -> str:
        name = codecs.escape_decode(m.group(1))[0].decode("utf-8", "replace")
        return m.group(0) if any(c < " " or c in '"\\\x7f' for c in name) else name

    lines = patch.split("\n")
    header = False
    for i, line in enumerate(lines):
        if line.startswith("diff --git "):
            header = True
        elif line.startswith("@@"):
            header = False
        if header and line.startswith(_HEADS) and '"' in line:
            lines[i] = _QUOTED.sub(plain, line)
    return "\n".join(lines)


_FILE_MODES = {pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE}


def _missing(sha: str) -> str:
    return (
        f"journal: the file content {sha} is missing from the journal's objects, so this snapshot "
        "cannot be read whole"
    )


def _read(repo: pygit2.Repository, sha: str) -> bytes:
    try:
        return repo.odb.read(sha)[1]
    except (pygit2.GitError, KeyError, ValueError):
        raise MemdirError(_missing(sha)) from None


def _files(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """{path: blob sha} of every file under `tree`. Links are never followed, so never
    replayed; a gitlink is no file of the store."""
    files: dict[str, str] = {}
    folders = [(tree, "")]
    while folders:
        folder, prefix = folders.pop()
        for entry in folder:
            if entry.type_str == "tree":
                folders.append((repo[entry.id].peel(pygit2.Tree), f"{prefix}{entry.name}/"))
            elif entry.filemode in _FILE_MODES:
                files[prefix + str(entry.name)] = str(entry.id)
    return files


def _changed_blobs(
    repo: pygit2.Repository, commit: pygit2.Commit, last: pygit2.Commit | None
) -> list[tuple[str, str, str]]:
    """(status, new blob sha, path) of each file `commit` changed against its first parent (in
    a walk, `last`: its tree is read already), as `git log --raw --no-renames` lists them: no
    rename found, a deleted file's sha all zeros."""
    parent: pygit2.Tree | None = None
    if commit.parent_ids:
        first = commit.parent_ids[0]
        parent = last.tree if last is not None and last.id == first else repo[first].peel(pygit2.Tree)
    out: list[tuple[str, str, str]] = []
    _compare(repo, parent, commit.tree, "", out)
    return out


_ZERO = "0" * 40


def _compare(
    repo: pygit2.Repository,
    old: pygit2.Tree | None,
    new: pygit2.Tree | None,
    prefix: str,
    out: list[tuple[str, str, str]],
) -> None:
    """The changed files between two trees, only the subtrees whose ids differ read: a step
    changes a few paths, so this reads a few trees, fewer than libgit2's diff of the same trees
    reads (figures: benchmarks/results/2026-12-06-docstring-figures.md,
    "store/journal/repository.py")."""
    before = {str(e.name): e for e in old} if old is not None else {}
    for entry in new if new is not None else ():
        name = str(entry.name)
        was = before.pop(name, None)
        if was is not None and was.id == entry.id:  # the journal writes every file one mode
            continue
        path = prefix + name
        was_tree = was is not None and was.type_str == "tree"
        if was_tree:  # a folder that became a file, or stays a folder: its files compared
            assert was is not None
            sub = repo[entry.id].peel(pygit2.Tree) if entry.type_str == "tree" else None
            _compare(repo, repo[was.id].peel(pygit2.Tree), sub, path + "/", out)
            if sub is not None:
                continue
            was = None
        elif entry.type_str == "tree":  # a file that became a folder, or a new folder
            if was is not None:
                out.append(("D", _ZERO, path))
            _compare(repo, None, repo[entry.id].peel(pygit2.Tree), path + "/", out)
            continue
        out.append(("M" if was is not None else "A", str(entry.id), path))
    for name, was in before.items():
        if was.type_str == "tree":
            _compare(repo, repo[was.id].peel(pygit2.Tree), None, f"{prefix}{name}/", out)
        else:
            out.append(("D", _ZERO, prefix + name))
