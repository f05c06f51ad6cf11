"""`memdir serve --tenants --ray` under load on a local Ray cluster: many tenants, 1 and then 2
tenant replicas, one replica killed mid-load; whether any acknowledged write went missing.

    python benchmarks/ray_serve_load.py [--tenants 1000] [--replicas 1 2] [--workers 16]
        [--seconds 180] [--kill-at 0.5] [--cpus 4] [--dir DIR] [--out runs] [--quick]

Setup: one small store (a few notes) synced to a bare repository, copied to `--tenants` roots
and remotes (each root remembering its own remote, as `memdir sync ROOT REMOTE` leaves it), and
one token each. Then, for each replica count, on a fresh deployment (so every tenant starts
cold and is cloned from its remote on first use):

- the load, for `--seconds`: `--workers` clients at once, each again and again picks a tenant
  at random among all of them, writes a new note (`create`) and reads it back (`view`), one
  JSON-RPC POST per call (the servers are stateless, so no session to open). Most picks find
  the tenant cold (not loaded on any replica), so most writes pay a clone as well as a sync;
- at `--kill-at` of the time, one tenant replica is killed (`ray.kill`); Serve replaces it, and
  calls that were on it fail (503: not acknowledged) and are not retried;
- after: every acknowledged write is looked up in its tenant's remote (read by git, not by
  memdir), and every read that followed an acknowledged write is checked to have seen it.

It prints writes acknowledged, found after, lost (acknowledged, not in the remote: the target
is 0), reads that missed an acknowledged write (target 0), failed calls, calls/s, p50 and p99
ms per call, and the ratio of 2 replicas to 1. On a machine of 2 cores the replicas share
them with the proxy, the ingress, git and the client, so the ratio says what the design costs
here, not how it scales (benchmarks/results/2026-12-06-ray-serve.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from _common import REPO, free_port, write_json

from memdir.mcp.tenants import Tenants, TenantToken, hash_token, new_token, save
from memdir.store import spec
from memdir.tools.wiring import open_store, release_store

ACCEPT = "application/json, text/event-stream"


def _note(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {body}\n---\n- {body} [S1T1]\n"


def build(base: Path, n: int) -> Path:
    """`n` tenants from one template store and remote; the tenants file's path."""
    from memdir.sync import sync

    template, remote = base / "template", base / "template.git"
    store = open_store(template, create=True)
    spec.init(store)
    with store.step("seed"):
        for i in range(5):
            store.create(f"/memories/people/p{i}.md", _note(f"p{i}", f"person {i} likes tea number {i}"))
    release_store(store)
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    sync(template, str(remote))
    entries = []
    for i in range(n):
        root, bare = base / "roots" / f"t{i:04d}", base / "remotes" / f"t{i:04d}.git"
        shutil.copytree(template, root, symlinks=True)
        shutil.copytree(remote, bare, symlinks=True)
        git_dir = root / ".memdir" / "sync.git"
        subprocess.run(["git", f"--git-dir={git_dir}", "config", "remote.origin.url", str(bare)], check=True)
        token = new_token()
        entries.append((token, TenantToken(hash_token(token), f"t{i:04d}", str(root), "manage")))
    tf = base / "tenants.json"
    save(tf, Tenants([e for _, e in entries]))
    (base / "tokens.json").write_text(json.dumps({e.tenant: tok for tok, e in entries}))
    return tf


@dataclass
class Load:
    latencies: list[float] = field(default_factory=list)
    acked: dict[str, list[str]] = field(default_factory=dict)  # tenant -> paths acknowledged
    unacked: int = 0
    failed: int = 0
    read_missed: int = 0  # a read answered without a write acknowledged before it
    reads_failed: int = 0  # a read not answered (503 while a replica is replaced)
    calls: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)  # the first few tool errors, as the model reads them


async def _call(
    http: httpx2.AsyncClient, url: str, token: str, name: str, args: dict[str, Any], load: Load
) -> str | None:
    """The text of the call's successful result; None when the call failed (no reply, an HTTP
    error such as 503 while a replica is replaced, or a tool error)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}}
    headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT, "MCP-Protocol-Version": "2025-06-18"}
    started = time.perf_counter()
    try:
        r = await http.post(url, json=body, headers=headers)
    except httpx2.HTTPError as exc:
        load.errors[type(exc).__name__] = load.errors.get(type(exc).__name__, 0) + 1
        return None
    finally:
        load.calls += 1
    load.latencies.append(time.perf_counter() - started)
    if r.status_code != 200:
        load.errors[str(r.status_code)] = load.errors.get(str(r.status_code), 0) + 1
        return None
    result = r.json().get("result", {})
    text = "".join(b.get("text", "") for b in result.get("content", []))
    if result.get("isError"):
        load.errors["tool error"] = load.errors.get("tool error", 0) + 1
        if len(load.samples) < 5:
            load.samples.append(f"{name}: {text[:300]}")
        return None if name != "view" else text
    return text


async def run_load(
    url: str, tokens: dict[str, str], seconds: float, workers: int, kill_at: float, kill: Any, tag: str
) -> Load:
    """`tag` names the phase in every note's path, so a later phase never writes a path an earlier
    one made (a `create` there is refused as existing, and counted as not acknowledged)."""
    load = Load()
    names = sorted(tokens)
    started = time.monotonic()
    serial = iter(range(10**9))

    async def worker(http: httpx2.AsyncClient) -> None:
        while time.monotonic() - started < seconds:
            tenant, n = random.choice(names), next(serial)
            path = f"/memories/notes/{tag}-{n}.md"
            note = _note(f"{tag}-{n}", f"marker {tenant} {n}")
            if (
                await _call(http, url, tokens[tenant], "create", {"path": path, "file_text": note}, load)
                is not None
            ):
                load.acked.setdefault(tenant, []).append(path)
                seen = await _call(http, url, tokens[tenant], "view", {"path": path}, load)
                if seen is None:
                    load.reads_failed += 1
                elif f"marker {tenant} {n}" not in seen:
                    load.read_missed += 1
            else:
                load.unacked += 1

    async def killer() -> None:
        if kill_at < 1:
            await asyncio.sleep(kill_at * seconds)
            await asyncio.to_thread(kill)

    limits = httpx2.Limits(max_connections=workers, max_keepalive_connections=workers)
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(300), limits=limits) as http:
        await asyncio.gather(killer(), *(worker(http) for _ in range(workers)))
    return load


def in_remote(remote: Path, path: str) -> bool:
    rel = path.removeprefix("/memories/")
    done = subprocess.run(["git", f"--git-dir={remote}", "cat-file", "-e", f"main:{rel}"], check=False)
    return done.returncode == 0


def kill_one_replica() -> str:
    import ray

    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
    replicas = sorted(n for n in names if n.startswith("SERVE_REPLICA::memdir#tenants#"))
    victim = random.choice(replicas)
    ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
    return victim


def phase(base: Path, tf: Path, replicas: int, port: int, args: argparse.Namespace) -> dict[str, Any]:
    from ray import serve

    from memdir.serving.ray_app import APP, application, deploy

    work = base / f"replicas-{replicas}"
    work.mkdir()
    deploy(application(str(tf), replicas=replicas, workdir=str(work)), "127.0.0.1", port)
    tokens: dict[str, str] = json.loads((base / "tokens.json").read_text())
    victims: list[str] = []

    def kill() -> None:
        victims.append(kill_one_replica())

    started = time.perf_counter()
    load = asyncio.run(
        run_load(
            f"http://127.0.0.1:{port}/mcp",
            tokens,
            args.seconds,
            args.workers,
            args.kill_at,
            kill,
            f"r{replicas}",
        )
    )
    seconds = time.perf_counter() - started
    serve.delete(APP)
    found = sum(in_remote(base / "remotes" / f"{t}.git", p) for t, ps in load.acked.items() for p in ps)
    acked = sum(len(ps) for ps in load.acked.values())
    lat = sorted(load.latencies)
    return {
        "replicas": replicas,
        "tenants": len(tokens),
        "calls": load.calls,
        "seconds": round(seconds, 1),
        "calls_per_s": round(load.calls / seconds, 2),
        "p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
        "p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1) if lat else None,
        "writes_acknowledged": acked,
        "writes_found_after": found,
        "lost": acked - found,
        "reads_missing_an_acknowledged_write": load.read_missed,
        "writes_not_acknowledged": load.unacked,
        "reads_failed": load.reads_failed,
        "errors": load.errors,
        "killed": victims,
        "tool_errors": load.samples,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tenants", type=int, default=1000)
    ap.add_argument("--replicas", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=180.0, help="length of each phase's load")
    ap.add_argument(
        "--kill-at",
        type=float,
        default=0.5,
        help="share of the calls done when a replica is killed (1: none)",
    )
    ap.add_argument("--cpus", type=int, default=4, help="the local cluster's logical CPUs")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=REPO / "runs")
    ap.add_argument("--quick", action="store_true", help="20 tenants, 4 workers, 40 s a phase")
    args = ap.parse_args()
    if args.quick:
        args.tenants, args.workers, args.seconds = 20, 4, 40.0
    import ray

    base = Path(tempfile.mkdtemp(prefix="ray-serve-load-", dir=args.dir))
    t0 = time.perf_counter()
    tf = build(base, args.tenants)
    print(f"setup: {args.tenants} tenants in {time.perf_counter() - t0:.1f} s", flush=True)
    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    rows = []
    port = free_port()  # Serve's proxy keeps the port it started on for the cluster's life
    try:
        for n in args.replicas:
            row = phase(base, tf, n, port, args)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        ray.shutdown()  # the local cluster with it (Serve's own shutdown waited minutes under load)
    if len(rows) >= 2 and rows[0]["calls_per_s"]:
        ratio = rows[-1]["calls_per_s"] / rows[0]["calls_per_s"]
        print(f"calls/s, {rows[-1]['replicas']} replicas over {rows[0]['replicas']}: {ratio:.2f}")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    out = args.out / f"ray-serve-load-{stamp}"
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "summary.json", {"args": {k: str(v) for k, v in vars(args).items()}, "phases": rows})
    shutil.rmtree(base, ignore_errors=True)
    print(f"wrote {out / 'summary.json'}")
    sys.exit(0 if all(r["lost"] == 0 and r["reads_missing_an_acknowledged_write"] == 0 for r in rows) else 1)


if __name__ == "__main__":
    main()
