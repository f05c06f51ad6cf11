"""Real HTTP servers for tests: an ASGI app under uvicorn, or a recorded-payload LLM stand-in,
each on a free 127.0.0.1 port in a background thread; or `memdir serve --http` in a child process."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import uvicorn
from tests.waits import ExitedEarly, wait_for_listener, wait_until


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

    def started() -> bool:
        if not thread.is_alive():
            raise RuntimeError("uvicorn ended before it started")
        return bool(server.started)

    wait_until(started, "uvicorn to start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_process(
    args: list[str], env: dict[str, str] | None = None, host: str | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`memdir serve ARGS --http PORT` (on `--host HOST` when given) as a child process; yields
    it and its /mcp URL once it accepts connections, and stops it (SIGTERM, then SIGKILL)
    afterwards."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    full_env = {
        **os.environ,
        "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""),
        **(env or {}),
    }
    for attempt in range(3):
        # A free port may be taken before the child binds it (by a test beside this one under
        # pytest-xdist): the child then exits saying so, and we try another.
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "memdir", "serve", *args, "--http", str(port)]
            + (["--host", host] if host else []),
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            wait_for_listener(proc, port, "memdir serve")
            break
        except ExitedEarly as exc:
            if proc.stderr:
                proc.stderr.close()
            if attempt == 2 or "address already in use" not in exc.stderr.lower():
                raise
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    try:
        name = host or "127.0.0.1"
        yield proc, f"http://{'[' + name + ']' if ':' in name else name}:{port}/mcp"
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()


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


ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


def session(url: str, auth: dict[str, str] | None = None) -> dict[str, str]:
    """Initialize an MCP session over plain HTTP; the headers that address it."""
    auth = auth or {}
    r = httpx2.post(url, json=INITIALIZE, headers={"Accept": ACCEPT, **auth})
    assert r.status_code == 200, r.text
    headers = {"Accept": ACCEPT, "Mcp-Session-Id": r.headers["mcp-session-id"], **auth}
    httpx2.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def tool_call(name: str, args: dict[str, Any], rid: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": args}}
