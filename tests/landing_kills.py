"""Every landing (consolidate, revert, revert of an operation, adopt --rename and its revert,
which moves each renamed note back, then rewrites it) killed with
SIGKILL at each of its write points, in a real process, and what comes next: the readers
(search, view, check), before any write, then the next writer. The tests
(`test_crash_landing.py`, `test_landing_intent.py`) and the full run
(`benchmarks/reliability/landing_kills.py`) share it.

The killed process counts write points with a Python audit hook (the interpreter raises an
audit event before each file creation, rename, removal and folder change), armed for the
landing's step only by an observer added to the store; at the Nth point it sends itself
SIGKILL, before the operation runs. memdir's code runs unchanged. The model is the scripted one
(at the LLM boundary only): a merge pass that folds two person files into one, every gate
holding. Adopt is called through its public API (`plan`, `adopt`).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.agents.adopt import adopt
from memdir.agents.adopt import plan as adopt_plan
from memdir.agents.consolidate import consolidate
from memdir.agents.landing import git_blob
from memdir.agents.revert import revert, revert_operation
from memdir.analytics.integrity import check
from memdir.conventions import locators
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.store.journal import Journal, group, stop_committer
from memdir.store.store import Step, Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

REPO = Path(__file__).resolve().parents[1]
KILL_AT = "MEMDIR_TEST_KILL_AT"  # the write point to die at (0: count them and live)
POINTS_FILE = "MEMDIR_TEST_POINTS"  # where a counting run writes how many points it met
MODES = ("consolidate", "revert", "revert-operation", "adopt-rename", "revert-adopt-rename")
TOOL = {  # the tool each mode's landing is journaled under
    "consolidate": "consolidate",
    "revert": "revert",
    "revert-operation": "revert",
    "adopt-rename": "adopt",
    "revert-adopt-rename": "revert",
}
READERS = ("search", "view", "check")  # each kill's first reader takes its turn in this order


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
LATER = _fm("later", "A later operation", "# Later\n- 2023-06-01: Carol joined Acme [S3T1]\n")

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


def note(i: int) -> str:
    """A user's note as adopt finds it: a name with spaces, no frontmatter, one sourced fact."""
    return f"# Note {i}\n- 2023-05-01: walker{i} hiked ridge{i} [S{i}T1]\n"


def seed_notes(root: Path, n: int) -> None:
    """A folder of `n` notes adopt --rename renames (journaled, so the kill meets the landing only)."""
    store = open_store(root, create=True)
    with store.step("seed"):
        for i in range(1, n + 1):
            store.create(f"/memories/notes/Note {i:03d}.md", note(i))
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
    """Run one `mode` landing on `root` (revert: of the newest step; revert-operation: of the
    merge, with a later operation on another file kept)."""
    _counter.kill_at = int(os.environ.get(KILL_AT, "0"))
    sys.addaudithook(_hook)
    store = open_store(root)
    store.observers.append(_Arm(tuple(set(TOOL.values()))))
    if mode == "consolidate":
        report = asyncio.run(consolidate(get_model("scripted", script=list(MERGE)), store, passes=1))
        assert report.landed, report.verdict()
    elif mode in ("revert", "revert-adopt-rename"):
        revert(store, len(Journal(store.root).steps()) - 1)
    elif mode == "revert-operation":
        merge = [op for op in group(Journal(store.root).steps()) if op.operation.kind == "consolidate"]
        assert not revert_operation(store, merge[-1].id).ops.empty
    else:
        adoption = adopt_plan(store, rename=True)
        assert adoption.renamed, adoption.lines()
        adopt(store, adoption)
    settle(store)
    out = os.environ.get(POINTS_FILE)
    if out:
        Path(out).write_text(f"{_counter.seen}\n{' '.join(_counter.kinds)}\n")


def _env(kill_at: int, tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
        KILL_AT: str(kill_at),
        POINTS_FILE: str(tmp / "points"),
        "TMPDIR": str(tmp),
    }


def run(mode: str, root: Path, kill_at: int, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    code = "import sys; from tests.landing_kills import main; main(sys.argv[1], sys.argv[2])"
    return subprocess.run(
        [sys.executable, "-c", code, mode, str(root)], env=_env(kill_at, tmp), capture_output=True
    )


class Forks:
    """Landing processes forked from one that has imported memdir already (a fresh interpreter
    per kill spends most of its second importing): `run` is `run`'s, each landing still a
    process of its own, killed as before. The server only imports, so it forks holding no
    thread and no lock."""

    def __init__(self, tmp: Path) -> None:
        self.err = tmp / "forks.err"
        code = "from tests.landing_kills import serve_forks; serve_forks()"
        with self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code],
                env=_env(0, tmp),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )

    def run(self, mode: str, root: Path, kill_at: int, tmp: Path) -> subprocess.CompletedProcess[bytes]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{mode}\t{root}\t{kill_at}\t{tmp}\n".encode())
        self.proc.stdin.flush()
        code = int(self.proc.stdout.readline())
        return subprocess.CompletedProcess([mode, str(root)], code, b"", self.err.read_bytes()[-4000:])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def serve_forks() -> None:
    """`Forks`' server: one line per landing (mode, root, kill point, tmp), one exit code back."""
    import tempfile
    import traceback

    for line in sys.stdin:
        mode, root, kill_at, tmp = line.rstrip("\n").split("\t")
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.environ.update(_env(int(kill_at), Path(tmp)))
                tempfile.tempdir = None
                main(mode, root)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(f"{os.waitstatus_to_exitcode(status)}\n")
        sys.stdout.flush()


# -- the readers, before any write -----------------------------------------------------------
def _lines(files: dict[str, bytes]) -> dict[str, str]:
    """{locator: the words of a line citing it} (the query a person searching for it types)."""
    out: dict[str, str] = {}
    for p, data in files.items():
        for line in data.decode().splitlines() if p.endswith(".md") else ():
            for loc in locators(line):
                out.setdefault(loc, re.sub(r"\[[^]]*\]|\d{4}-\d\d-\d\d:?", " ", line).strip(" -#"))
    return out


def read_search(root: Path, facts: dict[str, str]) -> set[str]:
    """The facts BM25 search through the tools finds, each by the words of its line."""
    h = Harness(open_store(root), "search-bm25", role="reader")
    found: set[str] = set()
    for loc, words in facts.items():
        res = h.call("bm25_full_search", {"query": words, "top_k": 3})
        assert not res.is_error, res.text
        if f"[{loc}]" in res.text:
            found.add(loc)
    return found


def read_view(root: Path, facts: dict[str, str]) -> set[str]:
    """The facts the view tool shows, file by file."""
    h = Harness(open_store(root), "search", role="reader")
    found: set[str] = set()
    for e in h.store.files():
        res = h.call("view", {"path": e.path.text})
        assert not res.is_error, res.text
        found.update(locators(res.text))
    return found & set(facts)


def read_check(root: Path, facts: dict[str, str]) -> set[str]:
    """`memdir check`'s reading (a bare store, as the command opens it): the facts of the files
    it counted, which must be the files it finds."""
    store = Store(root)
    report = check(store)
    files = {e.path.text: store.read_bytes(e.path) for e in store.files()}
    assert report.counts["files"] >= len(files), (report.counts, sorted(files))
    return cited(files) & set(facts)


READ: dict[str, Callable[[Path, dict[str, str]], set[str]]] = {
    "search": read_search,
    "view": read_view,
    "check": read_check,
}


# -- the campaign ----------------------------------------------------------------------------
@dataclass
class Outcome:
    """What the readers, then the next writer, found after one kill."""

    point: int
    killed: bool
    absent_on_disk: list[str]  # kept facts missing from the files the kill left (an editor's view)
    readers_lost: dict[str, list[str]]  # kept facts a reader did not find, before any write
    facts_lost: list[str]  # sourced facts of the store before, gone after the next write
    state: str  # "old", "new" or "half", after the next write
    read_state: str  # the same, once the readers had opened the store
    half_steps: list[str]  # journal steps whose snapshot is neither state, by tool
    journal_behind: bool
    stray_copies: list[str]
    tools: list[str] = field(default_factory=list)  # the journal's steps since the kill, by tool

    @property
    def lost_by_readers(self) -> int:
        return sum(len(v) for v in self.readers_lost.values())


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
        """Facts a reader missed after a kill, or the store lost after the next write."""
        return sum(o.lost_by_readers + len(o.facts_lost) for o in self.outcomes)

    @property
    def absent_on_disk(self) -> int:
        return sum(len(o.absent_on_disk) for o in self.outcomes)

    @property
    def bad(self) -> list[Outcome]:
        return [
            o
            for o in self.outcomes
            if o.facts_lost
            or o.absent_on_disk
            or o.lost_by_readers
            or "half" in (o.state, o.read_state)
            or o.half_steps
            or o.journal_behind
            or o.stray_copies
        ]


def prepare(mode: str, template: Path, tmp: Path, notes: int) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Seed `template` for `mode` and return (state before the landing, state after it)."""
    if mode.endswith("adopt-rename"):
        seed_notes(template, notes)
    else:
        seed(template)
    if mode.startswith("revert"):  # the landing to revert (the merge, or the adoption), landed whole
        done = run("adopt-rename" if mode.endswith("adopt-rename") else "consolidate", template, 0, tmp)
        assert done.returncode == 0, done.stderr.decode()
    if mode == "revert-operation":  # a later operation on another file, which the revert keeps
        store = open_store(template)
        with store.step("create"):
            store.create("/memories/later.md", LATER)
        settle(store)
    before = plain(template)
    probe = tmp / "probe"
    shutil.copytree(template, probe, symlinks=True)
    done = run(mode, probe, 0, tmp)
    assert done.returncode == 0, done.stderr.decode()
    after = plain(probe)
    shutil.rmtree(probe)
    assert before != after
    return before, after


def campaign(mode: str, tmp: Path, notes: int = 6) -> Campaign:
    """Kill a `mode` landing at each of its write points in turn, each on a fresh copy of the
    same store, and check what the readers, then the next writer, find."""
    template = tmp / "template"
    before, after = prepare(mode, template, tmp, notes)
    points = int((tmp / "points").read_text().split()[0])
    steps = len(Journal(template).steps())
    result = Campaign(mode, points)
    forks = Forks(tmp)
    try:
        for n in range(1, points + 1):
            root = tmp / f"kill{n}"
            shutil.copytree(template, root, symlinks=True)
            proc = forks.run(mode, root, n, tmp)
            result.outcomes.append(_after_kill(n, proc, root, steps, before, after, tmp))
            stop_committer()  # this process's committer, poked by the next writer, is done with root
            shutil.rmtree(root)
    finally:
        forks.close()
    return result


def kill_once(mode: str, tmp: Path, point: int | None = None, notes: int = 6) -> tuple[int, Outcome]:
    """One kill of a `mode` landing at `point` (its middle write point by default): (the
    landing's write points, what the readers and the next writer found)."""
    template = tmp / "template"
    before, after = prepare(mode, template, tmp, notes)
    points = int((tmp / "points").read_text().split()[0])
    n = point if point is not None else (points + 1) // 2
    steps = len(Journal(template).steps())
    proc = run(mode, template, n, tmp)
    return points, _after_kill(n, proc, template, steps, before, after, tmp)


def _state(now: dict[str, bytes], before: dict[str, bytes], after: dict[str, bytes]) -> str:
    return "old" if now == before else "new" if now == after else "half"


def _after_kill(
    n: int,
    proc: subprocess.CompletedProcess[bytes],
    root: Path,
    steps_before: int,
    before: dict[str, bytes],
    after: dict[str, bytes],
    tmp: Path,
) -> Outcome:
    stays = cited(after)
    kept = {loc: words for loc, words in _lines(before).items() if loc in stays}
    absent = sorted(set(kept) - cited(plain(root)))  # what an editor sees, no memdir process yet
    # The readers, each through a store of its own, the first one in turn opening it first.
    first = n % len(READERS)
    lost = {r: sorted(set(kept) - READ[r](root, kept)) for r in READERS[first:] + READERS[:first]}
    read_state = _state(plain(root), before, after)
    # The next writer: one tool call through a new store, as any later process makes.
    h = Harness(open_store(root), "manage", role="next")
    later = _fm("note", "a later write", "# Note\n- later [S9T1]\n")
    res = h.call("create", {"path": "/memories/note.md", "file_text": later})
    assert not res.is_error, res.text
    settle(h.store)
    now = plain(root)
    now.pop("note.md", None)
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
        absent,
        {r: v for r, v in lost.items() if v},
        sorted(cited(before) - cited(now)),
        _state(now, before, after),
        read_state,
        half,
        behind,
        stray,
        [s.tool for s in since],
    )


def _shas(files: dict[str, bytes]) -> dict[str, str]:
    return {p: git_blob(d) for p, d in files.items()}
