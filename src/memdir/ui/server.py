"""Serving the UI: on a loopback address only, on a socket bound before uvicorn starts, so
`--port 0` works and the printed URL names the port really bound."""

from __future__ import annotations

import shutil
import signal
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import uvicorn
from starlette.applications import Starlette
from uvicorn.config import STARTUP_FAILURE

from memdir.errors import MemdirError
from memdir.mcp.http_limits import config
from memdir.mcp.loopback import is_loopback
from memdir.mcp.tenants import Tenants
from memdir.mcp.tenants_live import LiveTenants
from memdir.tokens import encoding
from memdir.ui.app import build_app
from memdir.ui.sources import Sources

DEFAULT_PORT = 8765


def loopback(host: str) -> str:
    """`host` if it names this machine's loopback interface; refuse anything else."""
    name = "127.0.0.1" if host == "localhost" else host.strip("[]")
    if not is_loopback(host):
        raise MemdirError(
            f"memdir ui serves on loopback only (127.0.0.1 or ::1), not {host!r}: it shows a whole "
            "memory without a password; to reach it from elsewhere, use an SSH tunnel to the port"
        )
    return name


def bind(host: str, port: int) -> socket.socket:
    name = loopback(host)
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((name, port))
    except OSError as exc:
        sock.close()
        raise MemdirError(f"cannot listen on {name}:{port} ({exc.strerror}); choose another --port") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


def warm_up(app: Starlette) -> None:
    """Load what every first page needs before the URL is printed: the tokenizer (the core
    gauge counts tokens; loading its ranks takes about a second) and the compiled templates."""
    encoding()
    env = app.state.ui.templates.env
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)


def serve(
    sources: Sources,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    runs: Path | None = None,
    tenants: Tenants | LiveTenants | None = None,
    announce: Callable[[str], None] = lambda url: print(url, flush=True),
) -> None:
    """Serve until SIGINT or SIGTERM, then remove the server's private folder.

    uvicorn stops on SIGTERM and then raises the signal again for the handler it found, so
    with the default one the process died there, before any `finally` or `atexit` ran, and
    the private folder (past snapshots, plots) stayed behind. Here that handler raises
    SystemExit, so the folder is removed on the way out."""
    scratch = Path(tempfile.mkdtemp(prefix="memdir-ui-"))
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        sock = bind(host, port)
        app = build_app(sources, runs=runs, tenants=tenants, scratch=scratch)
        warm_up(app)
        server = uvicorn.Server(config(app, sock.getsockname()[0], sock.getsockname()[1]))
        announce(url_of(sock))
        server.run(sockets=[sock])
        if not server.started:
            sys.exit(STARTUP_FAILURE)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)
