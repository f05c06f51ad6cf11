"""Wire rules of the MCP spec (2025-11-25) that memdir's HTTP server keeps (docs/serving.md):
an unknown tool is a JSON-RPC error (-32602), not a tool result; a POST's event stream opens
with a priming event (an id, empty data, a `retry` field) from which a client that lost the
stream resumes with `Last-Event-ID`, and only ever into its own session's stream.

Each test runs `memdir serve ROOT --http` in a child process on loopback: the SDK's own client
where it shows the behaviour, raw HTTP where the client hides the wire."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from tests.conftest import fm, snapshot

from memdir.mcp import tenants
from memdir.mcp.tenant_app import tenants_app
from serve_helpers import ACCEPT, run_asgi, serve_process, tool_call

NEW = "2025-11-25"  # the first revision with priming events; older clients cannot parse one


def _initialize(version: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }


def events(body: str) -> list[dict[str, str]]:
    """The SSE events of a response body, each as its fields (`id`, `data`, `retry`, ...)."""
    out = []
    for block in re.split(r"\r?\n\r?\n", body):
        fields: dict[str, str] = {}
        for line in re.split(r"\r?\n", block):
            if line and not line.startswith(":"):
                key, _, value = line.partition(":")
                fields[key] = value.removeprefix(" ")
        if fields:
            out.append(fields)
    return out


def open_session(
    url: str, version: str = NEW, auth: dict[str, str] | None = None
) -> tuple[dict[str, str], list[dict[str, str]]]:
    """An initialized session over raw HTTP: the headers that address it (with `auth`'s), and
    the events of the initialize response."""
    r = httpx2.post(url, json=_initialize(version), headers={"Accept": ACCEPT, **(auth or {})})
    assert r.status_code == 200, r.text
    headers = {
        "Accept": ACCEPT,
        "Mcp-Session-Id": r.headers["mcp-session-id"],
        "MCP-Protocol-Version": version,
        **(auth or {}),
    }
    note = httpx2.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert note.status_code == 202, note.text
    return headers, events(r.text)


@pytest.fixture
def search_url(root: Path) -> Iterator[str]:
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text(fm("alice", "Alice", "# Alice\nvegan [S1T2]\n"))
    with serve_process([str(root), "--profile", "search"]) as (_, url):
        yield url


async def test_unknown_tool_is_a_json_rpc_invalid_params_error(root: Path, search_url: str) -> None:
    """A name the server does not list (never heard of, or a write tool of another profile) is
    refused as the spec's protocol error, naming the tool; the store is untouched and the
    session goes on."""
    before = snapshot(root)
    async with Client(search_url, mode="legacy") as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        for name, args in [
            ("no_such_tool", {}),
            ("create", {"path": "/memories/x.md", "file_text": fm("x")}),
            ("delete", {"path": "/memories/people/alice.md"}),
        ]:
            with pytest.raises(MCPError) as refused:
                await client.call_tool(name, args)
            assert refused.value.error.code == INVALID_PARAMS, refused.value.error
            message = refused.value.error.message
            assert message.startswith(f"Unknown tool: {name}") and ", ".join(listed) in message
        r = await client.call_tool("view", {"path": "/memories/people/alice.md"})
        assert not r.is_error and "vegan [S1T2]" in "".join(getattr(c, "text", "") for c in r.content)
    assert snapshot(root) == before


def test_unknown_tool_on_the_wire(search_url: str) -> None:
    """The raw reply: a JSON-RPC error object with the request's id and no `result`."""
    headers, _ = open_session(search_url)
    r = httpx2.post(search_url, json=tool_call("create", {"path": "/memories/x.md"}, rid=7), headers=headers)
    assert r.status_code == 200
    replies = [e["data"] for e in events(r.text) if e.get("data")]
    assert len(replies) == 1
    reply = json.loads(replies[0])
    assert reply["id"] == 7 and "result" not in reply
    assert reply["error"]["code"] == -32602 and reply["error"]["message"].startswith("Unknown tool: create")


def test_post_stream_opens_with_a_priming_event_and_retry(search_url: str) -> None:
    from memdir.mcp.resume import RETRY_MS

    headers, init_events = open_session(search_url)
    for streamed in (
        init_events,
        events(httpx2.post(search_url, json=tool_call("view", {"path": "/memories"}), headers=headers).text),
    ):
        first, *rest = streamed
        assert first.get("id") and first.get("data", "") == "" and first["retry"] == str(RETRY_MS), first
        assert rest and all(e.get("id") and e["data"] for e in rest), rest
        assert len({e["id"] for e in streamed}) == len(streamed)  # ids unique within the session


def test_older_clients_get_no_priming_event(search_url: str) -> None:
    """A client of 2025-06-18 or before parses every event's data as JSON: it gets none."""
    headers, init_events = open_session(search_url, "2025-06-18")
    r = httpx2.post(search_url, json=tool_call("view", {"path": "/memories"}), headers=headers)
    for streamed in (init_events, events(r.text)):
        assert all(e.get("data") for e in streamed) and not any("retry" in e for e in streamed)


def _resume(url: str, headers: dict[str, str], last_event_id: str) -> list[dict[str, str]]:
    """GET with Last-Event-ID: every event of the resumed stream, which ends after the reply."""
    get_headers = {**headers, "Accept": "text/event-stream", "Last-Event-ID": last_event_id}
    r = httpx2.get(url, headers=get_headers, timeout=30)
    assert r.status_code == 200, r.text
    return events(r.text)


def test_resume_replays_the_reply_into_its_own_session_only(root: Path, search_url: str) -> None:
    """Two sessions send the same request id (JSON-RPC ids are per session) for different files.
    Each resumes from its priming event and gets its own reply; an event id of the other
    session replays nothing."""
    (root / "people" / "bob.md").write_text(fm("bob", "Bob", "# Bob\nowns a boat [S2T1]\n"))
    a, _ = open_session(search_url)
    b, _ = open_session(search_url)
    primed = {}
    for name, headers in (("alice", a), ("bob", b)):
        r = httpx2.post(
            search_url, json=tool_call("view", {"path": f"/memories/people/{name}.md"}), headers=headers
        )
        primed[name] = events(r.text)[0]["id"]
    for name, headers, fact in (("alice", a, "vegan [S1T2]"), ("bob", b, "owns a boat [S2T1]")):
        (replay,) = _resume(search_url, headers, primed[name])  # the reply, and the stream ends
        reply = json.loads(replay["data"])
        assert reply["id"] == 2 and fact in reply["result"]["content"][0]["text"], reply
    assert _resume(search_url, a, primed["bob"]) == [] and _resume(search_url, b, primed["alice"]) == []


class DroppingRelay:
    """A TCP relay to the server that, on the connection whose request carries `marker`, passes
    the response on only up to its first JSON-RPC message (the head, and a priming event if
    one came) and then drops the connection, as a network would. Everything else passes whole."""

    def __init__(self, upstream: str, marker: bytes) -> None:
        host, _, port = upstream.removeprefix("http://").partition("/")[0].rpartition(":")
        self.upstream = (host, int(port))
        self.marker = marker
        self.dropped = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/mcp"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # the listener closed: the test is over
            while True:
                client, _ = self.listener.accept()
                server = socket.create_connection(self.upstream)
                marked = threading.Event()
                threading.Thread(target=self._up, args=(client, server, marked), daemon=True).start()
                threading.Thread(target=self._down, args=(server, client, marked), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, marked: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self.marker in data:
                    marked.set()  # before the request reaches the server, so before its reply
                server.sendall(data)
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_WR)

    def _down(self, server: socket.socket, client: socket.socket, marked: threading.Event) -> None:
        held = b""
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if not marked.is_set():
                    client.sendall(data)
                    continue
                held += data
                message = held.find(b"data: {")
                if message >= 0:  # the first JSON-RPC message: pass what came before it, then drop
                    client.sendall(held[: held.rfind(b"\r\n\r\n", 0, message) + 4])
                    self.dropped += 1
                    break
        for sock in (client, server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self.listener.close()


async def test_sdk_client_resumes_a_dropped_stream(search_url: str) -> None:
    """The SDK's client loses a tool call's stream after the priming event; it waits `retry`,
    resumes with Last-Event-ID and gets the reply (without a priming event it could only fail
    the call: "SSE stream ended without a response")."""
    relay = DroppingRelay(search_url, marker=b"alice.md")
    try:
        async with Client(streamable_http_client(relay.url), mode="legacy") as client:
            r = await client.call_tool("view", {"path": "/memories/people/alice.md"})
            assert not r.is_error and "vegan [S1T2]" in "".join(getattr(c, "text", "") for c in r.content)
            assert relay.dropped == 1
            again = await client.call_tool("view", {"path": "/memories"})  # the session goes on
            assert not again.is_error
    finally:
        relay.close()


def test_tenant_server_primes_and_refuses_unknown_tools(root: Path, tmp_path: Path) -> None:
    """The multi-tenant endpoint serves each token through the same server and sessions."""
    tenants_file = tmp_path / "tenants.json"
    token = tenants.add_token(tenants_file, str(root), "search")
    with run_asgi(tenants_app(tenants.load(tenants_file))) as base:
        url = base + "/mcp"
        headers, init_events = open_session(url, auth={"Authorization": f"Bearer {token}"})
        assert init_events[0].get("id") and init_events[0]["data"] == "" and "retry" in init_events[0]
        r = httpx2.post(url, json=tool_call("create", {"path": "/memories/x.md"}), headers=headers)
        first, reply = events(r.text)
        assert first.get("id") and first["data"] == "" and "retry" in first
        assert json.loads(reply["data"])["error"]["code"] == -32602


async def test_session_events_bounded_and_each_stream_ends_at_its_reply() -> None:
    """The store itself: a later request reusing a finished request's id is another stream;
    a dropped event resumes nothing; the bounds hold and the newest event is always kept."""
    from mcp.types import JSONRPCNotification, JSONRPCResponse

    from memdir.mcp.resume import EVENTS_KEPT, SessionEvents

    def reply(rid: int, text: str) -> JSONRPCResponse:
        return JSONRPCResponse(jsonrpc="2.0", id=rid, result={"text": text})

    sent: list[Any] = []

    async def send(event: Any) -> None:
        sent.append(event.message)

    store = SessionEvents()
    first = await store.store_event("2", None)
    progress = JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"progress": 1})
    await store.store_event("2", progress)
    await store.store_event("2", reply(2, "first"))
    second = await store.store_event("2", None)  # the id used again, after the first replied
    assert await store.replay_events_after(first, send) is None and sent == [progress, reply(2, "first")]
    sent.clear()
    assert await store.replay_events_after(second, send) == "2" and sent == []  # no reply yet: live
    await store.store_event("2", reply(2, "second"))
    assert await store.replay_events_after(second, send) is None and sent == [reply(2, "second")]

    for n in range(EVENTS_KEPT):
        await store.store_event(str(n + 10), reply(n + 10, "x"))
    sent.clear()
    assert await store.replay_events_after(first, send) is None and sent == []  # dropped
    assert store.held == EVENTS_KEPT

    small = SessionEvents(budget=1000)
    primed = await small.store_event("1", None)
    await small.store_event("1", reply(1, "a" * 600))
    await small.store_event("2", reply(2, "b" * 5000))
    assert small.held == 1 and small.bytes > small.budget  # the newest stays, alone
    assert await small.replay_events_after(primed, send) is None and sent == []
