"""Writers racing on one file with `expected_sha256` (tests/tools/test_preconditions.py and
benchmarks/reliability/precondition_race.py).

Each cycle is a read-modify-write: view the file, take its sha256 from the structured result,
think a moment, then write with that hash as `expected_sha256`; a refusal (another writer got
there first) is recorded and the cycle starts over from a fresh view. Even cycles append a
marker line with insert (at the line count the view reported); odd cycles bump the count line
with str_replace and add their marker under it. `check_race` then proves, from the file and the
journal alone, that no update was lost and that every refusal wrote nothing.

Kept importable (not nested in a test) because the writers run in spawned processes.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.store.journal import Journal
from memdir.tools.preconditions import sha256_hex
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

RACE_FILE = "/memories/race.md"
SEED = "---\nname: race\ndescription: a file two writers race on\n---\ncount: 0\n"
MARKER = re.compile(r"^- w(\d+)-(\d+)$")
REFUSAL = re.compile(r"expected_sha256 is ([0-9a-f]{64}), but the file's sha256 is now ([0-9a-f]{64})")


@dataclass
class Reply:
    is_error: bool
    text: str
    data: dict[str, Any] | None
    writes: int | None = None  # file changes the call made, where the transport reports it


Call = Callable[[str, dict[str, Any]], Awaitable[Reply]]


def seed(root: str | Path) -> str:
    """Create the race file through the tools; its sha256, the first state of the chain."""
    h = Harness(open_store(root), "manage", role="seed")
    r = h.call("create", {"path": RACE_FILE, "file_text": SEED})
    assert not r.is_error and r.data is not None, r.text
    return str(r.data["sha256"])


def _file_lines(view_text: str) -> list[str]:
    """The file's lines from view's numbered text (`     5\tcount: 3`)."""
    return [ln.split("\t", 1)[1] for ln in view_text.split("\n")[1:] if "\t" in ln]


async def race(call: Call, wid: int, cycles: int, think_s: float, seed_rng: int = 0) -> dict[str, Any]:
    """`cycles` read-modify-write cycles of writer `wid`; what happened, for `check_race`."""
    rng = random.Random(seed_rng * 1000 + wid)
    successes: list[dict[str, Any]] = []
    refusals: list[dict[str, Any]] = []
    retried = max_tries = views = 0
    start = time.perf_counter()
    for i in range(cycles):
        tries = 0
        while True:
            tries += 1
            v = await call("view", {"path": RACE_FILE})
            views += 1
            if v.is_error or v.data is None:
                raise RuntimeError(f"view failed: {v.text}")
            before = str(v.data["sha256"])
            name, args = _edit(wid, i, _file_lines(v.text), int(v.data["lines"]))
            if think_s:
                await asyncio.sleep(rng.uniform(0, think_s))  # the model thinking between read and write
            r = await call(name, {**args, "expected_sha256": before})
            if not r.is_error:
                assert r.data is not None, r.text
                successes.append({"w": wid, "i": i, "op": name, "before": before, "after": r.data["sha256"]})
                break
            m = REFUSAL.search(r.text)
            if m is None:
                raise RuntimeError(
                    f"writer {wid}: a write failed for another reason than a stale hash: {r.text}"
                )
            refusals.append({"expected": m[1], "current": m[2], "sent": before, "writes": r.writes})
        retried += tries > 1
        max_tries = max(max_tries, tries)
    return {
        "wid": wid,
        "successes": successes,
        "refusals": refusals,
        "views": views,
        "retried_cycles": retried,
        "max_tries": max_tries,
        "seconds": time.perf_counter() - start,
    }


def _edit(wid: int, i: int, lines: list[str], total: int) -> tuple[str, dict[str, Any]]:
    marker = f"- w{wid}-{i}"
    if i % 2 == 0:
        return "insert", {"path": RACE_FILE, "insert_line": total, "insert_text": marker}
    count = next(ln for ln in lines if ln.startswith("count: "))
    n = int(count.split(": ", 1)[1])
    return "str_replace", {
        "path": RACE_FILE,
        "old_str": f"{count}\n",
        "new_str": f"count: {n + 1}\n{marker}\n",
    }


# -- transports -------------------------------------------------------------------------
def python_writer(root: str, wid: int, cycles: int, think_s: float, go: Any, out: str) -> None:
    """A process writing through its own Harness and Store over the shared root."""
    h = Harness(open_store(root), "manage", role=f"racer{wid}")

    async def call(name: str, args: dict[str, Any]) -> Reply:
        r = h.call(name, args)
        return Reply(r.is_error, r.text, r.data, r.meter.writes)

    go.wait()
    report = asyncio.run(race(call, wid, cycles, think_s))
    report["meter"] = {"calls": h.meter.calls, "writes": h.meter.writes}
    Path(out).write_text(json.dumps(report))


def mcp_text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def mcp_reply(result: Any) -> Reply:
    """A Reply from an MCP result: the data is `structuredContent`, which the SDK's client has
    already validated against the tool's output schema; `_meta` must carry the same sha256."""
    data = result.structured_content
    if data is not None and "sha256" in data:
        assert (result.meta or {}).get("sha256") == data["sha256"], result.meta
    return Reply(bool(result.is_error), mcp_text(result), data)


def mcp_http_writer(
    url: str, wid: int, cycles: int, think_s: float, token: str | None, go: Any, out: str
) -> None:
    """A process writing through the real MCP client over streamable HTTP (a bearer token for
    the multi-tenant server)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run() -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        http = create_mcp_http_client(headers=headers)
        async with Client(streamable_http_client(url, http_client=http)) as client:  # type: ignore[arg-type]

            async def call(name: str, args: dict[str, Any]) -> Reply:
                return mcp_reply(await client.call_tool(name, args))

            await call("view", {"path": RACE_FILE})  # connected: only now wait for the start
            go.wait()
            return await race(call, wid, cycles, think_s)

    Path(out).write_text(json.dumps(asyncio.run(run())))


# -- the verdict --------------------------------------------------------------------------
def journal_states(root: Path) -> list[str]:
    """The sha256 of every version of the race file the journal recorded, oldest first: one
    commit per writing step, made under the writer lock, so in the order the writes landed."""
    journal = Journal(root)
    blob_shas: list[str] = []
    for step in journal.steps(raw=True):
        blob_shas += [sha for _, sha, path in step.raw if path == "race.md" and set(sha) != {"0"}]
    return [sha256_hex(data) for _, data in journal.blobs(blob_shas)]


def check_race(root: Path, reports: list[dict[str, Any]], seed_sha: str) -> dict[str, Any]:
    """Prove the race left no lost update and every refusal unwritten; the figures of the run."""
    successes = [s for r in reports for s in r["successes"]]
    refusals = [x for r in reports for x in r["refusals"]]
    data = (root / "race.md").read_bytes()
    lines = data.decode().split("\n")
    markers = [(int(m[1]), int(m[2])) for ln in lines if (m := MARKER.match(ln))]
    # 1. every successful write is in the file, once; nothing else is
    assert sorted(markers) == sorted((s["w"], s["i"]) for s in successes), "a marker was lost or doubled"
    count = int(next(ln for ln in lines if ln.startswith("count: ")).split(": ")[1])
    assert count == sum(s["op"] == "str_replace" for s in successes), "an increment was lost"
    # 2. the successes form one chain of versions from the seed to the file: no two writes
    # started from the same version (the shape of a lost update)
    after_of = {s["before"]: s["after"] for s in successes}
    assert len(after_of) == len(successes), "two writes were based on one version"
    chain = [seed_sha]
    while chain[-1] in after_of:
        chain.append(after_of[chain[-1]])
    assert len(chain) == len(successes) + 1 and chain[-1] == sha256_hex(data), "the versions do not chain"
    # 3. the journal, written under the writer lock, saw exactly that sequence of versions
    assert journal_states(root) == chain, "the journal's versions differ from the writers' chain"
    # 4. each refusal named the hash it was sent and a version that really was on disk; as the
    # chain holds only the successes' versions, no refusal added one
    states = set(chain)
    for x in refusals:
        assert x["expected"] == x["sent"] and x["expected"] != x["current"], x
        assert x["expected"] in states and x["current"] in states, x
        assert x["writes"] in (None, 0), x
    for r in reports:  # where the harness's own meter is at hand, it agrees with the writer's tally
        if "meter" in r:
            assert r["meter"]["calls"] == r["views"] + len(r["successes"]) + len(r["refusals"]), r["meter"]
            assert r["meter"]["writes"] == len(r["successes"]), r["meter"]
    return figures(reports)


def figures(reports: list[dict[str, Any]]) -> dict[str, Any]:
    writes = sum(len(r["successes"]) for r in reports)
    seconds = max(r["seconds"] for r in reports)
    return {
        "writers": len(reports),
        "cycles_each": len(reports[0]["successes"]),
        "writes": writes,
        "refusals": sum(len(r["refusals"]) for r in reports),
        "refusals_by_writer": [len(r["refusals"]) for r in reports],
        "retried_cycles": sum(r["retried_cycles"] for r in reports),
        "max_tries": max(r["max_tries"] for r in reports),
        "seconds": round(seconds, 2),
        "writes_per_s": round(writes / seconds, 1) if seconds else None,
    }
