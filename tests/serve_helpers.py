"""Real HTTP servers for tests: an ASGI app under uvicorn, or a recorded-payload LLM stand-in,
each on a free 127.0.0.1 port in a background thread."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn


@contextlib.contextmanager
def run_asgi(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn; yields the base URL ("http://127.0.0.1:PORT")."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


class RecordedLLM:
    """A stand-in for a provider's HTTP API: replies with recorded payloads in order, and keeps
    every request body so a test can check what the SDK sent (tool results included)."""

    def __init__(self, replies: list[dict[str, Any]], route: str) -> None:
        self.replies = list(replies)
        self.route = route
        self.requests: list[dict[str, Any]] = []

    def handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?")[0].endswith(llm.route):
                    self._reply(404, {"error": f"no route {self.path}"})
                    return
                llm.requests.append(body)
                if not llm.replies:
                    self._reply(500, {"error": "the recorded conversation is over"})
                    return
                self._reply(200, llm.replies.pop(0))

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@contextlib.contextmanager
def run_llm(replies: list[dict[str, Any]], route: str) -> Iterator[tuple[str, RecordedLLM]]:
    llm = RecordedLLM(replies, route)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), llm.handler())
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", llm
    finally:
        httpd.shutdown()
        httpd.server_close()


Factory = Callable[..., Any]
