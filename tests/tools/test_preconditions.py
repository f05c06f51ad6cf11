"""Optimistic concurrency (docs/tools.md): view reports a file's sha256; every writer but
create takes it back as `expected_sha256`, and a stale one is refused, naming both hashes,
with the file left byte-identical. Then writers race on one file in real processes: through
the Python tools, over MCP (HTTP and stdio, real client) and through the multi-tenant server."""

from __future__ import annotations

import asyncio
import hashlib
import json
import multiprocessing as mp
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from tests.conftest import fm, snapshot

from memdir.mcp import tenants
from memdir.mcp.tenant_app import tenants_app
from memdir.tools.profiles import Harness
from memdir.tools.text import numbered
from memdir.tools.wiring import open_store
from race_workers import (
    RACE_FILE,
    Reply,
    check_race,
    mcp_http_writer,
    mcp_reply,
    python_writer,
    race,
    seed,
)
from serve_helpers import run_asgi, serve_process

BODY = "# Alice\n## Diet\n- alice | diet: vegan (since 2023-05-02) [S6T5]\n"
ALICE = fm("alice", "Alice: diet", BODY)
PATH = "/memories/people/alice.md"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def alice(manage: Harness, root: Path) -> Path:
    assert not manage.call("create", {"path": PATH, "file_text": ALICE}).is_error
    return root / "people" / "alice.md"


# -- view reports the hash; its text keeps the study's contract ---------------------------
def test_view_reports_the_sha256_of_the_exact_bytes(manage: Harness, alice: Path) -> None:
    r = manage.call("view", {"path": PATH})
    lines = ALICE.split("\n")[:-1]
    assert r.text == f"{PATH} ({len(lines)} lines)\n{numbered(lines, 1)}"  # the study's text, unchanged
    assert r.data == {
        "kind": "file",
        "path": PATH,
        "sha256": sha(alice.read_bytes()),
        "lines": len(lines),
        "bytes": len(alice.read_bytes()),
        "start_line": 1,
        "end_line": len(lines),
    }
    shown = manage.call("view", {"path": PATH, "show_sha256": True})
    assert shown.text == f"{r.text}\nsha256: {sha(alice.read_bytes())}"  # only when asked
    part = manage.call("view", {"path": PATH, "start_line": 5, "end_line": 6})
    assert part.text.startswith(f"{PATH} (lines 5-6 of 7)\n") and "sha256" not in part.text
    assert part.data is not None and (part.data["start_line"], part.data["end_line"]) == (5, 6)
    assert part.data["sha256"] == r.data["sha256"]  # the whole file's hash, whatever range is shown


def test_view_of_a_folder_lists_its_entries_as_data(manage: Harness, alice: Path) -> None:
    r = manage.call("view", {"path": "/memories/people"})
    assert r.data is not None and r.data["kind"] == "directory"
    assert r.data["entries"] == [
        {"path": PATH, "kind": "file", "size": len(ALICE.encode()), "description": "Alice: diet"}
    ]
    assert "[description: Alice: diet]" in r.text and "sha256" not in r.text


# -- a stale hash is refused, naming both hashes; the file stays byte-identical ------------
STALE_CALLS = [
    ("str_replace", {"path": PATH, "old_str": "vegan", "new_str": "vegetarian"}),
    (
        "insert",
        {"path": PATH, "insert_line": 7, "insert_text": "- alice | pet: beagle (since 2023-06-01) [S7T2]"},
    ),
    ("delete", {"path": PATH}),
    ("rename", {"old_path": PATH, "new_path": "/memories/people/alice-b.md"}),
]


@pytest.mark.parametrize(("tool", "args"), STALE_CALLS, ids=[t for t, _ in STALE_CALLS])
def test_a_stale_write_is_refused_and_changes_nothing(
    manage: Harness, root: Path, alice: Path, tool: str, args: dict[str, Any]
) -> None:
    read = manage.call("view", {"path": PATH}).data
    assert read is not None
    alice.write_bytes(alice.read_bytes() + b"edited outside the tools\n")  # the disk is the truth
    before = snapshot(root)
    current = sha(alice.read_bytes())
    r = manage.call(tool, {**args, "expected_sha256": read["sha256"]})
    assert r.is_error and r.data is None
    assert r.text == (
        f"Error: {PATH} has changed since you read it: expected_sha256 is {read['sha256']}, but the "
        f"file's sha256 is now {current}. Nothing was written; view {PATH} again and redo the edit "
        "on its current text."
    )
    assert r.meter.writes == 0 and snapshot(root) == before
    ok = manage.call(tool, {**args, "expected_sha256": current.upper()})  # either case of hex
    assert not ok.is_error, ok.text
    assert snapshot(root) != before


def test_the_stale_refusal_comes_before_any_other_check(manage: Harness, root: Path, alice: Path) -> None:
    """A caller whose view is stale is told to re-read, not that its old_str is missing."""
    before = snapshot(root)
    r = manage.call(
        "str_replace", {"path": PATH, "old_str": "absent", "new_str": "x", "expected_sha256": "0" * 64}
    )
    assert r.is_error and "has changed since you read it" in r.text and snapshot(root) == before


def test_each_write_returns_the_new_hash_so_edits_chain(manage: Harness, alice: Path) -> None:
    h = manage.call("view", {"path": PATH}).data["sha256"]  # type: ignore[index]
    for i in range(3):
        r = manage.call(
            "insert", {"path": PATH, "insert_line": 7 + i, "insert_text": f"line {i}", "expected_sha256": h}
        )
        assert not r.is_error and r.data is not None, r.text
        assert r.data["sha256"] == sha(alice.read_bytes()) and r.data["bytes"] == len(alice.read_bytes())
        h = r.data["sha256"]
    r = manage.call(
        "str_replace", {"path": PATH, "old_str": "line 0", "new_str": "line zero", "expected_sha256": h}
    )
    assert not r.is_error and r.data == {
        "path": PATH,
        "sha256": sha(alice.read_bytes()),
        "lines": 10,
        "bytes": len(alice.read_bytes()),
    }
    moved = manage.call(
        "rename",
        {"old_path": PATH, "new_path": "/memories/people/ally.md", "expected_sha256": r.data["sha256"]},
    )
    assert not moved.is_error and moved.data is not None and moved.data["sha256"] == r.data["sha256"]


@pytest.mark.parametrize(
    "value", ["abc", "0" * 63, "0" * 65, "g" * 64, " " + "0" * 63 + "x", "sha256:" + "0" * 64]
)
def test_a_malformed_hash_is_refused(manage: Harness, root: Path, alice: Path, value: str) -> None:
    before = snapshot(root)
    r = manage.call(
        "str_replace", {"path": PATH, "old_str": "vegan", "new_str": "x", "expected_sha256": value}
    )
    assert r.is_error and "'expected_sha256' must be the 64 hex digits of a sha256" in r.text, r.text
    assert snapshot(root) == before


def test_an_empty_hash_is_no_hash(manage: Harness, alice: Path) -> None:
    r = manage.call(
        "str_replace", {"path": PATH, "old_str": "vegan", "new_str": "raw", "expected_sha256": ""}
    )
    assert not r.is_error, r.text


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("delete", {"path": "/memories/people"}),
        ("rename", {"old_path": "/memories/people", "new_path": "/memories/family"}),
    ],
)
def test_a_folder_has_no_hash(
    manage: Harness, root: Path, alice: Path, tool: str, args: dict[str, Any]
) -> None:
    before = snapshot(root)
    r = manage.call(tool, {**args, "expected_sha256": sha(alice.read_bytes())})
    assert r.is_error and "is a folder, and only a file has a sha256" in r.text and snapshot(root) == before
    assert not manage.call(tool, args).is_error


def test_without_a_hash_nothing_changes_from_the_study(manage: Harness, alice: Path) -> None:
    r = manage.call("str_replace", {"path": PATH, "old_str": "vegan", "new_str": "vegetarian"})
    assert r.text.startswith(f"Edited {PATH} (body, line 7):")
    r = manage.call("delete", {"path": PATH})
    assert r.text == f"Deleted {PATH}." and r.data == {"path": PATH, "kind": "file", "deleted": [PATH]}


# -- what the hash prevents, and that the race's verdict would see it --------------------
def test_without_the_hash_a_write_lands_on_a_version_it_never_saw(root: Path) -> None:
    """Two writers view the same version and each appends at the end it saw. Without the hash
    the second write lands on a file that had moved on (its line goes above the first one's),
    and the race's verdict names it; with the hash it is refused and the writer re-reads."""
    first = seed(root)
    a, b = (Harness(open_store(root), "manage", role=f"w{w}") for w in range(2))
    va, vb = (h.call("view", {"path": RACE_FILE}).data for h in (a, b))
    assert va is not None and vb is not None and va["sha256"] == vb["sha256"] == first
    reports = []
    for wid, h, v in ((0, a, va), (1, b, vb)):
        r = h.call("insert", {"path": RACE_FILE, "insert_line": v["lines"], "insert_text": f"- w{wid}-0"})
        assert not r.is_error and r.data is not None
        done = {"w": wid, "i": 0, "op": "insert", "before": v["sha256"], "after": r.data["sha256"]}
        reports.append(
            {
                "successes": [done],
                "refusals": [],
                "views": 1,
                "retried_cycles": 0,
                "max_tries": 1,
                "seconds": 0,
            }
        )
    assert (root / "race.md").read_text().endswith("- w1-0\n- w0-0\n")  # b's line is not where b put it
    with pytest.raises(AssertionError, match="two writes were based on one version"):
        check_race(root, reports, first)
    c = Harness(open_store(root), "manage", role="w2")
    stale = c.call(
        "insert", {"path": RACE_FILE, "insert_line": 6, "insert_text": "- w2-0", "expected_sha256": first}
    )
    assert stale.is_error and "has changed since you read it" in stale.text


# -- the race: real processes, real store -------------------------------------------------
CYCLES = 20
THINK_S = 0.03  # the pause between a writer's view and its write, where the other one gets in


def _spawn(target: Any, args_for: Any, n: int, tmp_path: Path) -> list[dict[str, Any]]:
    """Start n writer processes, let them go together, and collect their reports."""
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    outs = [tmp_path / f"writer-{w}.json" for w in range(n)]
    procs = [ctx.Process(target=target, args=(*args_for(w), go, str(outs[w]))) for w in range(n)]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0, f"a writer failed ({p.exitcode})"
    return [json.loads(o.read_text()) for o in outs]


def _report(name: str, figures: dict[str, Any]) -> None:
    print(f"\nprecondition race, {name}: {json.dumps(figures)}")
    # A race that never raced proves nothing: the think time makes the writers collide.
    assert figures["refusals"] > 0, figures


@pytest.mark.slow
def test_race_through_the_python_tools(root: Path, tmp_path: Path) -> None:
    first = seed(root)
    reports = _spawn(python_writer, lambda w: (str(root), w, CYCLES, THINK_S), 2, tmp_path)
    _report("python, 2 processes", check_race(root, reports, first))


@pytest.mark.slow
def test_race_over_mcp_http(root: Path, tmp_path: Path) -> None:
    first = seed(root)
    with serve_process(["--root", str(root), "--profile", "manage"]) as (_, url):
        reports = _spawn(mcp_http_writer, lambda w: (url, w, CYCLES, THINK_S, None), 2, tmp_path)
    _report("MCP over HTTP, 2 client processes, 1 server", check_race(root, reports, first))


def _stdio(root: Path) -> Client:
    env = dict(os.environ)
    env["PYTHONPATH"] = (
        str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + env.get("PYTHONPATH", "")
    )
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["-m", "memdir", "serve", str(root), "--profile", "manage"],
            env=env,
        )
    )


@pytest.mark.slow
async def test_race_over_mcp_stdio(root: Path) -> None:
    """Two stdio servers, so two processes, over one store; a real client drives each."""
    first = seed(root)
    async with _stdio(root) as a, _stdio(root) as b:

        def caller(client: Client) -> Any:
            async def call(name: str, args: dict[str, Any]) -> Reply:
                return mcp_reply(await client.call_tool(name, args))

            return call

        reports = await asyncio.gather(
            race(caller(a), 0, CYCLES, THINK_S), race(caller(b), 1, CYCLES, THINK_S)
        )
    _report("MCP over stdio, 2 server processes", check_race(root, list(reports), first))


@pytest.mark.slow
def test_race_through_the_tenant_server(root: Path, tmp_path: Path) -> None:
    """Two tokens of one tenant, two client processes, one multi-tenant endpoint; the server's
    own meters must count every call the writers made, refusals included."""
    first = seed(root)
    tf = tmp_path / "tenants.json"
    tokens = [tenants.add_token(tf, str(root), "manage", label=f"writer {w}") for w in range(2)]
    app = tenants_app(tenants.load(tf))
    with run_asgi(app) as base:
        reports = _spawn(
            mcp_http_writer, lambda w: (base + "/mcp", w, CYCLES, THINK_S, tokens[w]), 2, tmp_path
        )
    figures = check_race(root, reports, first)
    for w, token in enumerate(tokens):
        meter = app.state.dispatch.meters[tenants.hash_token(token)]
        r = reports[w]
        assert meter.calls == 1 + r["views"] + len(r["successes"]) + len(r["refusals"])  # 1: the connect view
        assert meter.writes == len(r["successes"])
    _report("multi-tenant server, 2 tokens, 2 client processes", figures)
