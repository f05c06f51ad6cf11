"""One sync, in the order that leaves both sides whole whatever stops it (docs/sync.md).

1. The remote's branch is fetched into a temporary ref of the sync repository (`remote.py`):
   nothing the store or the remote holds changes.
2. Under the store's writer lock, as one step of one `sync` operation, this store's files are
   read, merged with the remote's and the base (`merge.py`, a work tree of blobs off to the
   side), and the result lands through the store's own landing (`agents/landing.py`: an intent
   record first, so a kill part way is rolled forward by the next process to open the store,
   and the journal records the step). No writer runs between the read and the landing.
3. Last, the merged files are committed on top of the remote's commit and pushed, never
   forced; a refusal (someone pushed meanwhile) starts again from 1. Only a push that went
   through moves `refs/memdir/base`.

A kill after 2 leaves the store merged and the remote as it was; the next sync merges the
same remote commit into files that already hold it, which the merge leaves as they are, and
pushes. A kill after the push but before the base moved leaves a remote that already holds
this store's files: the next sync finds nothing to merge and moves the base. Syncs of one store
queue on their own lock (`.memdir/sync.lock`), so two never interleave.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from memdir.agents.landing import apply, digests, git_blob, plan, read
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.operations import operation
from memdir.store.oslock import OsLock
from memdir.store.paths import STATE_DIR
from memdir.store.store import Store
from memdir.sync.merge import Merged, merge
from memdir.sync.remote import BASE_REF, DEFAULT_BRANCH, Foreign, SyncError, SyncRepo
from memdir.sync.report import SyncReport
from memdir.tools.wiring import open_store, release_store

TOOL = "sync"
ATTEMPTS = 5  # pushes refused because the remote moved before the sync gives up
LOCK = "sync.lock"
LOCK_WAIT = 600.0  # seconds a sync waits for another sync of the same store


def sync(root: Path, remote: str | None = None) -> SyncReport:
    """Sync the store at `root` with `remote` (any git remote: a bare repository's path, ssh or
    https), or with the remote its last sync used. Both end holding the same memory files."""
    root = Path(root)
    if not (root / MEMORY_INDEX).is_file():
        raise SyncError(
            f"{root} is not a memdir store (no {MEMORY_INDEX} at its root): make one with "
            f"'memdir init {root}', or copy one from its remote with 'memdir clone REMOTE {root}'"
        )
    store = open_store(root)
    try:
        return sync_store(store, remote)
    finally:
        release_store(store)


def clone(remote: str, root: Path) -> SyncReport:
    """Make a new store at `root` holding the memory files of `remote`, which it then syncs
    with. `root` must not exist or be an empty folder."""
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise SyncError(
            f"{root} already exists and is not an empty folder: clone into a new one, or sync the "
            f"store that is there with 'memdir sync {root} {remote}'"
        )
    made = not root.exists()
    try:
        store = open_store(root, create=True)
        try:
            report = sync_store(store, remote, cloning=True)
        finally:
            release_store(store)
    except BaseException:
        if made:
            shutil.rmtree(root, ignore_errors=True)
        else:
            for entry in root.iterdir():
                shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink()
        raise
    return report


def sync_store(store: Store, remote: str | None = None, *, cloning: bool = False) -> SyncReport:
    """`sync` over a store already open (a `Memory`'s): its observers see the landing."""
    repo = SyncRepo(store.root)
    try:
        url = remote or repo.url
        if not url:
            raise SyncError(
                f"no remote known for {store.root}: name one the first time "
                f"('memdir sync {store.root} REMOTE'); it is remembered after that"
            )
        with OsLock(store.root / STATE_DIR / LOCK, timeout=LOCK_WAIT):
            for attempt in range(1, ATTEMPTS + 1):
                report = _attempt(store, repo, url, cloning=cloning)
                if report is not None:
                    report.attempts = attempt
                    return report
        raise SyncError(
            f"the remote {url!r} moved during each of {ATTEMPTS} tries (others pushing at the same "
            "time); this store holds every merge so far: sync again"
        )
    finally:
        repo.close()


def _attempt(store: Store, repo: SyncRepo, url: str, *, cloning: bool) -> SyncReport | None:
    """One fetch, merge, land and push; None when the push was refused as not a fast-forward."""
    heads = repo.heads(url)
    branch = repo.branch if repo.url == url and repo.branch else heads.default or DEFAULT_BRANCH
    remote_commit = heads.branches.get(branch)
    if cloning and remote_commit is None:
        raise SyncError(
            f"the remote {url!r} holds no memory on branch {branch!r}: nothing to clone. Make a store "
            "with 'memdir init ROOT' and sync it to the remote instead"
        )
    if remote_commit is not None and not repo.has(remote_commit):
        remote_commit = repo.fetch(url, branch)
    repo.remember(url, branch)
    base = repo.ref(BASE_REF)
    base_files, _ = repo.files(base)
    foreign: list[Foreign] = []
    if remote_commit is None:
        # no branch there: a new remote, or one whose branch was deleted, which deletes nothing here
        theirs, trusted = dict(base_files), base is None
    else:
        theirs, foreign = repo.files(remote_commit)
        trusted = base is None or repo.descends(remote_commit, base)
    report = SyncReport(url, branch)
    with operation(store.root, TOOL, f"sync with {url}") as tag, store.step(TOOL, remote=url) as step:
        ours = digests(store, git_blob)
        for path, sha in ours.items():
            if base_files.get(path) != sha and not repo.has(sha):
                repo.put_blob(store.read_bytes(path))
        merged = merge(repo, store.root, base_files, ours, theirs, trusted=trusted)
        _note(report, merged)
        ops = plan(ours, merged.files)
        if not ops.empty:
            step.meta.update(remote_commit=(remote_commit or "")[:12] or None, branch=branch)
            new = {p: repo.blob(merged.files[p]) for p in ops.needed}
            apply(store, ops, new, read(store, ops.old_side))
            report.pulled = sorted({*ops.deletes, *ops.writes, *ops.creates, *(b for _, b in ops.renames)})
            report.operation = tag.id
    tree = repo.tree_of(merged.files, foreign)
    if remote_commit is not None and repo.tree_id(remote_commit) == tree:
        repo.set_ref(BASE_REF, remote_commit)
        report.commit = remote_commit
        return report
    parents = [remote_commit] if remote_commit else []
    if base is not None and not (remote_commit and repo.descends(remote_commit, base)):
        parents.append(base)  # the history the remote lost stays reachable from the new commit
    report.pushed = sorted(
        p for p in merged.files.keys() | theirs.keys() if merged.files.get(p) != theirs.get(p)
    )
    commit = repo.commit(tree, parents, _message(report))
    if not repo.push(url, commit, branch):
        return None
    repo.set_ref(BASE_REF, commit)
    report.commit = commit
    return report


def _note(report: SyncReport, merged: Merged) -> None:
    report.kept, report.conflicts, report.superseded = merged.kept, merged.conflicts, merged.superseded


def _message(report: SyncReport) -> str:
    n = len(report.pushed)
    head = f"memdir sync: {n} file{'s' if n != 1 else ''} changed"
    body = "\n".join(f"  {p}" for p in report.pushed[:50])
    more = f"\n  (+{n - 50} more)" if n > 50 else ""
    return f"{head}\n\n{body}{more}\n"
