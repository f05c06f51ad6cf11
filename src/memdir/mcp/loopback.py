"""What counts as this machine's loopback, and the DNS-rebinding guard of a server bound there.

One rule answers two questions: may a server with no authentication listen on an address
(`memdir ui` always, `memdir serve ROOT` unless told), and does a request name this machine? A
page elsewhere whose DNS name is rebound to 127.0.0.1 reaches a loopback server with its own
name as Host (and its own origin as Origin), so a server on loopback answers only requests whose
Host names loopback. The rule was two rules once: 127.0.0.2 and `0:0:0:0:0:0:0:1` could listen
with no token, but the Host check was on only for three spellings, so a server on them
answered a rebound page (docs/serving.md, Network addresses).
"""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine's loopback interface: `localhost`, or an address of
    the loopback range in any spelling `ipaddress` reads (127.0.0.2, `[0:0:0:0:0:0:0:1]`)."""
    name = host.strip().strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host of a Host header (`name`, `name:port`, `[v6]:port`), without its port."""
    value = header.strip()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def origin_host(origin: str) -> str:
    """The host an Origin header names ("" for `null` or a malformed one)."""
    try:
        return urlsplit(origin.strip()).hostname or ""
    except ValueError:
        return ""


class RebindingGuard:
    """ASGI middleware for a server bound to loopback: a request whose Host does not name
    loopback gets `host_status` (the MCP SDK's 421 for the MCP servers; the UI's 400), and, when
    `check_origin`, one whose Origin names another host gets 403, before the app sees either."""

    def __init__(self, app: ASGIApp, host_status: int = 421, check_origin: bool = True) -> None:
        self.app = app
        self.host_status = host_status
        self.check_origin = check_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            wanted = (b"host", b"origin")
            headers = {k: v.decode("latin-1") for k, v in scope.get("headers", []) if k in wanted}
            host = headers.get(b"host", "")
            if not is_loopback(host_name(host)):
                await _refuse(send, self.host_status, f"Host {host[:80]!r}")
                return
            origin = headers.get(b"origin")
            if self.check_origin and origin is not None and not is_loopback(origin_host(origin)):
                await _refuse(send, 403, f"Origin {origin[:80]!r}")
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, named: str) -> None:
    reason = (
        f"this server is on a loopback address and answers only requests that name one "
        f"(127.0.0.1, ::1, localhost); the request's {named} names another host"
    )
    body = json.dumps({"error": "invalid_host", "error_description": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
