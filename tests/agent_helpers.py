"""A local stand-in for a provider's HTTP API: replays recorded payloads, records requests."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class StandIn:
    """Replies, in order, with (status, payload); each request is kept in `seen`."""

    replies: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> StandIn:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, payload = outer.replies.pop(0) if outer.replies else (500, {"error": "no reply left"})
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status == 429:
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def new_store(path: Path) -> Any:
    from memdir.tools.wiring import open_store

    return open_store(path, create=True, init=True)


def snapshot(store: Any) -> dict[str, str]:
    """{memory path: text} of every visible file: the whole store as one comparable value."""
    return {e.path.text: e.disk.read_text(encoding="utf-8") for e in store.files(suffix="")}
