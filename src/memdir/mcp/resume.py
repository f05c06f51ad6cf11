"""Resumable event streams over streamable HTTP: each session's own bounded event store.

The spec (2025-11-25, streamable HTTP) has the server open a POST's event stream with a priming
event (an event id and empty data) and a `retry` field, so that a client whose connection drops
waits that long and resumes with `GET` and `Last-Event-ID`. The SDK sends both, to clients of
that revision or later, once its session manager has an event store; it ships none
(docs/serving.md, "The MCP wire").

Why not one store for the server: the SDK's transport names a POST's stream by the JSON-RPC
request id, which every session numbers from the same start, and a session manager hands the
same store to all its sessions, so a shared store would replay one session's replies into
another's resumed stream (the spec forbids replaying another stream's messages). Here every
session gets a store of its own, gone with the session; it keeps the session's last
EVENTS_KEPT events and drops the oldest while they hold more than BYTES_KEPT (the newest is
always kept). A resumed stream gets the messages after the client's last event and ends with
the reply; from an event no longer kept, or another session's, it is empty and ends at once.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import JSONRPCError, JSONRPCMessage, JSONRPCResponse

RETRY_MS = 1000  # the `retry` field: how long a client waits before it resumes
EVENTS_KEPT = 64  # per session
BYTES_KEPT = 256 * 1024  # per session, as serialized: 64 MiB over server.MAX_SESSIONS sessions


class SessionEvents(EventStore):
    """One session's events, oldest first. Used on the event loop only, and no method awaits
    between reading and changing it, so it needs no lock."""

    def __init__(self, keep: int = EVENTS_KEPT, budget: int = BYTES_KEPT) -> None:
        self.keep = keep
        self.budget = budget
        self.bytes = 0
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None, int]] = OrderedDict()
        self._count = 0
        self._prefix = secrets.token_hex(6)

    @property
    def held(self) -> int:
        """Events kept. (Not `__len__`: the SDK tests a store for truth, and an empty one would
        turn resuming off.)"""
        return len(self._events)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        # The session's random prefix and a counter, never the stream id: a request id is the
        # client's own text, and an SSE `id` line must not carry it (the store maps each id to
        # its stream). The prefix keeps ids apart across sessions too.
        self._count += 1
        event_id = f"{self._prefix}.{self._count}"
        size = 0 if message is None else len(message.model_dump_json(by_alias=True, exclude_unset=True))
        self._events[event_id] = (stream_id, message, size)
        self.bytes += size
        while len(self._events) > 1 and (len(self._events) > self.keep or self.bytes > self.budget):
            self.bytes -= self._events.popitem(last=False)[1][2]
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send what `last_event_id`'s stream sent after it, up to the stream's reply. Returns
        the stream while no reply is stored, for the SDK to go on sending its messages on the
        resumed connection; otherwise None, which ends that connection: once the reply is
        sent (a later request may reuse the id: its events are another stream's), and for an
        id this session does not hold (another session's, or dropped)."""
        found = self._events.get(last_event_id)
        if found is None or _is_reply(found[1]):
            return None
        stream, later = found[0], False
        for event_id, (event_stream, message, _) in list(self._events.items()):
            if later and event_stream == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
                if _is_reply(message):
                    return None
            later = later or event_id == last_event_id
        return stream


def _is_reply(message: JSONRPCMessage | None) -> bool:
    return isinstance(message, JSONRPCResponse | JSONRPCError)


class ResumableSessions(StreamableHTTPSessionManager):
    """The SDK's session manager with priming events and `retry` on, each session with its own
    `SessionEvents`. The SDK reads `event_store` once for each session it admits, so the
    property makes a new store per read; tests/mcp/test_mcp_spec.py holds two sessions' replays
    apart, should that ever change."""

    def __init__(self, app: Server[Any], **options: Any) -> None:
        super().__init__(app, retry_interval=RETRY_MS, **options)

    @property
    def event_store(self) -> EventStore:
        return SessionEvents()

    @event_store.setter
    def event_store(self, _store: EventStore | None) -> None:
        """The SDK's constructor sets it (to None); the property above decides instead."""
