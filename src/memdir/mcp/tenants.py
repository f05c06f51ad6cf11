"""The tenants file: which bearer token opens which memory root through which profile.

Only a SHA-256 of each token is stored, so a leaked tenants file does not leak access; the
token itself is printed once by `memdir token add`. Tokens are 256-bit random strings, so an
unsalted hash is enough (there is nothing to brute-force that a salt would slow down).

Isolation starts here: a tenant owns exactly one root, and no root may lie inside (or be)
another tenant's root, because a nested root would let one tenant's tools see the other's
files, index and history.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from memdir.errors import MemdirError
from memdir.store import safeyaml
from memdir.store.atomic import write_atomic
from memdir.store.oslock import OsLock
from memdir.store.safefs import private_dirs
from memdir.tools.profiles import PROFILES

TOKEN_BYTES = 32
FINGERPRINT_HEX = 12  # hex digits of a token's hash that `token list` shows
MIN_FINGERPRINT_HEX = 6  # the fewest `token revoke` takes, so a slip names no token at random
# The serving bounds of a tenants file (tenant_pool.py), here so the CLI can show them cheaply.
OPEN_TENANTS = 128  # tenants kept open (`memdir serve --open-tenants`)
PER_TENANT = 32  # one tenant's requests in flight (`memdir serve --tenant-requests`); 429 beyond
# Event streams (`GET /mcp`, each held open for its session's life). On loopback every client
# shares one address, whose open connections http_limits bounds (MAX_CONNECTIONS_PER_CLIENT,
# 64): two tenants holding 32 streams each took all of them, and every other tenant got 503.
# So streams take at most half of that, a tenant at most STREAMS_PER_TENANT of them, and the
# last STREAMS_RESERVED go only to tenants that hold none; past a bound a stream gets 429.
STREAMS_PER_TENANT = 4
MAX_STREAMS = 32
STREAMS_RESERVED = 8


@dataclass(frozen=True)
class TenantToken:
    """One line of the tenants file: a hashed token bound to a tenant's root and a profile."""

    token_sha256: str
    tenant: str
    root: str
    profile: str
    label: str = ""
    reorganize: bool = False  # this token's writes are a reorganization session (preservation guard)
    created: str = ""  # when `token add` made it (UTC, ISO 8601); "" for entries from before

    @property
    def fingerprint(self) -> str:
        """What names the token in `token list` and `token revoke`: a prefix of its stored hash,
        never of the token (a prefix of the secret would shorten what a guesser must find)."""
        return "sha256:" + self.token_sha256[:FINGERPRINT_HEX]

    @functools.cached_property
    def real_root(self) -> str:
        """Resolved once, so every request reaches the root `check` proved disjoint."""
        return os.path.realpath(self.root)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return "mdt_" + secrets.token_urlsafe(TOKEN_BYTES)


class Tenants:
    """A validated set of tenant tokens; `lookup` is the only way from a token to a root."""

    def __init__(self, tokens: list[TenantToken]) -> None:
        check(tokens)
        self.tokens = list(tokens)
        self._by_hash = {t.token_sha256: t for t in self.tokens}

    def lookup(self, token: str) -> TenantToken | None:
        """The entry whose hash matches `token`, found by that hash: a dict probe costs the same
        for 10 tokens as for 10,000. Its timing depends only on the SHA-256 of what the caller
        sent, which the caller cannot steer towards a stored hash, so it reveals nothing about
        the stored tokens; the final comparison is constant-time all the same."""
        digest = hash_token(token)
        found = self._by_hash.get(digest)
        if found is None or not hmac.compare_digest(found.token_sha256, digest):
            return None
        return found

    def entry(self, token_sha256: str) -> TenantToken | None:
        """The entry of a token known by its stored hash (a sign-in remembers that, never the
        token), or None once the token is gone from the file."""
        return self._by_hash.get(token_sha256)


def check(tokens: list[TenantToken]) -> None:
    """Refuse a set of tokens that could let one tenant reach another's files."""
    roots: dict[str, str] = {}  # tenant -> real root
    for t in tokens:
        if t.profile not in PROFILES:
            raise MemdirError(
                f"tenant {t.tenant!r}: unknown profile {t.profile!r}; use one of {', '.join(PROFILES)}"
            )
        if len(t.token_sha256) != 64 or any(c not in "0123456789abcdef" for c in t.token_sha256):
            raise MemdirError(f"tenant {t.tenant!r}: token_sha256 must be 64 lowercase hex digits")
        root = t.real_root
        if roots.setdefault(t.tenant, root) != root:
            raise MemdirError(
                f"tenant {t.tenant!r} is bound to two roots ({roots[t.tenant]} and {root}); "
                "a tenant has exactly one root: give the second one another tenant name"
            )
    hashes = [t.token_sha256 for t in tokens]
    if len(set(hashes)) != len(hashes):
        raise MemdirError("the same token appears twice in the tenants file; remove one of the entries")
    # Each root's ancestors looked up among the roots: linear in the number of tenants (a
    # pairwise comparison took minutes at 10,000 of them).
    owner = {root: tenant for tenant, root in roots.items()}
    if len(owner) < len(roots):
        by_root: dict[str, list[str]] = {}
        for tenant, root in roots.items():
            by_root.setdefault(root, []).append(tenant)
        tenant_a, tenant_b = next(ts for ts in by_root.values() if len(ts) > 1)[:2]
        _refuse_nested(tenant_a, roots[tenant_a], tenant_b, roots[tenant_b], "is the same as")
    for tenant_b, root_b in sorted(roots.items(), key=lambda kv: kv[1]):
        for parent in Path(root_b).parents:
            outer = owner.get(str(parent))
            if outer is not None:
                _refuse_nested(outer, str(parent), tenant_b, root_b, "lies inside")


def _refuse_nested(tenant_a: str, root_a: str, tenant_b: str, root_b: str, where: str) -> None:
    raise MemdirError(
        f"tenant {tenant_b!r}'s root {root_b} {where} tenant {tenant_a!r}'s root {root_a}; "
        "roots must be disjoint, or one tenant could read the other's files, index and history"
    )


def load(path: str | os.PathLike[str]) -> Tenants:
    """Read a tenants file (a JSON or YAML list of entries); relative roots are taken from its folder."""
    p = Path(path)
    if not p.exists():
        return Tenants([])
    text = p.read_text(encoding="utf-8")
    try:
        # YAML through safeyaml: an alias bomb here would expand in the str() of each field below
        data: Any = (
            json.loads(text) if p.suffix == ".json" or text.lstrip().startswith("[") else safeyaml.load(text)
        )
    except (json.JSONDecodeError, yaml.YAMLError, RecursionError) as exc:
        why = "nested too deep" if isinstance(exc, RecursionError) else exc
        raise MemdirError(f"{p}: not a valid tenants file ({why}); it must be a JSON or YAML list") from None
    if data is None:
        data = []
    if isinstance(data, dict) and isinstance(data.get("tokens"), list):
        data = data["tokens"]
    if not isinstance(data, list):
        raise MemdirError(f"{p}: a tenants file is a list of {{token_sha256, tenant, root, profile}} entries")
    tokens: list[TenantToken] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise MemdirError(f"{p}: entry {i} is not a mapping")
        missing = [k for k in ("token_sha256", "tenant", "root", "profile") if k not in item]
        if missing:
            raise MemdirError(f"{p}: entry {i} lacks {', '.join(missing)}")
        root = Path(str(item["root"]))
        if not root.is_absolute():
            root = p.parent / root
        tokens.append(
            TenantToken(
                str(item["token_sha256"]).lower(),
                str(item["tenant"]),
                str(root),
                str(item["profile"]),
                str(item.get("label", "")),
                bool(item.get("reorganize", False)),
                str(item.get("created", "")),
            )
        )
    return Tenants(tokens)


def save(path: str | os.PathLike[str], tenants: Tenants) -> None:
    """Write the file atomically, readable by its owner only (hashes are not secrets, roots may be)."""
    p = Path(path)
    private_dirs(p.parent)  # a new folder is 0700 whatever the umask: no one else may swap the file
    body = json.dumps([asdict(t) for t in tenants.tokens], indent=2) + "\n"
    write_atomic(p, body.encode("utf-8"), mode=0o600)


def _free_name(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def add_token(
    path: str | os.PathLike[str],
    root: str,
    profile: str,
    tenant: str | None = None,
    label: str = "",
    reorganize: bool = False,
) -> str:
    """Add a token for `root` under `profile`; returns the token (the only time it exists in clear)."""
    if not Path(root).is_dir():
        raise MemdirError(f"memory root {root!r} does not exist; run 'memdir init {root}' first")
    tenants = load(path)
    real = os.path.realpath(root)
    name = tenant
    if name is None:
        same = [t.tenant for t in tenants.tokens if t.real_root == real]
        name = same[0] if same else _free_name(Path(real).name, {t.tenant for t in tenants.tokens})
    token = new_token()
    created = datetime.now(UTC).isoformat(timespec="seconds")
    with _editing(path):
        tenants = load(path)  # again, under the lock: an add or revoke since is kept
        entry = TenantToken(hash_token(token), name, real, profile, label, reorganize, created)
        save(path, Tenants([*tenants.tokens, entry]))
    return token


def revoke(path: str | os.PathLike[str], which: str) -> TenantToken:
    """Remove the token `which` names (the token itself, or its fingerprint as `token list`
    shows it, `sha256:` optional, at least MIN_FINGERPRINT_HEX digits) in one atomic rewrite;
    returns the entry removed. Refused, changing nothing, when it names no token or several."""
    if not Path(path).exists():
        raise MemdirError(f"{path}: no such tenants file; nothing to revoke")
    with _editing(path):
        tenants = load(path)
        found = _named(tenants, which)
        save(path, Tenants([t for t in tenants.tokens if t is not found]))
    return found


def _named(tenants: Tenants, which: str) -> TenantToken:
    direct = tenants.lookup(which)
    if direct is not None:
        return direct
    prefix = which.strip().lower().removeprefix("sha256:")
    if len(prefix) < MIN_FINGERPRINT_HEX or any(c not in "0123456789abcdef" for c in prefix):
        raise MemdirError(
            f"{which!r} is neither a token of this file nor a fingerprint; give the token, or its "
            f"fingerprint as 'memdir token list' shows it (sha256: and {MIN_FINGERPRINT_HEX}+ hex digits)"
        )
    hits = [t for t in tenants.tokens if t.token_sha256.startswith(prefix)]
    if not hits:
        raise MemdirError(f"no token has fingerprint sha256:{prefix}; 'memdir token list' shows them")
    if len(hits) > 1:
        named = ", ".join(f"{t.fingerprint} ({t.tenant})" for t in hits)
        raise MemdirError(f"sha256:{prefix} names {len(hits)} tokens ({named}); give more digits")
    return hits[0]


def _editing(path: str | os.PathLike[str]) -> OsLock:
    """The lock of a read-modify-write of the tenants file, so a concurrent add cannot bring a
    revoked token back (nor a revoke drop a new one)."""
    p = Path(path)
    private_dirs(p.parent)
    lock = p.parent / f".{p.name}.lock"
    os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))  # like the file: owner only
    return OsLock(lock)
