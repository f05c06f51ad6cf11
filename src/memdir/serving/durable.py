"""A tenant's store on a replica's disk: loaded from the tenant's remote, and every write made
durable there before it is acknowledged.

A replica's disk is not where a tenant's memory lives: a replica can be lost with its disk at
any moment, and the tenant's next call is then served by a replica that may never have seen it.
So the tenant's remote (a plain git repository of its memory files, docs/serving.md "Serving
past one machine") is the truth between replicas, and a replica's copy is a cache of it:

- loading a tenant is a clone of its remote into a fresh folder (`fetch_copy`);
- a write is acknowledged only once a sync has put it in the remote (`push_copy`). Writes that
  finish while a sync runs are covered by the next one, so a burst costs one sync, not one each
  (a group commit: `TenantCopy.make_durable`);
- a read first takes what other replicas acknowledged since this copy last synced
  (`TenantCopy.refresh`): Ray Serve routes a tenant to the replica that has it loaded, but may
  send it elsewhere while that replica is busy or lost, and then two copies of one tenant serve
  at once. A probe of the remote's head decides whether a sync is needed, so a tenant served
  by one replica pays a probe per call, not a sync.

The two functions that reach the remote, `fetch_copy` and `push_copy`, are the only ones that
call the sync room; everything else here is bookkeeping.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import uuid
from pathlib import Path

from memdir.errors import MemdirError
from memdir.store.paths import STATE_DIR
from memdir.store.store import Store
from memdir.tools.guards import Guards
from memdir.tools.wiring import open_store, release_store

PROBE_TIMEOUT_S = 30.0  # a remote that does not answer a probe in this long fails the call


def fetch_copy(remote: str, root: Path) -> tuple[str, str | None]:
    """Make `root` a store holding the tenant's memory as its remote has it; the branch and
    the commit it holds."""
    from memdir.sync import clone

    report = clone(remote, root)
    return report.branch, report.commit


def push_copy(store: Store, remote: str) -> str | None:
    """Put every write `store` has finished into `remote`, merging what others wrote there;
    the commit both now hold. Raises MemdirError when the remote did not take them."""
    from memdir.sync import sync_store

    return sync_store(store, remote).commit


def remote_of(root: str | Path) -> str | None:
    """The remote a store's last sync used (`memdir sync ROOT REMOTE` remembers it), or None."""
    from memdir.sync.remote import SYNC_DIR, SyncRepo

    if not (Path(root) / STATE_DIR / SYNC_DIR / "HEAD").is_file():
        return None
    repo = SyncRepo(Path(root))
    try:
        return repo.url
    finally:
        repo.close()


def remote_head(remote: str, branch: str) -> str | None:
    """The commit the remote's `branch` holds now (None: no such branch): a read-only probe
    through git's own transports, a path, ssh and https alike."""
    try:
        done = subprocess.run(
            ["git", "ls-remote", "--heads", remote, f"refs/heads/{branch}"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise MemdirError(
            f"the tenant's remote {remote} did not answer within {PROBE_TIMEOUT_S:g} s"
        ) from None
    if done.returncode != 0:
        raise MemdirError(f"the tenant's remote {remote} cannot be read: {done.stderr.strip()[:300]}")
    return done.stdout.split("\t", 1)[0] or None


class TenantCopy:
    """One tenant's store on this replica. Thread-safe: tool calls run in worker threads."""

    def __init__(
        self,
        tenant: str,
        remote: str,
        root: Path,
        fetched: tuple[str, str | None],
        guards: Guards | None = None,
    ) -> None:
        self.tenant = tenant
        self.remote = remote
        self.root = root
        self.branch, self.synced_head = fetched  # the remote's branch, the commit both sides hold
        self.store: Store = open_store(root, guards=guards)
        self._count = threading.Lock()
        self._written = 0  # writes finished on this copy
        self._synced = 0  # of those, how many a sync has put in the remote
        self._sync = threading.Lock()  # one sync (or refresh) of this copy at a time
        self.syncs = 0
        self.closed = False

    @classmethod
    def load(cls, tenant: str, remote: str, workdir: Path, guards: Guards | None = None) -> TenantCopy:
        """A fresh copy of `tenant` from its remote, in a folder of its own under `workdir` (a
        copy loaded again after an unload never meets the old one's files)."""
        root = workdir / f"{uuid.uuid4().hex[:12]}"
        fetched = fetch_copy(remote, root)
        return cls(tenant, remote, root, fetched, guards)

    def wrote(self) -> int:
        """Count a finished write; the number `make_durable` must reach to cover it."""
        with self._count:
            self._written += 1
            return self._written

    def make_durable(self, upto: int) -> None:
        """Return once the remote holds this copy's first `upto` writes. A sync started after a
        write finished covers it; one already running may not, so callers queue on the lock
        and the first of them syncs for all who wrote before it started."""
        with self._sync:
            if self._synced >= upto:
                return
            with self._count:
                target = self._written
            self._sync_now()
            self._synced = target

    def refresh(self) -> None:
        """Take what other copies made durable since this one last synced, if anything."""
        if remote_head(self.remote, self.branch) == self.synced_head:
            return
        with self._sync:
            if remote_head(self.remote, self.branch) != self.synced_head:
                self._sync_now()

    def _sync_now(self) -> None:
        self.synced_head = push_copy(self.store, self.remote)
        self.syncs += 1

    def close(self) -> None:
        """Release the store and delete the copy. Every acknowledged write is in the remote
        already; a write whose sync failed (never acknowledged) gets one more try first."""
        if self.closed:
            return
        self.closed = True
        try:
            with self._count:
                pending = self._written > self._synced
            if pending:
                self.make_durable(self._written)
        except MemdirError:
            pass  # not acknowledged: the client was told the write did not reach the remote
        finally:
            release_store(self.store)
            shutil.rmtree(self.root, ignore_errors=True)
