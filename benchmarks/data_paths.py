"""The three data paths a newcomer follows, traced: the memdir frames on the stack when the data
first reaches its file (an MCP `create` -> the memory file; `Memory.add` -> the first memory
file; `memdir study eval` -> the first answer row). Printed as hops (frames) and the modules
they pass through, so a change to the house can be read as more or fewer rooms crossed.

    MEMDIR_DATA=... python benchmarks/data_paths.py [--conversation ID]

An audit hook (`sys.addaudithook`) sees each `open` for writing and each rename; the first one
whose target is the path's destination stops the trace. The MCP call runs in a worker thread
and curation hand work to threads: the stack that handed it over is joined to the thread's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

NOTE = "---\nname: maria\ndescription: Maria, a friend\n---\nMaria lives in Porto [S1T1]\n"
Matcher = Callable[[str], bool]
_watch: dict[str, Any] = {"match": None, "stack": None}
_parent = threading.local()  # the stack that handed this thread its work


def _handed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` carrying the stack of whoever handed it to a worker thread, so a traced stack runs
    from the caller's entry point and not from the thread pool's loop."""
    parent = [*getattr(_parent, "stack", []), *traceback.extract_stack()[:-2]]

    def run(*args: Any, **kwargs: Any) -> Any:
        _parent.stack = parent
        try:
            return fn(*args, **kwargs)
        finally:
            _parent.stack = []

    return run


def _follow_threads() -> None:
    import anyio.to_thread

    submit = ThreadPoolExecutor.submit
    run_sync = anyio.to_thread.run_sync

    def handed_submit(self: ThreadPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        return submit(self, _handed(fn), *args, **kwargs)

    async def handed_run_sync(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await run_sync(_handed(fn), *args, **kwargs)

    ThreadPoolExecutor.submit = handed_submit  # type: ignore[method-assign]
    anyio.to_thread.run_sync = handed_run_sync


def _hook(event: str, args: tuple[Any, ...]) -> None:
    match = _watch["match"]
    if match is None or _watch["stack"] is not None:
        return
    target = None
    if event == "open" and isinstance(args[0], str | Path) and args[1] not in (None, "r", "rb"):
        mode = str(args[1])
        if any(c in mode for c in "wax+"):
            target = str(args[0])
    elif event == "open" and isinstance(args[0], str | Path) and isinstance(args[2], int):
        import os

        if args[2] & (os.O_WRONLY | os.O_RDWR):
            target = str(args[0])
    elif event in ("os.rename", "os.replace"):
        target = str(args[1])
    if target is not None and match(target):
        _watch["stack"] = [*getattr(_parent, "stack", []), *traceback.extract_stack()[:-1]]


def _ours(frame: traceback.FrameSummary) -> str | None:
    parts = Path(frame.filename).parts
    for pkg in ("memdir_study", "memdir"):
        if pkg in parts and "site-packages" not in parts:
            rel = parts[parts.index(pkg) :]
            return ".".join(rel)[: -len(".py")] + ":" + frame.name
    return None


def traced(label: str, match: Matcher, run: Callable[[], object]) -> None:
    _watch.update(match=match, stack=None)
    run()
    stack = _watch["stack"]
    _watch["match"] = None
    if stack is None:
        print(f"{label}: the destination was never written (nothing traced)")
        return
    frames = [f for f in (_ours(s) for s in stack) if f is not None]
    modules = list(dict.fromkeys(f.split(":")[0] for f in frames))
    print(f"\n{label}: {len(frames)} hops, {len(modules)} modules")
    for f in frames:
        print("   ", f)


def mcp_create(root: Path) -> None:
    import anyio
    from mcp import Client

    from memdir import Memory

    async def go() -> None:
        async with Client(Memory(root).mcp_server("manage")) as client:
            result = await client.call_tool(
                "create",
                {"path": "/memories/people/maria.md", "file_text": NOTE},
            )
            if result.is_error:
                print("create refused:", *(getattr(c, "text", "") for c in result.content))

    anyio.run(go)


def memory_add(root: Path) -> None:
    from memdir import Memory

    memory = Memory(root)
    try:
        memory.add(
            [
                {"role": "user", "content": "I moved to Porto last spring and I work as a nurse."},
                {"role": "assistant", "content": "Porto, nice. How is the hospital?"},
            ]
        )
    finally:
        memory.close()


def study_eval(out: Path, conversation: str) -> None:
    from click.testing import CliRunner

    from memdir.cli.main import cli

    args = ["study", "eval", "-b", "locomo", "-c", conversation, "-v", "verbatim-dump"]
    result = CliRunner().invoke(cli, [*args, "-m", "offline", "-o", str(out)])
    if result.exit_code != 0:
        print(result.output[-2000:], file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversation", default="conv-26", help="LoCoMo sample of the eval")
    opts = parser.parse_args()
    _follow_threads()
    sys.addaudithook(_hook)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        traced(
            "MCP create -> file",
            lambda p: "maria" in Path(p).name,
            lambda: mcp_create(base / "mcp"),
        )
        traced(
            "Memory.add -> first memory file",
            lambda p: p.endswith(".md") and Path(p).name != "MEMORY.md" and ".memdir" not in p,
            lambda: memory_add(base / "add"),
        )
        traced(
            "memdir study eval -> answer rows",
            lambda p: Path(p).name == "answers.jsonl",
            lambda: study_eval(base / "eval", opts.conversation),
        )


if __name__ == "__main__":
    main()
