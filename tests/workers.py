"""Worker processes for the crash and concurrency checks (tests and benchmarks/reliability).

Kept importable (not nested in a test) because they run in spawned processes.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

N_FILES = 8


def version_text(f: int, k: int) -> str:
    """The exact content of file f at version k: size varies with k, so a torn write shows."""
    pad = "".join(chr(97 + (k + i) % 26) for i in range((k * 7919) % 6000))
    return f"---\nname: f{f}\ndescription: crash file {f}\n---\nv={k}\n{pad}\nend {f} {k}\n"


def parse_version(f: int, text: str) -> int | None:
    """k when `text` is exactly version k of file f, else None (a torn or foreign file)."""
    m = re.search(r"\nv=(\d+)\n", text)
    if not m:
        return None
    k = int(m.group(1))
    return k if text == version_text(f, k) else None


def crash_writer(root: str, ack_path: str, seed: int) -> None:
    """Edit files forever through the tools; after each acknowledged edit, log it durably."""
    h = Harness(open_store(root), "manage", role="crash-writer")
    rng = random.Random(seed)
    versions: dict[int, int] = {}
    for f in range(N_FILES):
        text = (Path(root) / f"f{f}.md").read_text()
        k = parse_version(f, text)
        assert k is not None, f"f{f} torn at start"
        versions[f] = k
    with open(ack_path, "a", buffering=1) as ack:
        print("ready", flush=True)  # the parent's kill clock starts here, not during imports
        while True:
            f = rng.randrange(N_FILES)
            k = versions[f]
            old, new = version_text(f, k), version_text(f, k + 1)
            body_old, body_new = old.split("---\n", 2)[2], new.split("---\n", 2)[2]
            res = h.call(
                "str_replace", {"path": f"/memories/f{f}.md", "old_str": body_old, "new_str": body_new}
            )
            if res.is_error:
                raise SystemExit(f"edit failed: {res.text}")
            versions[f] = k + 1
            ack.write(f"{f} {k + 1}\n")
            os.fsync(ack.fileno())


def append_blocks(root: str, wid: int, n: int, transport: str, url: str | None) -> None:
    """Append n three-line blocks to shared files: through the Python tools or MCP over HTTP."""
    rng = random.Random(wid)

    def block(i: int) -> str:
        return f"begin {wid} {i}\nbody {wid} {i}\nend {wid} {i}\n"

    if transport == "python":
        h = Harness(open_store(root), "manage", role=f"w{wid}")
        for i in range(n):
            f = rng.randrange(3)
            _append(lambda name, args: _python_call(h, name, args), f, block(i))
        return
    from mcp import Client

    async def run() -> None:
        async with Client(url or "") as client:

            async def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
                r = await client.call_tool(name, args)
                return bool(r.is_error), "".join(getattr(c, "text", "") for c in r.content)

            for i in range(n):
                f = rng.randrange(3)
                await _append_async(call, f, block(i))

    asyncio.run(run())


def _python_call(h: Harness, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    r = h.call(name, args)
    return r.is_error, r.text


def _line_count(view_text: str) -> int:
    return int(view_text.split("(", 1)[1].split(" ", 1)[0])


def _append(call: Any, f: int, text: str) -> None:
    for _ in range(1000):
        err, out = call("view", {"path": f"/memories/shared-{f}.md", "start_line": 1, "end_line": 1})
        total = int(out.rsplit(" of ", 1)[1].split(")", 1)[0])
        err, out = call(
            "insert", {"path": f"/memories/shared-{f}.md", "insert_line": total, "insert_text": text}
        )
        if not err:
            return
    raise RuntimeError("could not append")


async def _append_async(call: Any, f: int, text: str) -> None:
    for _ in range(1000):
        err, out = await call("view", {"path": f"/memories/shared-{f}.md", "start_line": 1, "end_line": 1})
        total = int(out.rsplit(" of ", 1)[1].split(")", 1)[0])
        err, out = await call(
            "insert", {"path": f"/memories/shared-{f}.md", "insert_line": total, "insert_text": text}
        )
        if not err:
            return
    raise RuntimeError("could not append")


def reader(root: str, stop_path: str, out_path: str) -> None:
    """Read the shared files raw, as fast as possible; count reads and any partial file."""
    reads = partial = 0
    while not os.path.exists(stop_path):
        for f in range(3):
            try:
                text = (Path(root) / f"shared-{f}.md").read_text()
            except FileNotFoundError:
                partial += 1
                continue
            reads += 1
            lines = text.split("\n")
            ok = text.startswith("---\nname: shared-") and text.endswith("\n")
            begins = sum(1 for ln in lines if ln.startswith("begin "))
            ends = sum(1 for ln in lines if ln.startswith("end "))
            if not ok or begins != ends:
                partial += 1
        time.sleep(0)
    Path(out_path).write_text(f"{reads} {partial}\n")


if __name__ == "__main__":  # pragma: no cover - spawned by scripts
    crash_writer(sys.argv[1], sys.argv[2], int(sys.argv[3]))


def seed_crash_store(root: Path) -> None:
    from memdir.store import spec

    store = open_store(root, create=True)
    for f in range(N_FILES):  # before the first step, so the journal's baseline holds them
        (root / f"f{f}.md").write_text(version_text(f, 0))
    spec.init(store)


def journal_behind(root: Path) -> list[str]:
    """Files whose bytes differ from the journal's newest snapshot (read, as every reader
    reads, once the steps still in the step log have been committed)."""
    from memdir.agents.landing import git_blob
    from memdir.store.journal import Journal

    j = Journal(root)
    head = j.files_at(j.head() or "HEAD")
    files = {p.name: git_blob(p.read_bytes()) for p in root.glob("*.md")}
    return sorted(n for n in files.keys() | head.keys() if files.get(n) != head.get(n))


def logged_versions(root: Path) -> list[tuple[int, int | None]]:
    """(file, version) of each file in each step the step log holds, not yet committed: read
    raw, before any reader of the journal commits them."""
    import pygit2

    from memdir.store.journal.log import StepLog

    git_dir = root / ".memdir" / "journal.git"
    try:
        repo = pygit2.Repository(str(git_dir))
        tip = None if repo.head_is_unborn else str(repo.head.target)
        repo.free()
        log = StepLog(git_dir, create=False)
        records = log.pending(tip)
        log.close()
    except (pygit2.GitError, FileNotFoundError):
        return []
    return [
        (
            int(rel[1:-3]),
            None if data is None else parse_version(int(rel[1:-3]), data.decode("utf-8", "replace")),
        )
        for r in records
        for rel, data in r.files
    ]


class JournalAudit:
    """What the journal holds after each kill: every acknowledged version must be in it (in a
    commit, or in a record of its step log not yet committed), and the files may be ahead of
    its newest snapshot only by the one edit in flight at the kill (written, not acknowledged:
    one version past the journal's, which the next writer commits as a `recovered` step before
    its own first write). Each step a kill left logged must be a commit of its own, with its
    tool, once the journal is read (`logged_not_landed`)."""

    def __init__(self, root: Path) -> None:
        from memdir.store.journal import Journal

        self.root = root
        self.journal = Journal(root)
        self.versions: set[tuple[int, int]] = set()  # (file, version) the journal holds
        self.seen: dict[str, int | None] = {}  # blob sha -> the version it holds
        self.missing = 0  # acknowledged versions not in the journal at a kill
        self.ahead_beyond_in_flight = 0  # files ahead of the journal by more than the edit in flight
        self.rounds_ahead = 0  # kills that left one file ahead (landed between write and commit)
        self.details: list[dict[str, Any]] = []  # kills that left more than one file ahead
        self.kills = 0
        self.logged = 0  # acknowledged versions a kill left in the step log, not yet committed
        self.logged_not_landed = 0  # of those, not in a commit of their own once read
        self.tools: dict[tuple[int, int], str] = {}  # (file, version): the tool of its commit

    def after_kill(self, acked: dict[int, int], acked_lines: set[tuple[int, int]]) -> None:
        from memdir.agents.landing import git_blob

        # Steps acknowledged but only logged at the kill: the reads below commit them first.
        in_log = {(f, k) for f, k in logged_versions(self.root) if k is not None}
        self.logged += len(in_log)
        blobs: dict[str, tuple[int, str]] = {}
        for step in self.journal.steps(raw=True):
            for _status, sha, path in step.raw:
                if re.fullmatch(r"f\d+\.md", path) and sha not in self.seen and set(sha) != {"0"}:
                    blobs[sha] = (int(path[1:-3]), step.tool)
        for sha, data in self.journal.blobs(sorted(blobs)):
            f, tool = blobs[sha]
            k = parse_version(f, data.decode("utf-8", "replace"))
            self.seen[sha] = k
            if k is not None:
                self.versions.add((f, k))
                self.tools[(f, k)] = tool
        self.missing += len(acked_lines - self.versions)
        # Each logged step is now a commit of its own, with its tool, not folded into another.
        self.logged_not_landed += sum(self.tools.get(v) != "str_replace" for v in in_log)
        head = self.journal.files_at(self.journal.head() or "HEAD")
        ahead = []  # (file, version on disk, version in the journal's newest snapshot)
        for f in range(N_FILES):
            data = (self.root / f"f{f}.md").read_bytes()
            if head.get(f"f{f}.md") != git_blob(data):
                sha = head.get(f"f{f}.md", "")
                ahead.append((f, parse_version(f, data.decode("utf-8", "replace")), self.seen.get(sha)))
        self.rounds_ahead += bool(ahead)
        # Ahead only by the one edit in flight: never acknowledged, one version past the journal's.
        beyond = [
            (f, disk, snap)
            for f, disk, snap in ahead
            if disk is None or snap is None or disk != snap + 1 or disk <= acked.get(f, 0)
        ]
        self.ahead_beyond_in_flight += len(beyond) + max(0, len(ahead) - 1 - len(beyond))
        if len(ahead) > 1 or beyond:
            self.details.append({"kill": self.kills, "ahead": ahead, "acked": dict(acked)})
        self.kills += 1

    def result(self) -> dict[str, int]:
        steps = self.journal.steps()
        return {
            "acknowledged_missing_from_journal": self.missing,
            "journal_ahead_beyond_in_flight": self.ahead_beyond_in_flight,
            "kills_between_write_and_commit": self.rounds_ahead,
            "recovered_steps": sum(
                s.tool == "recovered" and "stopped" in s.meta.get("recovered", "") for s in steps
            ),
            "journal_steps": len(steps),
            "logged_at_kills": self.logged,
            "logged_not_landed": self.logged_not_landed,
            "journal_ahead_details": self.details[:20],
        }


def crash_campaign(
    root: Path, edits: int, seed: int, repo: Path, progress: Any = None, max_delay: float = 0.3
) -> dict[str, Any]:
    """Kill a writer with SIGKILL at random points until `edits` edits are acknowledged;
    after every kill, check that no file is torn, no acknowledged edit is lost, and the
    journal holds every acknowledged edit (`JournalAudit`)."""
    import signal
    import subprocess

    rng = random.Random(seed)
    ack = root.parent / "acks.log"
    ack.touch()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(repo / "src"), str(repo), env.get("PYTHONPATH", "")])
    kills = torn = lost = journal_warnings = 0
    mismatches: list[tuple[int, int, int | None, int]] = []  # (file, acked, on disk, round)
    acked: dict[int, int] = {}
    acked_lines: set[tuple[int, int]] = set()  # every (file, version) acknowledged
    on_disk = {f: 0 for f in range(N_FILES)}  # version at the start of the round
    audit = JournalAudit(root)
    seen_lines = 0
    rounds = 0
    while sum(acked.values()) < edits:
        rounds += 1
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.workers", str(root), str(ack), str(rng.randrange(1 << 30))],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != b"ready":
            raise RuntimeError(f"writer did not start: {proc.communicate()[1].decode()[-500:]}")
        time.sleep(rng.random() * max_delay)  # a random point in the stream of edits
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        err = err or b""
        if proc.returncode != -signal.SIGKILL:
            raise RuntimeError(f"writer ended by itself ({proc.returncode}): {err.decode()[-500:]}")
        kills += 1
        journal_warnings += err.count(b"journal: step")
        lines = ack.read_text().split("\n")[:-1]
        round_acked = dict(on_disk)
        for line in lines[seen_lines:]:
            f, k = map(int, line.split())
            acked_lines.add((f, k))
            acked[f] = max(acked.get(f, 0), k)
            round_acked[f] = max(round_acked[f], k)
        seen_lines = len(lines)
        for f in range(N_FILES):
            k = parse_version(f, (root / f"f{f}.md").read_text())
            if k is None:
                torn += 1
                mismatches.append((f, acked.get(f, 0), None, rounds))
                continue
            # Every acknowledged edit is there; at most the one in flight at the kill is extra.
            if not (acked.get(f, 0) <= k <= round_acked[f] + 1):
                lost += 1
                mismatches.append((f, acked.get(f, 0), k, rounds))
            on_disk[f] = k
        audit.after_kill(acked, acked_lines)
        if progress is not None:
            progress(sum(acked.values()))
    temps = [p.name for p in root.rglob(".memdir-tmp-*")]
    return {
        "edits_acknowledged": sum(acked.values()),
        "acknowledgements_logged": len(acked_lines),
        "acknowledged": sorted(acked_lines),
        "kills": kills,
        "torn_files": torn,
        "lost_acknowledged_edits": lost,
        "leftover_temp_files": len(temps),
        "journal_warnings": journal_warnings,
        "mismatches": mismatches,
        **audit.result(),
    }
