"""The third reliability round's cases for the UI's sign-in, tenants' event streams, the shell's
deep trees and chunk retrieval's reply size (benchmarks/results/2026-12-06-reliability.md,
"Third round"), measured on the code under `--src` (default: this checkout's src/), so the same
script gives the before and after figures:

    .venv/bin/python benchmarks/reliability/ui_tenants_shell_chunks.py
    .venv/bin/python benchmarks/reliability/ui_tenants_shell_chunks.py --src /path/to/old/src

Each case prints one line: what was tried, the outcome, and its seconds. Everything runs on
127.0.0.1 and in temp folders; the shell cases need bubblewrap.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FM = "---\nname: {n}\ndescription: {d}\n---\n"
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "0"},
    },
}


def timed(what: str, case: Callable[[], str]) -> dict[str, object]:
    start = time.perf_counter()
    try:
        outcome = case()
    except BaseException as exc:  # a case that crashes is a figure too
        outcome = f"raised {type(exc).__name__}: {str(exc)[:120]}"
    row = {"case": what, "outcome": outcome, "seconds": round(time.perf_counter() - start, 2)}
    print(f"{what:58} {row['seconds']:>7}s  {outcome}", flush=True)
    return row


def chunk_reply(base: Path) -> str:
    from memdir.search.chunks import build_chunk_store
    from memdir.stream import Turn
    from memdir.tools.profiles import Harness
    from memdir.tools.wiring import open_store

    store = build_chunk_store(open_store(base / "chunks", create=True), [[Turn("S1T1", "Dave", "hello", "")]])
    line = "- Dave took the broken car to the garage in Tokyo [S9T1]\n"
    for n in (2, 3, 4):  # three chunk files of 15 MB written outside the tools: 45 MB in all
        body = FM.format(n=f"chunk-000{n}", d="big") + line * (15_000_000 // len(line))
        (store.root / f"chunks/chunk-000{n}.md").write_text(body)
    harness = Harness(store, "chunk-retrieval")
    harness.call("bm25_chunk_retrieve", {"query": "hello"})  # the index built (not timed below)
    start = time.perf_counter()
    res = harness.call("bm25_chunk_retrieve", {"query": "broken car Tokyo"})
    took = time.perf_counter() - start
    note = " with a cut note" if "chunk cut" in res.text else ""
    return f"reply {len(res.text.encode()):,} bytes{note}, the call {took:.2f} s"


def shell_2200(base: Path) -> str:
    from memdir.tools.profiles import Harness
    from memdir.tools.wiring import open_store

    root = base / "deep2200"
    root.mkdir()
    (root / "a.md").write_text(FM.format(n="a", d="a") + "x\n")
    harness = Harness(open_store(root), "shell")
    make = 'p=$(printf "d/%.0s" $(seq 100)); for i in $(seq 22); do mkdir -p "$p" && cd "$p"; done; echo made'
    outcomes = []
    for command in (make, "echo ok", "echo ok", "echo ok"):
        try:
            r = harness.call("bash", {"command": command})
            outcomes.append("error" if r.is_error else "answered")
        except BaseException as exc:
            outcomes.append(type(exc).__name__)
    return f"the 2,200-level call: {outcomes[0]}; the next 3 calls: {', '.join(outcomes[1:])}"


def shell_rm_1100(base: Path) -> str:
    from memdir.tools.profiles import Harness
    from memdir.tools.wiring import open_store

    root = base / "deep1100"
    root.mkdir()
    flags = os.O_RDONLY | os.O_DIRECTORY
    fd = os.open(root, flags)
    for i in range(1100):  # made by hand, through descriptors (the path is past PATH_MAX)
        name = "deep" if i == 0 else "d"
        os.mkdir(name, dir_fd=fd)
        nfd = os.open(name, flags, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)
    harness = Harness(open_store(root), "shell")
    try:
        harness.call("bash", {"command": "rm -rf deep"})
    except BaseException as exc:
        left = "still there" if (root / "deep").exists() else "gone"
        return f"raised {type(exc).__name__}; the tree is {left}"
    return "the tree is " + ("still there" if (root / "deep").exists() else "gone, all 1,100 levels")


def ui_cookie(base: Path) -> str:
    from starlette.testclient import TestClient

    from memdir.mcp import tenants
    from memdir.store import spec
    from memdir.tools.wiring import open_store
    from memdir.ui.app import build_app
    from memdir.ui.sources import Source, Sources

    root = base / "ui"
    spec.init(open_store(root, create=True))
    token = tenants.add_token(base / "ui-tenants.json", str(root), "manage", tenant="alpha")
    registry = tenants.load(base / "ui-tenants.json")
    app = build_app(Sources([Source("alpha", "alpha", root, tenant="alpha")]), tenants=registry)
    c = TestClient(app, base_url="http://127.0.0.1:8765")
    form = {"content-type": "application/x-www-form-urlencoded"}
    r = c.post("/login", content=f"token={token}".encode(), headers=form, follow_redirects=False)
    cookie = next(iter(c.cookies.values()), "")
    opens = registry.lookup(cookie) is not None
    foreign = TestClient(app, base_url="http://127.0.0.1:8765").post(
        "/login",
        content=f"token={token}".encode(),
        headers={**form, "origin": "http://127.0.0.1:9999"},
        follow_redirects=False,
    )
    return (
        f"sign-in {r.status_code}; the cookie {'IS' if cookie == token else 'is not'} the bearer token"
        f" and {'opens' if opens else 'opens no'} MCP tenant; a cross-origin sign-in: {foreign.status_code}"
    )


def tenant_streams(base: Path, src: Path) -> str:
    import httpx

    from memdir.mcp import tenants
    from memdir.store import spec
    from memdir.tools.wiring import open_store

    tf = base / "tenants.json"
    tokens = []
    for i in range(3):
        root = base / f"t{i}"
        spec.init(open_store(root, create=True))
        tokens.append(tenants.add_token(tf, str(root), "manage-bm25"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve", "--tenants", str(tf), "--http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while True:  # until it listens (a bounded wait: the server is starting)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    return "the server did not start"
                time.sleep(0.1)
        accepted = []
        for t in (0, 1):
            ok = 0
            for _ in range(32):
                r = httpx.post(
                    url, json=INITIALIZE, headers={"Accept": ACCEPT, "Authorization": f"Bearer {tokens[t]}"}
                )
                sid = r.headers["mcp-session-id"]
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(
                    f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {tokens[t]}\r\n"
                    f"Accept: text/event-stream\r\nMcp-Session-Id: {sid}\r\n\r\n".encode()
                )
                s.settimeout(30)
                status = s.recv(64)[9:12]
                if status == b"200":
                    ok += 1
                    held.append(s)
                else:
                    s.close()
            accepted.append(ok)
        body = json.dumps(INITIALIZE).encode()
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {tokens[2]}\r\n"
            f"Content-Type: application/json\r\nAccept: {ACCEPT}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + body
        )
        s.settimeout(30)
        third = s.recv(64)[9:12].decode() or "closed"
        s.close()
        return f"streams held: {accepted[0]} + {accepted[1]} of 32 + 32; a third tenant's initialize: {third}"
    finally:
        for s in held:
            s.close()
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=REPO / "src", help="the memdir source folder to measure")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    import memdir

    print(f"memdir from {Path(memdir.__file__).parent}")
    rows = []
    tmp = tempfile.mkdtemp(prefix="memdir-round3-")
    try:
        base = Path(tmp)
        rows.append(timed("UI sign-in: the cookie, and a cross-origin POST", lambda: ui_cookie(base)))
        rows.append(
            timed(
                "tenants: 2 x 32 event streams, then a third tenant", lambda: tenant_streams(base, args.src)
            )
        )
        rows.append(timed("bash: a 2,200-level tree, then 3 more calls", lambda: shell_2200(base)))
        rows.append(timed("bash: rm -rf of a 1,100-level tree made by hand", lambda: shell_rm_1100(base)))
        rows.append(timed("bm25_chunk_retrieve over 3 chunk files of 15 MB", lambda: chunk_reply(base)))
    finally:  # iteratively: the code measured may have left a tree deeper than rmtree recurses
        from memdir.store.safefs import remove_tree

        parent = os.open(Path(tmp).parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            remove_tree(parent, Path(tmp).name)
        finally:
            os.close(parent)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
