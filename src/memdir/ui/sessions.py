"""UI sign-ins: a random session id per sign-in, mapped to a tenant on the server side.

The cookie must not be the bearer token. Cookies are scoped by host, not port, so a browser
sends a `127.0.0.1` cookie to every HTTP server on 127.0.0.1, a tenant MCP server among them,
where a `manage` token writes. A session id is good for this UI only and reads only (the UI
has no route that writes), names no profile, and means nothing to `mcp/tenants.py`'s lookup.
The map is bounded (the oldest sign-in goes first) and each entry expires, so a flood of
sign-ins cannot grow the server and a stolen id does not live forever.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

SESSION_BYTES = 32  # as the tenants' tokens (mcp/tenants.TOKEN_BYTES): nothing to guess
MAX_SESSIONS = 4096  # sign-ins kept; the oldest is forgotten past it (its browser signs in again)
SESSION_TTL_S = 12 * 3600.0  # a sign-in lasts a working day, then the page asks again
PREFIX = "mdui_"  # not "mdt_": an id is never mistaken for a token in a log or a paste


class Sessions:
    """Session id -> tenant, bounded and expiring. Views run in worker threads and the sign-in
    on the event loop, so every access takes the lock."""

    def __init__(
        self,
        limit: int = MAX_SESSIONS,
        ttl_s: float = SESSION_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.ttl_s = ttl_s
        self.clock = clock
        self._by_id: OrderedDict[str, tuple[str, str, float]] = (
            OrderedDict()
        )  # id -> (tenant, token hash, expiry)
        self._lock = threading.Lock()

    def open(self, tenant: str, token_sha256: str = "") -> str:
        """A new session id for `tenant`, signed in with the token of hash `token_sha256`
        (kept so that revoking the token ends the sign-in: `forget`)."""
        sid = PREFIX + secrets.token_urlsafe(SESSION_BYTES)
        with self._lock:
            self._expire()
            self._by_id[sid] = (tenant, token_sha256, self.clock() + self.ttl_s)
            while len(self._by_id) > self.limit:
                self._by_id.popitem(last=False)
        return sid

    def signed(self, sid: str) -> tuple[str, str] | None:
        """(tenant, token hash) of the sign-in `sid`, or None (unknown, forgotten or expired)."""
        with self._lock:
            self._expire()
            found = self._by_id.get(sid)
            return None if found is None else (found[0], found[1])

    def tenant(self, sid: str) -> str | None:
        """The tenant `sid` was opened for, or None (unknown, forgotten or expired)."""
        found = self.signed(sid)
        return None if found is None else found[0]

    def forget(self, token_sha256: str) -> int:
        """End every sign-in made with that token (it was revoked); the others stay."""
        with self._lock:
            gone = [sid for sid, (_, digest, _) in self._by_id.items() if digest == token_sha256]
            for sid in gone:
                del self._by_id[sid]
        return len(gone)

    def _expire(self) -> None:
        """Forget expired sign-ins; they were opened in expiry order, so the oldest come first."""
        now = self.clock()
        while self._by_id:
            sid, (_, _, expiry) = next(iter(self._by_id.items()))
            if expiry > now:
                break
            del self._by_id[sid]

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._by_id)
