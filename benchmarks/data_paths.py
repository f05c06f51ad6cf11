"""How many rooms a piece of data passes through on its way to disk (issue 35's three paths).

A path is traced, not read off a diagram: an audit hook (`sys.addaudithook`, which sees every
`open` for writing and every rename in every thread) takes the Python stack at the moment the
traced file reaches disk. The stack's memdir frames, outermost first, with consecutive frames of
the same module merged, are the path's chain of modules; its *hops* are the module boundaries
crossed (chain length - 1), and *frames* the memdir function calls on the stack. A profile hook
also counts the distinct memdir modules whose code ran during the whole path (what a reader
must open to follow it), on a second run of the path, so the first run's imports do not count.

The three paths:
- `mcp`: an MCP `create` call (the SDK's in-process client against `build_server`) until the
  new file is renamed into place;
- `add`: `Memory(root).add(text)` (offline) until its first memory file is written;
- `eval-answer`, `eval-report`: `memdir eval` (or `memdir study eval`) on one offline cell until
  its first answer row is appended to `answers.jsonl`, and until `report.md` is written.

Run it on any checkout (`PYTHONPATH=<checkout>/src python benchmarks/data_paths.py`) to compare
two commits side by side; it uses only entry points both layouts have.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


@dataclass
class Trace:
    """The first stack that wrote a file `wanted` accepts, and the modules that ran meanwhile."""

    wanted: Callable[[str], bool]
    chain: list[str] = field(default_factory=list)
    frames: int = 0
    ran: set[str] = field(default_factory=set)


def _target(event: str, args: tuple[Any, ...]) -> str | None:
    if event == "os.rename" and len(args) >= 2:
        return os.fsdecode(args[1])
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        mode, flags = args[1], args[2] if len(args) > 2 else 0
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS
        )
        return os.fsdecode(args[0]) if writes else None
    return None


def _chain(frame: types.FrameType | None) -> tuple[list[str], int]:
    names: list[str] = []
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name == "memdir" or name.startswith("memdir."):
            names.append(name)
        frame = frame.f_back
    names.reverse()
    merged = [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]
    return merged, len(names)


def _awaiting(frame: types.FrameType | None) -> list[str]:
    """The memdir coroutines suspended on the main thread's event loop, outermost first, of the
    task that waits deepest (the one waiting on this worker thread), walked through `cr_await`."""
    loop = None
    while frame is not None and loop is None:
        owner = frame.f_locals.get("self")
        loop = owner if isinstance(owner, asyncio.AbstractEventLoop) else None
        frame = frame.f_back
    if loop is None:
        return []
    best: list[str] = []
    try:
        tasks = list(asyncio.all_tasks(loop))
    except RuntimeError:  # the task set changed under us: no chain this time
        return []
    for task in tasks:
        names: list[str] = []
        coro: Any = task.get_coro()
        while coro is not None:
            code_frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
            name = str(code_frame.f_globals.get("__name__", "")) if code_frame else ""
            if name.startswith("memdir."):
                names.append(name)
            coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
        best = max(best, names, key=len)
    return best


_active: Trace | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    trace = _active
    if trace is None or trace.chain:
        return
    target = _target(event, args)
    if target is not None and trace.wanted(target):
        chain, frames = _chain(sys._getframe(1))
        main = threading.main_thread()
        if threading.current_thread() is not main:
            # a worker thread's stack starts at the pool: the caller waiting on it, if it waits
            # synchronously, is the main thread's stack (a suspended coroutine is on no stack)
            waiting = sys._current_frames().get(main.ident or 0)
            outer, more = _chain(waiting)
            awaiting = _awaiting(waiting)
            chain, frames = [*outer, *awaiting, *chain], frames + more + len(awaiting)
            chain = [n for i, n in enumerate(chain) if i == 0 or chain[i - 1] != n]
        trace.chain, trace.frames = chain, frames


def _profile(frame: types.FrameType, event: str, _arg: Any) -> None:
    if event == "call" and _active is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name.startswith("memdir."):
            _active.ran.add(name)


@contextmanager
def traced(wanted: Callable[[str], bool]) -> Iterator[Trace]:
    global _active
    trace = Trace(wanted)
    _active = trace
    sys.setprofile(_profile)
    threading.setprofile(_profile)
    try:
        yield trace
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        _active = None


def mcp_path(work: Path) -> Trace:
    from mcp import Client

    from memdir.mcp.server import build_server
    from memdir.store import spec
    from memdir.tools.profiles import Harness
    from memdir.tools.wiring import open_store

    root = work / "mcp"
    spec.init(open_store(root, create=True))
    harness = Harness(open_store(root), "manage", role="trace")
    text = "---\nname: alice\ndescription: Alice, a friend\n---\n# Alice\n- diet: vegan [S1T1]\n"

    async def call() -> None:
        async with Client(build_server(harness)) as client:  # type: ignore[arg-type]
            with traced(lambda p: os.path.basename(p) == "alice.md") as trace:
                await client.call_tool("create", {"path": "/memories/people/alice.md", "file_text": text})
            found.append(trace)

    found: list[Trace] = []
    asyncio.run(call())
    return found[0]


def add_path(work: Path) -> Trace:
    from memdir import Memory

    def memory_file(p: str) -> bool:
        base = os.path.basename(p)
        return base.endswith(".md") and base != "MEMORY.md"

    with Memory(work / "add") as memory, traced(memory_file) as trace:
        memory.add("Alice: I went vegan last month.\nBob: Good for you, Alice!")
    return trace


def eval_path(work: Path, target: str = "report.md") -> Trace:
    import click
    from click.testing import CliRunner

    from memdir.cli.main import cli

    head = ["study", "eval"] if "study" in cli.list_commands(click.Context(cli)) else ["eval"]
    args = [*head, "-b", "locomo", "-c", "conv-50", "-v", "agent-curated", "-m", "offline"]
    args += ["--sessions", "1-2", "--questions", "2", "-o", str(work / "run")]
    with traced(lambda p: os.path.basename(p) == target) as trace:
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{result.output}")
    return trace


def eval_answer_path(work: Path) -> Trace:
    return eval_path(work, "answers.jsonl")


PATHS = {"mcp": mcp_path, "add": add_path, "eval-answer": eval_answer_path, "eval-report": eval_path}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", choices=sorted(PATHS), action="append", help="default: all three")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    ns = parser.parse_args()
    sys.addaudithook(_audit)
    rows = {}
    for name in ns.path or list(PATHS):
        with tempfile.TemporaryDirectory() as warm:  # imports done once, so only the path counts
            PATHS[name](Path(warm))
        with tempfile.TemporaryDirectory() as tmp:
            trace = PATHS[name](Path(tmp))
        if not trace.chain:
            raise SystemExit(f"{name}: the traced file was never written; the path did not reach disk")
        rows[name] = {
            "hops": len(trace.chain) - 1,
            "frames": trace.frames,
            "modules_run": len(trace.ran),
            "chain": trace.chain,
        }
    if ns.json:
        print(json.dumps(rows, indent=2))
        return
    for name, row in rows.items():
        print(f"{name}: {row['hops']} hops, {row['frames']} memdir frames at the write,", end=" ")
        print(f"{row['modules_run']} modules ran")
        print("   " + " -> ".join(m.removeprefix("memdir.") for m in row["chain"]))


if __name__ == "__main__":
    main()
