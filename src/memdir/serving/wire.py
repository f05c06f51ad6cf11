"""What the ingress hands a tenant's replica and gets back: one HTTP exchange as plain data.

The ingress has read and authenticated the request; the replica never sees the token (only
its hash, which names the token's server there) and never needs the tenants file. Both travel
between Ray actors, so they are dataclasses of bytes and strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Headers = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class Grant:
    """What the token opens, as the tenants file said when the ingress looked it up."""

    tenant: str
    remote: str
    profile: str
    token_sha256: str
    reorganize: bool = False


@dataclass(frozen=True)
class Forwarded:
    """A POST to /mcp: its headers (the bearer token left out) and whole body."""

    grant: Grant
    headers: Headers
    body: bytes


@dataclass
class Reply:
    status: int
    headers: Headers = field(default_factory=list)
    body: bytes = b""
