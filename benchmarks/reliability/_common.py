"""Shared bits of the reliability scripts: repo on sys.path, free ports, a served store."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "src"), str(REPO)]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO / "src") + os.pathsep + e.get("PYTHONPATH", "")
    return e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(argv: list[str], port: int) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve", *argv, "--http", str(port)],
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def serve_http(root: Path, profile: str = "manage") -> tuple[subprocess.Popen[bytes], str]:
    """`memdir serve --root ROOT --profile PROFILE --http PORT` in a child process."""
    return _serve(["--root", str(root), "--profile", profile], free_port())


def serve_tenants(tenants_file: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`memdir serve --tenants FILE --http PORT` in a child process."""
    return _serve(["--tenants", str(tenants_file)], free_port())
