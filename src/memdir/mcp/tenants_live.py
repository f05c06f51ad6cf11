"""The tenants file as a running server sees it: read again when it changes, so a `token revoke`
takes effect within a second, without a restart (a restart ends every tenant's sessions).

Noticing a change costs one `stat` of the file, at most every CHECK_EVERY_S: `token add` and
`token revoke` replace the file atomically (tenants.save), so every write is a new inode, and
the identity compared (device, inode, size, modification and change times) catches a hand edit
in place too. A file that no longer reads, or holds a set `tenants.check` refuses (a hand edit
gone wrong), leaves the last good set in force and says so once on stderr: refusing every token
for one bad edit would end every tenant's sessions, which is what this module is for avoiding.
A missing file is read as no tokens, as `tenants.load` reads it.

`refresh` names the tokens a reload took away (revoked, or bound anew to another tenant, root
or profile), so the server can end their sessions and only theirs (tenant_pool.TenantPool.revoke;
the UI forgets their sign-ins, ui/pages.py).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from memdir.errors import MemdirError
from memdir.mcp.tenants import Tenants, TenantToken, load

CHECK_EVERY_S = 0.2  # a revoked token is refused this long after the file changed, plus one read of it

Identity = tuple[int, int, int, int, int] | None


def _identity(path: Path) -> Identity:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class LiveTenants:
    """The current set of tokens; `path` None for a set given in code, which never changes."""

    def __init__(
        self,
        tenants: Tenants,
        path: str | os.PathLike[str] | None = None,
        every: float = CHECK_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.every = every
        self.clock = clock
        self.reloads = 0
        self._current = tenants
        self._seen: Identity = _identity(self.path) if self.path is not None else None
        self._checked = clock()
        self._lock = threading.Lock()

    @classmethod
    def watch(
        cls,
        path: str | os.PathLike[str],
        every: float = CHECK_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> LiveTenants:
        """The file's tokens, watched from now. Its identity is taken before it is read, so a
        write in between is read again at the first check, never missed."""
        seen = _identity(Path(path))
        live = cls(load(path), path, every, clock)
        live._seen = seen
        return live

    @property
    def current(self) -> Tenants:
        """The set in force, as last read (no check: for the event loop, which must not block)."""
        return self._current

    def lookup(self, token: str) -> TenantToken | None:
        """The entry `token` opens in the file as it is now (checked at most every `every`)."""
        self.refresh()
        return self._current.lookup(token)

    def entry(self, token_sha256: str) -> TenantToken | None:
        """The entry of a token known by its hash (a UI sign-in's), as the file is now."""
        self.refresh()
        return self._current.entry(token_sha256)

    def refresh(self, force: bool = False) -> set[str]:
        """Read the file again if it changed; the hashes of the tokens that reload took away
        (empty when nothing changed). Thread-safe; a check within `every` of the last one is
        skipped unless `force`."""
        if self.path is None:
            return set()
        with self._lock:
            now = self.clock()
            if not force and now - self._checked < self.every:
                return set()
            self._checked = now
            seen = _identity(self.path)
            if seen == self._seen:
                return set()
            try:
                fresh = load(self.path)
            except (MemdirError, OSError) as exc:
                self._seen = seen  # said once per version of the file
                print(f"memdir: {self.path} changed but cannot be used ({exc}); the tokens read before "
                      "stay in force until it is fixed", file=sys.stderr, flush=True)  # fmt: skip
                return set()
            old = self._current
            self._current, self._seen = fresh, seen
            self.reloads += 1
        return {t.token_sha256 for t in old.tokens if grant(fresh.entry(t.token_sha256)) != grant(t)}


def grant(entry: TenantToken | None) -> tuple[str, str, str, bool] | None:
    """What a token opens: a change of it (not of its label) ends the token's sessions."""
    return None if entry is None else (entry.tenant, entry.real_root, entry.profile, entry.reorganize)
