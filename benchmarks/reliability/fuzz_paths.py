"""Path fuzzing at full size: >=100,000 generated hostile calls against every tool through
five transports (Python API, MCP in process, MCP over stdio, MCP over streamable HTTP, and the
multi-tenant HTTP server), while another process keeps planting and flipping symlinks and hard
links that lead out of the root.

Two proofs:
  * audit-hook violations: paths this process touched outside the root, the store's relative
    names under directory descriptors resolved through those descriptors (tests/hostile.py)
    (in-process transports only; the servers are other processes);
  * canaries: files outside the root (and, for tenants, in the other tenant's root) whose
    content must never appear in any result, and whose folders must end byte-identical (this
    one covers the servers too, and what raises no audit event, such as a stat).

Calls come from a seeded generator over the same component lists as the hypothesis strategy
the CI subset uses (tests/hostile.py); `--generator hypothesis` uses hypothesis instead (slow).

    .venv/bin/python benchmarks/reliability/fuzz_paths.py --calls 100000
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from tests.hostile import MARK, AccessAuditor, plant, random_tool_call, tool_calls

from memdir.mcp import tenants
from memdir.mcp.server import build_server
from memdir.store import spec
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

# Which profile serves which tool (one harness / server per profile).
PROFILE_OF = {"toc": "search", "section_read": "search", "bm25_chunk_retrieve": "chunk-retrieval"}
DEFAULT_PROFILE = "manage-bm25"
SHARES = {"python": 0.62, "mcp-inprocess": 0.2, "mcp-stdio": 0.06, "mcp-http": 0.06, "mcp-http-tenants": 0.06}


def collect_hypothesis(n: int) -> list[tuple[str, dict[str, Any]]]:
    from hypothesis import HealthCheck, given, settings

    calls: list[tuple[str, dict[str, Any]]] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(tool_calls())
    def gather(call: tuple[str, dict[str, Any]]) -> None:
        calls.append(call)

    gather()
    return calls


def flipper(root: str, outside: str, stop: Any) -> None:
    """Another process: flips a folder to a link leading out and back, re-plants links."""
    r, o = Path(root), Path(outside)
    while not stop.is_set():
        try:
            d = r / "people"
            if d.is_dir() and not d.is_symlink():
                os.rename(d, r / "people-parked")
                os.symlink(o, d)
                time.sleep(0.0005)  # leave the link in place long enough to race a call
                os.unlink(d)
                os.rename(r / "people-parked", d)
            plant(r, o)
        except OSError:
            pass


def state(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` except derived state (.memdir), as bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(folder).parts
    }


def arena(base: Path, name: str, outside: Path) -> Path:
    root = base / name
    spec.init(open_store(root, create=True))
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text("---\nname: alice\ndescription: a\n---\n# A\n## B\nx\n")
    (root / "chunks").mkdir()
    (root / "chunks" / "c0001.md").write_text(
        "---\nname: c0001\ndescription: chunk 1\n---\n[S1T1] alice: a secret root canary?\n"
    )
    plant(root, outside)
    return root


def _text(r: Any) -> str:
    return "".join(getattr(c, "text", "") for c in r.content)


class Tally:
    def __init__(self) -> None:
        self.r: dict[str, Any] = {"calls": 0, "errors": 0, "violations": 0, "canary_leaks": 0, "seconds": 0.0}
        self.examples: list[dict[str, Any]] = []

    def add(self, name: str, args: dict[str, Any], is_error: bool, text: str, violations: list[Any]) -> None:
        self.r["calls"] += 1
        self.r["errors"] += bool(is_error)
        self.r["violations"] += len(violations)
        leak = MARK in text
        self.r["canary_leaks"] += leak
        if (leak or violations) and len(self.examples) < 20:
            self.examples.append(
                {"tool": name, "args": args, "result": text[:400], "violations": violations[:3]}
            )


def run_python(root: Path, batch: list[Any], auditor: AccessAuditor, tally: Tally, tick: Any) -> None:
    harnesses: dict[str, Harness] = {}
    for name, a in batch:
        prof = PROFILE_OF.get(name, DEFAULT_PROFILE)
        h = harnesses.get(prof) or harnesses.setdefault(prof, Harness(open_store(root), prof))
        auditor.arm([root])
        try:
            out = h.call(name, a)
        finally:
            auditor.disarm()
        tally.add(name, a, out.is_error, out.text, list(auditor.violations))
        tick()


async def run_mcp_clients(
    clients: dict[str, Any],
    batch: list[Any],
    tally: Tally,
    tick: Any,
    audit: tuple[AccessAuditor, Path] | None,
) -> None:
    async with contextlib_async_exit(clients) as opened:
        for name, a in batch:
            client = opened[PROFILE_OF.get(name, DEFAULT_PROFILE)]
            if audit:
                audit[0].arm([audit[1]])
            try:
                r = await client.call_tool(name, a)
            finally:
                if audit:
                    audit[0].disarm()
            tally.add(name, a, bool(r.is_error), _text(r), list(audit[0].violations) if audit else [])
            tick()


class contextlib_async_exit:
    """Open several MCP clients (by profile) and close them all."""

    def __init__(self, targets: dict[str, Any]) -> None:
        self.targets = targets

    async def __aenter__(self) -> dict[str, Any]:
        import contextlib

        self.stack = contextlib.AsyncExitStack()
        await self.stack.__aenter__()
        out = {}
        for prof, target in self.targets.items():
            out[prof] = await self.stack.enter_async_context(Client(target))
        return out

    async def __aexit__(self, *exc: Any) -> None:
        await self.stack.__aexit__(*exc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--generator", choices=("random", "hypothesis"), default="random")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    base = Path(tempfile.mkdtemp(prefix="memdir-fuzz-"))
    outside = base / "outside"
    root = arena(base, "mem", outside)
    # Tenants: A is fuzzed; B's root is another tenant's memory A must never reach. A's root
    # also holds a folder link and a hard link into B's root.
    root_a = arena(base, "tenant-a", outside)
    root_b = arena(base, "tenant-b", base / "outside-b")
    (root_b / "secret.md").write_text(
        f"---\nname: secret\ndescription: tenant B {MARK}\n---\nsecret {MARK}\n"
    )
    os.symlink(root_b, root_a / "link_b")
    os.link(root_b / "secret.md", root_a / "hard-b.md")
    profiles = sorted({DEFAULT_PROFILE, *PROFILE_OF.values()})
    tokens_a = {p: tenants.new_token() for p in profiles}  # tenant A holds one token per profile
    tfile = base / "tenants.json"
    entries = [tenants.TenantToken(tenants.hash_token(t), "a", str(root_a), p) for p, t in tokens_a.items()]
    entries.append(tenants.TenantToken(tenants.hash_token(tenants.new_token()), "b", str(root_b), "manage"))
    tenants.save(tfile, tenants.Tenants(entries))
    watched = {"outside": outside, "outside-b": base / "outside-b", "tenant-b": root_b}
    before = {k: state(v) for k, v in watched.items()}

    t0 = time.monotonic()
    if args.generator == "hypothesis":
        calls = collect_hypothesis(args.calls)
    else:
        rng = random.Random(args.seed)
        calls = [random_tool_call(rng) for _ in range(args.calls)]
    gen_seconds = round(time.monotonic() - t0, 1)
    console.print(f"generated {len(calls)} calls ({args.generator}) in {gen_seconds} s")

    stop = mp.Event()
    flippers = [
        mp.Process(target=flipper, args=(str(r), str(outside), stop), daemon=True) for r in (root, root_a)
    ]
    for f in flippers:
        f.start()
    auditor = AccessAuditor.install()
    results: dict[str, dict[str, Any]] = {}
    examples: dict[str, list[dict[str, Any]]] = {}
    start = 0
    with Progress(console=console) as progress:
        for transport, share in SHARES.items():
            n = int(len(calls) * share) if transport != "mcp-http-tenants" else len(calls) - start
            batch = calls[start : start + n]
            start += n
            task = progress.add_task(transport, total=len(batch))
            tally = Tally()
            tick = lambda task=task: progress.advance(task)  # noqa: E731
            t = time.monotonic()
            if transport == "python":
                run_python(root, batch, auditor, tally, tick)
            elif transport == "mcp-inprocess":
                servers = {p: build_server(Harness(open_store(root), p)) for p in profiles}
                anyio.run(run_mcp_clients, servers, batch, tally, tick, (auditor, root))
            elif transport == "mcp-stdio":
                targets = {
                    p: stdio_client(
                        StdioServerParameters(
                            command=sys.executable,
                            args=["-m", "memdir", "serve", str(root), "--profile", p],
                            env=_common.env(),
                        )
                    )
                    for p in profiles
                }
                anyio.run(run_mcp_clients, targets, batch, tally, tick, None)
            elif transport == "mcp-http":
                procs = {}
                try:
                    for p in profiles:
                        procs[p] = _common.serve_http(root, p)
                    anyio.run(
                        run_mcp_clients, {p: u for p, (_, u) in procs.items()}, batch, tally, tick, None
                    )
                finally:
                    for proc, _ in procs.values():
                        proc.terminate()
            else:
                proc, url = _common.serve_tenants(tfile)
                try:
                    targets = {
                        p: streamable_http_client(
                            url,
                            http_client=httpx2.AsyncClient(
                                headers={"Authorization": f"Bearer {t}"}, timeout=60
                            ),
                        )
                        for p, t in tokens_a.items()
                    }
                    anyio.run(run_mcp_clients, targets, _tenant_batch(batch), tally, tick, None)
                finally:
                    proc.terminate()
            tally.r["seconds"] = round(time.monotonic() - t, 1)
            results[transport] = tally.r
            examples[transport] = tally.examples
    stop.set()
    for f in flippers:
        f.join(10)
    after = {k: state(v) for k, v in watched.items()}
    changed = sorted(
        f"{k}/{name}"
        for k in watched
        for name in set(before[k]) ^ set(after[k])
        | {n for n in before[k].keys() & after[k].keys() if before[k][n] != after[k][n]}
    )
    table = Table(title=f"path fuzzing: {len(calls)} calls, links flipped by another process")
    for col in ("transport", "calls", "error results", "audit violations", "canary leaks", "seconds"):
        table.add_column(col, justify="right")
    for tname, r in results.items():
        audited = tname in ("python", "mcp-inprocess")
        table.add_row(
            tname,
            str(r["calls"]),
            str(r["errors"]),
            str(r["violations"]) if audited else "n/a (other process)",
            str(r["canary_leaks"]),
            str(r["seconds"]),
        )
    console.print(table)
    console.print(f"outside folders and tenant B changed: {changed or 'nothing'}")
    for tname, ex in examples.items():
        for e in ex[:5]:
            console.print(f"[red]{tname}[/]: {e}")
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {
        "calls": len(calls),
        "generator": args.generator,
        "seed": args.seed,
        "generation_seconds": gen_seconds,
        "transports": results,
        "outside_changed": changed,
        "examples": examples,
    }
    (args.out / "fuzz_paths.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False))
    ok = not changed and all(r["violations"] == 0 and r["canary_leaks"] == 0 for r in results.values())
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    shutil.rmtree(base, ignore_errors=True)
    raise SystemExit(0 if ok else 1)


def _tenant_batch(batch: list[Any]) -> list[Any]:
    """Tenant A's calls: the same hostile calls, a fifth of them aimed at B through A's links."""
    out = []
    rng = random.Random(len(batch))
    aimed = ["/memories/link_b/secret.md", "/memories/hard-b.md", "/memories/link_b"]
    for name, a in batch:
        if rng.random() < 0.2:
            a = {k: (rng.choice(aimed) if "path" in k else v) for k, v in a.items()}
        out.append((name, a))
    return out


if __name__ == "__main__":
    main()
