"""The sync repository and git's transports: where a store keeps what it knows of its remote.

`<root>/.memdir/sync.git` is a bare git repository of its own, beside the journal and apart
from it: the journal is one commit per step and stays the store's own record, while the remote
gets one commit per sync whose tree is the memory files and nothing else, so a person can
clone and browse it. The repository's config remembers the remote (`remote.origin.url`) and
its branch (`memdir.branch`); two refs carry the state a sync needs:

- `refs/memdir/base`: the last commit both sides agreed on (pushed by this store, or pulled
  whole), the base of the next three-way merge;
- `refs/memdir/fetched`: the remote's branch as the last fetch saw it (a temporary ref:
  fetching into it changes nothing else, so a kill during a fetch leaves the store whole).

Fetch, push and the listing of the remote's heads run git itself (bare path, ssh and https,
with the user's own credentials and ssh setup), never with `--force`: a push the remote refuses
as not a fast-forward means someone pushed meanwhile, and the caller merges again. The
environment is cleaned of `GIT_DIR` and its kind, so a caller's git variables cannot point a
sync at another repository, and git runs with no terminal, so neither it nor ssh can stop a
headless sync to ask for a password: it fails, saying why.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pygit2

from memdir.conventions import ROOT
from memdir.errors import MemdirError
from memdir.store.paths import STATE_DIR, parse_memory_path
from memdir.store.private import owner_only
from memdir.store.safefs import private_dirs

SYNC_DIR = "sync.git"
BASE_REF = "refs/memdir/base"
FETCHED_REF = "refs/memdir/fetched"
DEFAULT_BRANCH = "main"
_IDENTITY = ("memdir", "memdir@localhost")
# git variables that would point git at another repository or index than the one named
_REPO_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
)


class SyncError(MemdirError):
    """The sync could not run; the store and the remote are as they were."""


@dataclass(frozen=True)
class Foreign:
    """An entry of the remote's tree that is no memory file, kept as it is (path from the
    tree's top, object id, git file mode)."""

    path: str
    sha: str
    mode: int


_PLAIN = {pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE}


def _memory_path(rel: str) -> bool:
    try:
        parse_memory_path(f"{ROOT}/{rel}")
    except MemdirError:
        return False
    return True


@dataclass(frozen=True)
class Heads:
    """What the remote holds: {branch: commit}, and the branch its HEAD names (None: unborn
    or not said)."""

    branches: dict[str, str]
    default: str | None


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REPO_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"  # a sync runs headless: an unknown password is an error
    return env


class SyncRepo:
    """The bare repository a store syncs through (made on first use, its owner's alone)."""

    def __init__(self, root: Path) -> None:
        self.git_dir = Path(root) / STATE_DIR / SYNC_DIR
        if not (self.git_dir / "HEAD").is_file():
            with owner_only():
                private_dirs(self.git_dir.parent)
                pygit2.init_repository(str(self.git_dir), bare=True)
        self.repo = pygit2.Repository(str(self.git_dir))

    # -- what it remembers ------------------------------------------------------------
    def _config(self, key: str) -> str | None:
        try:
            return str(self.repo.config[key])
        except KeyError:
            return None

    @property
    def url(self) -> str | None:
        return self._config("remote.origin.url")

    @property
    def branch(self) -> str | None:
        return self._config("memdir.branch")

    def remember(self, url: str, branch: str) -> None:
        if self.url != url:
            self.repo.config["remote.origin.url"] = url
        if self.branch != branch:
            self.repo.config["memdir.branch"] = branch

    def ref(self, name: str) -> str | None:
        try:
            return str(self.repo.references[name].target)
        except KeyError:
            return None

    def set_ref(self, name: str, commit: str) -> None:
        self.repo.references.create(name, pygit2.Oid(hex=commit), force=True)

    # -- objects ----------------------------------------------------------------------
    def has(self, sha: str) -> bool:
        return pygit2.Oid(hex=sha) in self.repo.odb

    def files(self, commit: str | None) -> tuple[dict[str, str], list[Foreign]]:
        """{memory path: blob id} of the memory files in `commit`'s tree (none for None), and
        the entries that are none (a hidden name such as `.gitignore`, a link, a submodule, a
        name no memory path may have): never landed here, carried as they are in every tree
        this store pushes, so a sync never removes what a person keeps beside the memory."""
        if commit is None:
            return {}, []
        tree = self.repo[pygit2.Oid(hex=commit)].peel(pygit2.Tree)
        out: dict[str, str] = {}
        foreign: list[Foreign] = []
        folders = [(tree, "")]
        while folders:
            folder, prefix = folders.pop()
            for entry in folder:
                rel = prefix + str(entry.name)
                if entry.type_str == "tree" and not str(entry.name).startswith("."):
                    folders.append((self.repo[entry.id].peel(pygit2.Tree), rel + "/"))
                elif entry.filemode in _PLAIN and _memory_path(rel):
                    out[ROOT + "/" + rel] = str(entry.id)
                else:
                    foreign.append(Foreign(rel, str(entry.id), int(entry.filemode)))
        return out, foreign

    def blob(self, sha: str) -> bytes:
        return bytes(self.repo.odb.read(pygit2.Oid(hex=sha))[1])

    def put_blob(self, data: bytes) -> str:
        return str(self.repo.create_blob(data))

    def tree_of(self, files: dict[str, str], foreign: list[Foreign]) -> str:
        """The tree holding `files` ({memory path: blob id}, every blob in the repository) and
        the `foreign` entries as they were."""
        index = pygit2.Index()
        for path, sha in files.items():
            mode = pygit2.enums.FileMode.BLOB
            index.add(pygit2.IndexEntry(path.removeprefix(ROOT + "/"), pygit2.Oid(hex=sha), mode))
        for f in foreign:
            index.add(pygit2.IndexEntry(f.path, pygit2.Oid(hex=f.sha), pygit2.enums.FileMode(f.mode)))
        return str(index.write_tree(self.repo))

    def tree_id(self, commit: str | None) -> str | None:
        return None if commit is None else str(self.repo[pygit2.Oid(hex=commit)].peel(pygit2.Tree).id)

    def commit(self, tree: str, parents: list[str], message: str) -> str:
        who = pygit2.Signature(*_IDENTITY)
        oid = self.repo.create_commit(
            None, who, who, message, pygit2.Oid(hex=tree), [pygit2.Oid(hex=p) for p in parents]
        )
        return str(oid)

    def descends(self, commit: str, ancestor: str) -> bool:
        """Whether `ancestor` is in `commit`'s history (or is it)."""
        if commit == ancestor:
            return True
        return bool(self.repo.descendant_of(pygit2.Oid(hex=commit), pygit2.Oid(hex=ancestor)))

    # -- git's transports -------------------------------------------------------------
    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args],
            capture_output=True,
            text=True,
            env=_env(),
            check=False,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # no terminal to ask on: ssh fails rather than waits for a password
        )

    def heads(self, url: str) -> Heads:
        """The remote's branches and default branch; SyncError when it cannot be reached."""
        proc = self._git("ls-remote", "--symref", url, "HEAD", "refs/heads/*")
        if proc.returncode != 0:
            raise SyncError(f"the remote {url!r} cannot be reached: {_last(proc.stderr)}")
        branches: dict[str, str] = {}
        default = None
        for line in proc.stdout.splitlines():
            left, _, name = line.partition("\t")
            if left.startswith("ref: refs/heads/") and name == "HEAD":
                default = left.removeprefix("ref: refs/heads/")
            elif name.startswith("refs/heads/"):
                branches[name.removeprefix("refs/heads/")] = left
        return Heads(branches, default)

    def fetch(self, url: str, branch: str) -> str:
        """The remote's `branch` fetched into FETCHED_REF; its commit."""
        proc = self._git("fetch", "--quiet", "--no-tags", url, f"+refs/heads/{branch}:{FETCHED_REF}")
        if proc.returncode != 0:
            raise SyncError(f"fetching {branch!r} from {url!r} failed: {_last(proc.stderr)}")
        sha = self.ref(FETCHED_REF)
        assert sha is not None
        return sha

    def push(self, url: str, commit: str, branch: str) -> bool:
        """Push `commit` to the remote's `branch`, never forced: False when the remote refuses
        it as not a fast-forward (someone pushed since the fetch), SyncError on anything else."""
        proc = self._git("push", "--quiet", "--porcelain", url, f"{commit}:refs/heads/{branch}")
        if proc.returncode == 0:
            return True
        said = proc.stdout + proc.stderr
        if "non-fast-forward" in said or "fetch first" in said or "[rejected]" in said:
            return False
        raise SyncError(f"pushing to {url!r} failed: {_last(said)}")

    def close(self) -> None:
        self.repo.free()


def _last(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "git gave no reason"
