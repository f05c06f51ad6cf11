"""A landing (consolidate, revert) killed with SIGKILL at each of its write points, in a real
process, and what the next writer finds: the test (`test_crash_landing.py`) and the full run
(`benchmarks/reliability/landing_kills.py`) share it.

The killed process counts write points with a Python audit hook (the interpreter raises an
audit event before each file creation, rename, removal and folder change), armed for the
landing's step only by an observer added to the store; at the Nth point it sends itself
SIGKILL, before the operation runs. memdir's code runs unchanged. The model is the scripted one
(at the LLM boundary only): a merge pass that folds two person files into one, every gate
holding.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.agents.consolidate import consolidate
from memdir.agents.landing import git_blob
from memdir.agents.revert import revert
from memdir.conventions import locators
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.store.journal import Journal, stop_committer
from memdir.store.store import Step, Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

REPO = Path(__file__).resolve().parents[1]
KILL_AT = "MEMDIR_TEST_KILL_AT"  # the write point to die at (0: count them and live)
POINTS_FILE = "MEMDIR_TEST_POINTS"  # where a counting run writes how many points it met


def _fm(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


ALICE = _fm("alice", "Alice", "# Alice\n- 2023-05-01: Alice works at Acme [S1T2]\n")
BOB = _fm(
    "bob", "Bob", "# Bob\n- 2023-05-02: Bob lives in Lyon [S1T5]\n- 2023-05-03: Bob adopted Rex [S2T4]\n"
)
PEOPLE = _fm(
    "all",
    "Alice and Bob",
    "# People\n## Alice\n- 2023-05-01: Alice works at Acme [S1T2]\n"
    "## Bob\n- 2023-05-02: Bob lives in Lyon [S1T5]\n- 2023-05-03: Bob adopted Rex [S2T4]\n",
)
INDEX = "# Memory\n- people/alice.md: Alice\n- people/bob.md: Bob\n"
MERGED_INDEX = "# Memory\n- people/all.md: Alice and Bob\n"

# The merge: two person files into one, the index pointed at it; three sourced facts.
MERGE: list[Any] = [
    call("create", path="/memories/people/all.md", file_text=PEOPLE),
    call("delete", path="/memories/people/alice.md"),
    call("delete", path="/memories/people/bob.md"),
    call("str_replace", path="/memories/MEMORY.md", old_str=INDEX, new_str=MERGED_INDEX),
    answer("merged Alice and Bob into people/all.md"),
]


def seed(root: Path) -> None:
    """The store before the merge, written through the tools (so the journal has its steps)."""
    store = open_store(root, create=True)
    with store.step("seed"):
        store.create("/memories/MEMORY.md", INDEX)
        store.create("/memories/people/alice.md", ALICE)
        store.create("/memories/people/bob.md", BOB)
    settle(store)


def settle(store: Store) -> None:
    for obs in store.observers:
        done = getattr(obs, "settled", None)
        if done is not None:
            done()


def plain(root: Path) -> dict[str, bytes]:
    """{memory-relative path: bytes} of the visible files (what a landing moves)."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and not any(part.startswith(".") for part in rel.parts):
            out[str(rel)] = p.read_bytes()
    return out


def cited(files: dict[str, bytes]) -> set[str]:
    return {loc for p, data in files.items() if p.endswith(".md") for loc in locators(data.decode())}


# -- the process that lands and is killed ----------------------------------------------------
class _Arm:
    """A store observer that arms the write-point counter for the landing's step only."""

    def __init__(self, tools: tuple[str, ...]) -> None:
        self.tools = tools

    def before_step(self, store: Store, step: Step) -> None:
        if step.tool in self.tools:
            _counter.armed = True

    def on_step(self, store: Store, step: Step) -> None:
        return None

    def after_step(self, store: Store, step: Step) -> None:
        _counter.armed = False


@dataclass
class _Counter:
    kill_at: int = 0
    armed: bool = False
    seen: int = 0
    kinds: list[str] = field(default_factory=list)


_counter = _Counter()
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _counter.armed:
        return
    if event == "open":
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        if not flags & _WRITE_FLAGS:
            return
    elif event not in ("os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.truncate"):
        return
    _counter.seen += 1
    _counter.kinds.append(event)
    if _counter.seen == _counter.kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


def main(mode: str, root: str) -> None:
    """Run one landing on `root` (`mode`: consolidate, or revert of the newest step)."""
    _counter.kill_at = int(os.environ.get(KILL_AT, "0"))
    sys.addaudithook(_hook)
    store = open_store(root)
    store.observers.append(_Arm(("consolidate", "revert")))
    if mode == "consolidate":
        report = asyncio.run(consolidate(get_model("scripted", script=list(MERGE)), store, passes=1))
        assert report.landed, report.verdict()
    else:
        revert(store, len(Journal(store.root).steps()) - 1)
    settle(store)
    out = os.environ.get(POINTS_FILE)
    if out:
        Path(out).write_text(f"{_counter.seen}\n{' '.join(_counter.kinds)}\n")


def run(mode: str, root: Path, kill_at: int, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
        KILL_AT: str(kill_at),
        POINTS_FILE: str(tmp / "points"),
        "TMPDIR": str(tmp),
    }
    code = "import sys; from tests.landing_kills import main; main(sys.argv[1], sys.argv[2])"
    return subprocess.run([sys.executable, "-c", code, mode, str(root)], env=env, capture_output=True)


# -- the campaign ----------------------------------------------------------------------------
@dataclass
class Outcome:
    """What the next writer found after one kill."""

    point: int
    killed: bool
    facts_lost: list[str]
    state: str  # "old", "new" or "half"
    half_steps: list[str]  # journal steps whose snapshot is neither state, by tool
    journal_behind: bool
    stray_copies: list[str]
    tools: list[str] = field(default_factory=list)  # the journal's steps since the kill, by tool


@dataclass
class Campaign:
    mode: str
    points: int
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def kills(self) -> int:
        return sum(o.killed for o in self.outcomes)

    @property
    def facts_lost(self) -> int:
        return sum(len(o.facts_lost) for o in self.outcomes)

    @property
    def bad(self) -> list[Outcome]:
        return [
            o
            for o in self.outcomes
            if o.facts_lost or o.state == "half" or o.half_steps or o.journal_behind or o.stray_copies
        ]


def prepare(mode: str, template: Path, tmp: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Seed `template` for `mode` and return (state before the landing, state after it)."""
    seed(template)
    if mode == "revert":  # the landing to revert: the merge, landed whole
        done = run("consolidate", template, 0, tmp)
        assert done.returncode == 0, done.stderr.decode()
    before = plain(template)
    probe = tmp / "probe"
    shutil.copytree(template, probe, symlinks=True)
    done = run(mode, probe, 0, tmp)
    assert done.returncode == 0, done.stderr.decode()
    after = plain(probe)
    shutil.rmtree(probe)
    assert before != after
    return before, after


def campaign(mode: str, tmp: Path) -> Campaign:
    """Kill a `mode` landing at each of its write points in turn, each on a fresh copy of the
    same store, and check what the next writer finds."""
    template = tmp / "template"
    before, after = prepare(mode, template, tmp)
    points = int((tmp / "points").read_text().split()[0])
    steps = len(Journal(template).steps())
    result = Campaign(mode, points)
    for n in range(1, points + 1):
        root = tmp / f"kill{n}"
        shutil.copytree(template, root, symlinks=True)
        proc = run(mode, root, n, tmp)
        result.outcomes.append(_after_kill(n, proc, root, steps, before, after, tmp))
        stop_committer()  # this process's committer, poked by the next writer, is done with root
        shutil.rmtree(root)
    return result


def kill_once(mode: str, tmp: Path, point: int | None = None) -> tuple[int, Outcome]:
    """One kill of a `mode` landing at `point` (its middle write point by default): (the
    landing's write points, what the next writer found)."""
    template = tmp / "template"
    before, after = prepare(mode, template, tmp)
    points = int((tmp / "points").read_text().split()[0])
    n = point if point is not None else (points + 1) // 2
    steps = len(Journal(template).steps())
    proc = run(mode, template, n, tmp)
    return points, _after_kill(n, proc, template, steps, before, after, tmp)


def _after_kill(
    n: int,
    proc: subprocess.CompletedProcess[bytes],
    root: Path,
    steps_before: int,
    before: dict[str, bytes],
    after: dict[str, bytes],
    tmp: Path,
) -> Outcome:
    # The next writer: one tool call through a new store, as any later process makes.
    h = Harness(open_store(root), "manage", role="next")
    note = _fm("note", "a later write", "# Note\n- later [S9T1]\n")
    res = h.call("create", {"path": "/memories/note.md", "file_text": note})
    assert not res.is_error, res.text
    settle(h.store)
    now = plain(root)
    now.pop("note.md", None)
    state = "old" if now == before else "new" if now == after else "half"
    journal = Journal(root)
    half: list[str] = []
    since = journal.steps()[steps_before:]
    for s in since:
        snap = {rel: sha for rel, sha in journal.files_at(s.commit).items() if rel != "note.md"}
        if snap not in (_shas(before), _shas(after)):
            half.append(s.tool)
    behind = journal.files_at(journal.steps()[-1].commit) != _shas(plain(root))
    scratch = root / ".memdir" / "scratch"
    stray = [p.name for p in scratch.iterdir()] if scratch.is_dir() else []
    stray += [p.name for p in tmp.iterdir() if p.name.startswith("memdir-scratch-")]
    return Outcome(
        n,
        proc.returncode == -signal.SIGKILL,
        sorted(cited(before) - cited(now)),
        state,
        half,
        behind,
        stray,
        [s.tool for s in since],
    )


def _shas(files: dict[str, bytes]) -> dict[str, str]:
    return {p: git_blob(d) for p, d in files.items()}
