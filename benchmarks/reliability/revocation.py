"""How long a running server goes on accepting a revoked token (benchmarks/results/2026-12-06-reliability.md,
"Fourth round"), and that no other tenant notices.

One `memdir serve --tenants FILE --http PORT` and one `memdir ui --tenants FILE` process, two
tenants. Tenant beta opens an MCP session, an event stream (GET /mcp) and a UI sign-in before
the first trial and keeps them to the end, calling a tool through that one session every 50 ms
throughout. Each trial adds a token for tenant alpha (`tenants.add_token`, the code of `memdir
token add`), waits until both servers accept it, opens an MCP session and a UI sign-in with it,
then revokes it (`tenants.revoke`, the code of `memdir token revoke`) and, from the moment the
rewritten file is in place, polls both servers every 10 ms, each from its own thread, until the
MCP session gets 401 and the UI sign-in is sent back to /login (303). The latency is that time.

    .venv/bin/python benchmarks/reliability/revocation.py --trials 20

It fails (exit 1) when a revocation takes longer than --target seconds, or when beta's session
saw anything but 200 from its one session, or its event stream or sign-in ended.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
import httpx2
from tests.serve_helpers import ACCEPT, INITIALIZE, tool_call

from memdir.mcp import tenants

VIEW = tool_call("view", {"path": "/memories"})
FORM = {"content-type": "application/x-www-form-urlencoded"}


def posted(url: str, body: dict[str, object], headers: dict[str, str]) -> int:
    """The status of one POST; 0 when nothing answers (the server not listening yet)."""
    try:
        return httpx2.post(url, json=body, headers=headers, timeout=30).status_code
    except httpx2.TransportError:
        return 0


def mcp_session(url: str, token: str) -> dict[str, str]:
    auth = {"Accept": ACCEPT, "Authorization": f"Bearer {token}"}
    r = httpx2.post(url, json=INITIALIZE, headers=auth, timeout=30)
    r.raise_for_status()
    headers = {**auth, "Mcp-Session-Id": r.headers["mcp-session-id"]}
    httpx2.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=30
    )
    return headers


def ui_sign_in(base: str, token: str) -> httpx2.Client | None:
    client = httpx2.Client(base_url=base, timeout=30, follow_redirects=False)
    if client.post("/login", content=f"token={token}".encode(), headers=FORM).status_code != 303:
        client.close()
        return None
    return client


def until(check: Callable[[], object], what: str, deadline_s: float = 60.0) -> float:
    """Poll `check` every 10 ms until true; the seconds it took (a hang past `deadline_s` fails)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > deadline_s:
            raise RuntimeError(f"gave up waiting for {what}")
        time.sleep(0.01)
    return time.monotonic() - start


class Beta:
    """The other tenant: one MCP session called every 50 ms, its event stream, its UI sign-in."""

    def __init__(self, url: str, ui: str, token: str) -> None:
        self.url, self.headers = url, mcp_session(url, token)
        self.session_id = self.headers["Mcp-Session-Id"]
        client = ui_sign_in(ui, token)
        assert client is not None, "beta could not sign in to the UI"
        self.ui = client
        self.calls = 0
        self.statuses: dict[int, int] = {}
        self.stream_ended = threading.Event()
        self.stop = threading.Event()
        self._threads = [threading.Thread(target=f, daemon=True) for f in (self._call, self._stream)]
        for t in self._threads:
            t.start()

    def _call(self) -> None:
        while not self.stop.is_set():
            status = httpx2.post(self.url, json=VIEW, headers=self.headers, timeout=30).status_code
            self.statuses[status] = self.statuses.get(status, 0) + 1
            self.calls += 1
            time.sleep(0.05)

    def _stream(self) -> None:
        try:
            get = {**self.headers, "Accept": "text/event-stream"}
            with httpx2.stream("GET", self.url, headers=get, timeout=httpx2.Timeout(30, read=None)) as r:
                for _ in r.iter_bytes():
                    if self.stop.is_set():
                        return
        except httpx2.HTTPError:
            pass
        if not self.stop.is_set():
            self.stream_ended.set()

    def close(self) -> None:
        self.stop.set()
        self._threads[0].join(30)


def trial(url: str, ui: str, file: Path, alpha: Path, n: int) -> tuple[float, float]:
    """One token added, used on both servers, revoked: (MCP seconds, UI seconds) until refused."""
    token = tenants.add_token(file, str(alpha), "search", tenant="alpha", label=f"trial {n}")
    auth = {"Accept": ACCEPT, "Authorization": f"Bearer {token}"}
    until(lambda: posted(url, INITIALIZE, auth) == 200, "the new token on the MCP server")
    headers = mcp_session(url, token)
    signed: list[httpx2.Client] = []

    def sign_in() -> bool:
        client = ui_sign_in(ui, token)
        if client is not None:
            signed.append(client)
        return client is not None

    until(sign_in, "the new token on the UI")
    client = signed[0]
    opened = (client.get("/").status_code, posted(url, VIEW, headers))
    assert opened == (307, 200), f"the new token opened {opened}"
    taken: dict[str, float] = {}
    go = threading.Event()

    def mcp_refused() -> None:
        go.wait()
        taken["mcp"] = until(lambda: posted(url, VIEW, headers) == 401, "the MCP server to refuse it")

    def ui_refused() -> None:
        go.wait()
        taken["ui"] = until(lambda: client.get("/").status_code == 303, "the UI to refuse the sign-in")

    pollers = [threading.Thread(target=f) for f in (mcp_refused, ui_refused)]
    for p in pollers:
        p.start()
    tenants.revoke(file, token)  # the file is replaced when this returns
    go.set()
    for p in pollers:
        p.join()
    client.close()
    return taken["mcp"], taken["ui"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--target", type=float, default=1.0, help="seconds a revocation may take at most")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    ap.add_argument("--log", type=Path, default=None, help="keep the servers' stderr in this file")
    args = ap.parse_args()
    from memdir.api.memory import Memory

    with tempfile.TemporaryDirectory(prefix="memdir-revocation-") as tmp:
        base = Path(tmp)
        for name in ("alpha", "beta"):
            with Memory(base / name) as mem:
                mem.call("create", {"path": "/memories/notes.md", "file_text": f"---\nname: notes\n"
                                    f"description: {name}'s notes\n---\n- {name} likes tea\n"})  # fmt: skip
        file = base / "tenants.json"
        beta_token = tenants.add_token(file, str(base / "beta"), "search", tenant="beta")
        log_path = args.log or base / "servers.log"  # the servers' stderr
        log = open(log_path, "wb")  # noqa: SIM115 (read at the end)
        port = _common.free_port()
        serve = subprocess.Popen(
            [sys.executable, "-m", "memdir", "serve", "--tenants", str(file), "--http", str(port)],
            env=_common.env(),
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        url = f"http://127.0.0.1:{port}/mcp"
        until(lambda: serve.poll() is not None or posted(url, INITIALIZE, {"Accept": ACCEPT}) == 401,
              "memdir serve to listen")  # fmt: skip
        if serve.poll() is not None:
            raise SystemExit(f"memdir serve exited: {log_path.read_text()[-2000:]}")
        ui_proc = subprocess.Popen(
            [sys.executable, "-m", "memdir", "ui", "--tenants", str(file), "--port", "0"],
            env={**_common.env(), "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=log,
        )
        try:
            assert ui_proc.stdout is not None
            ui = ui_proc.stdout.readline().decode().strip()
            beta = Beta(url, ui, beta_token)
            mcp_s: list[float] = []
            ui_s: list[float] = []
            for n in range(1, args.trials + 1):
                mcp, on_ui = trial(url, ui, file, base / "alpha", n)
                mcp_s.append(mcp)
                ui_s.append(on_ui)
                print(
                    f"trial {n:>3}: serve --tenants {mcp * 1e3:7.1f} ms, ui --tenants {on_ui * 1e3:7.1f} ms"
                )
            beta.close()
            same = httpx2.post(url, json=VIEW, headers=beta.headers, timeout=30).status_code
            beta_ui = beta.ui.get("/s/beta/tree").status_code
        finally:
            for proc in (serve, ui_proc):
                proc.terminate()
                proc.wait(30)
            log.close()
        errors = [line for line in log_path.read_text(errors="replace").splitlines()
                  if "Traceback" in line or "Error" in line]  # fmt: skip
    record = {
        "trials": args.trials,
        "serve --tenants": _common.stats_ms(mcp_s) | {"max_ms": max(mcp_s) * 1000},
        "ui --tenants": _common.stats_ms(ui_s) | {"max_ms": max(ui_s) * 1000},
        "beta calls": beta.calls,
        "beta statuses": beta.statuses,
        "beta session at end": same,
        "beta event stream ended": beta.stream_ended.is_set(),
        "beta UI page at end": beta_ui,
        "server errors logged": errors[:10],
        "machine": _common.machine(),
        "load average": os.getloadavg(),
    }
    for name in ("serve --tenants", "ui --tenants"):
        s = record[name]
        print(f"{name}: median {s['median_ms']:.0f} ms, p90 {s['p90_ms']:.0f} ms, max {s['max_ms']:.0f} ms "
              f"over {s['n']} revocations")  # fmt: skip
    print(f"beta: {beta.calls} calls through one session, statuses {beta.statuses}; at end {same}; "
          f"event stream ended: {beta.stream_ended.is_set()}; UI page {beta_ui}")  # fmt: skip
    _common.write_json(args.out / "revocation.json", record)
    slow = max(max(mcp_s), max(ui_s)) > args.target
    beta_hurt = set(beta.statuses) != {200} or same != 200 or beta.stream_ended.is_set() or beta_ui != 200
    if slow or beta_hurt or errors:
        print(f"FAILED: slow={slow} other tenant disturbed={beta_hurt} server errors={len(errors)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
