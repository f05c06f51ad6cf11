"""Sync: one store's memory files shared with another through any git remote (docs/sync.md).

- `sync(root, remote=None)`: fetch, merge, land here, push; the remote is remembered after the
  first sync (`run.py`, which states the order that keeps both sides whole under a kill);
- `clone(remote, root)`: a new store from a remote's files;
- `SyncReport`: what one sync did (`report.py`); `SyncError`: why one could not run.

`remote.py` holds the sync repository (`.memdir/sync.git`: the remote's URL, the base of the
next merge) and git's transports; `merge.py` the three-way merge of the files.
"""

from memdir.sync.remote import SyncError
from memdir.sync.report import SyncReport
from memdir.sync.run import clone, sync, sync_store

__all__ = ["SyncError", "SyncReport", "clone", "sync", "sync_store"]
