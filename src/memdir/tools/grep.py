"""grep: per-line regex search over the store's .md files.

ripgrep does the scanning when it is installed (faster than a Python line scan:
benchmarks/results/2026-12-06-docstring-figures.md, "tools/grep.py"; and linear-time, so a
hostile pattern cannot hang the harness); `--engine auto` lets patterns with look-around or
back-references fall through to PCRE2, whose match limits bound them too. Without ripgrep a
Python scan gives the same results.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import regex

from memdir.errors import EditError, NotFoundError, PathError, ToolError
from memdir.jsontypes import JsonObject
from memdir.store.paths import MAX_DEPTH, MemoryPath
from memdir.store.store import Store
from memdir.tools import outputs
from memdir.tools.base import ToolContext, tool
from memdir.tools.text import nameable

MAX_LINE_CHARS = 400
DEFAULT_MAX_RESULTS = 100
DEFAULT_TIMEOUT_S = 30.0
# Bounds on one reply, like top_k's in the search tools: an unbounded `max_results` once turned
# a file into a reply many times its size, which the server then held for every client slow to
# read it (benchmarks/results/2026-12-06-docstring-figures.md, "tools/grep.py").
MAX_RESULTS = 1000
MAX_REPLY_BYTES = 256 * 1024
_MAX_NAME_BYTES = 65536  # a ripgrep record whose name runs longer is not a record (see _rg_run)


def _timeout() -> float:
    """Seconds one grep may take (MEMDIR_GREP_TIMEOUT overrides the default)."""
    return float(os.environ.get("MEMDIR_GREP_TIMEOUT", DEFAULT_TIMEOUT_S))


def _rg() -> str | None:
    """ripgrep's path, unless MEMDIR_GREP=python asks for the pure-Python scan."""
    if os.environ.get("MEMDIR_GREP", "").lower() == "python":
        return None
    return shutil.which("rg")


def _rg_hits(
    pattern: str, target: Path, case_sensitive: bool, store: Store, mp: MemoryPath
) -> Iterator[tuple[Path, int, str]]:
    # ripgrep reads by path. It gets the target (folder or file) as `/proc/self/fd/N` of a
    # descriptor opened along the store's O_NOFOLLOW chain, so a folder swapped for a link
    # after our checks cannot send it outside; below a folder it walks without following links.
    fd = _open_target(store, mp)
    via = f"/proc/self/fd/{fd}"
    base = str(target)
    try:
        # A file may sit at most MAX_DEPTH folder levels below /memories; ripgrep's depth counts
        # from its argument, so it never walks a hand-made tree deeper than the store reads.
        depth = MAX_DEPTH + 1 - len(mp.parts)
        for name, lineno, line in _rg_run(pattern, via, case_sensitive, store.root, fd, depth):
            if name == via or name.startswith(via + "/"):
                name = base + name[len(via) :]
            yield Path(name), lineno, line
    finally:
        os.close(fd)


def _open_target(store: Store, mp: MemoryPath) -> int:
    """A descriptor of the folder or plain single-link file at `mp`, reached without links."""
    if mp.is_root:
        return store.safe.open_dir((), mp.text)
    parent = store.safe.open_dir(mp.parts[:-1], mp.text)
    try:
        fd = os.open(mp.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathError(
                f"{mp.text}: leads through a symbolic link; memory does not follow links"
            ) from None
        raise NotFoundError(f"{mp.text} does not exist; grep a folder or a .md file that exists") from None
    finally:
        os.close(parent)
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode) and not (stat.S_ISREG(st.st_mode) and st.st_nlink == 1):
        os.close(fd)
        raise PathError(f"{mp.text} is not a plain file of this store")
    return fd


def _rg_run(
    pattern: str, arg: str, case_sensitive: bool, root: Path, fd: int, depth: int
) -> Iterator[tuple[str, int, str]]:
    cmd = [
        _rg() or "rg", "--no-config", "--no-heading", "--with-filename", "--line-number",
        "--null", "--no-ignore", "--color", "never", "--sort", "path", "--engine", "auto",
        "--glob", "*.md", "--max-columns", "0", "--max-depth", str(max(depth, 0)),
        "--case-sensitive" if case_sensitive else "--ignore-case",
        "--regexp", pattern, "--", arg,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root, pass_fds=(fd,))
    assert proc.stdout is not None and proc.stderr is not None
    timeout = _timeout()
    expired = threading.Event()

    def _expire() -> None:
        expired.set()
        proc.kill()

    watchdog = threading.Timer(timeout, _expire)  # a silent, slow scan must not block us either
    watchdog.daemon = True  # it only kills ripgrep: it must never keep a stopping process alive
    watchdog.start()
    try:
        # A record is `name NUL lineno ":" line LF`. A name holds no NUL but may hold a newline,
        # and a line holds neither, so a record ends at the first LF after its NUL: pieces are
        # joined until a NUL has been seen (splitting at every LF once let a folder named "a\n"
        # that holds a copy of the root's own path forge hits for the root's real files).
        pending = b""
        for raw in proc.stdout:
            pending += raw
            if b"\0" not in pending:
                if len(pending) > _MAX_NAME_BYTES:  # not a name: a message such as "binary file matches"
                    pending = b""
                continue
            name, _, rest = pending.partition(b"\0")
            pending = b""
            lineno, _, line = rest.partition(b":")
            if not lineno.isdigit():
                continue
            yield os.fsdecode(name), int(lineno), line.rstrip(b"\r\n").decode("utf-8", "replace")
        proc.wait()
        if expired.is_set():
            raise ToolError(f"grep took over {timeout:g} s; narrow the path or the pattern")
        if proc.returncode == 2:
            err = proc.stderr.read().decode("utf-8", "replace").strip()
            if "match limit" in err:
                raise ToolError(
                    f"the pattern {pattern!r} backtracks too much on some lines (PCRE2 match limit); "
                    "simplify it, e.g. avoid nested repetition such as '(a+)+' or back-references"
                )
            if "regex" in err.lower() or "parse" in err.lower() or "error compiling" in err.lower():
                raise EditError(f"invalid regex {pattern!r}: {err.splitlines()[-1] if err else ''}")
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _py_hits(
    ctx: ToolContext, pattern: str, top: MemoryPath, case_sensitive: bool
) -> Iterator[tuple[Path, int, str]]:
    # `regex` (not `re`): its matching takes a timeout, so a catastrophic pattern cannot hang us.
    try:
        rx = regex.compile(pattern, 0 if case_sensitive else regex.IGNORECASE)
    except regex.error as exc:
        raise EditError(f"invalid regex {pattern!r}: {exc}") from None
    # Lazily, in ripgrep's --sort path order, so a search capped by max_results stops early.
    targets: Iterator[MemoryPath] = (
        iter([top])
        if not ctx.store.is_dir(top)
        else (e.path for e in ctx.store.walk(top) if not e.is_dir and e.path.name.endswith(".md"))
    )
    timeout = _timeout()
    deadline = time.monotonic() + timeout
    for target in targets:
        try:
            text = ctx.store.read_bytes(target).decode("utf-8", errors="replace")
        except ToolError:
            continue  # linked or vanished meanwhile: skipped, as ripgrep's path skips it
        path = ctx.store.root.joinpath(*target.parts)
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        for n, line in enumerate(lines, start=1):
            try:
                # concurrent=True releases the GIL while matching: a slow pattern must not stall
                # the server's other threads (its event loop included).
                hit = rx.search(line, timeout=max(0.001, deadline - time.monotonic()), concurrent=True)
            except TimeoutError:
                raise ToolError(
                    f"grep took over {timeout:g} s; simplify the pattern (nested repetition such as "
                    "'(a+)+' backtracks) or narrow the path"
                ) from None
            if hit:
                yield path, n, line.rstrip("\r")


def _shown_path(ctx: ToolContext, disk_path: Path, folders: dict[Path, MemoryPath]) -> MemoryPath | None:
    """The memory path of a file the scan reported, or None if it must not be shown: anything
    but a plain file with one link (a hard link may lead out of the store), or a name no tool
    could open (hidden, or holding a newline or other character memory paths refuse).
    Each folder's real path is resolved once per search (`folders`), not once per hit: on 1,000
    hits the per-hit realpath was most of grep's own time."""
    try:
        st = os.lstat(disk_path)
        folder = folders.get(disk_path.parent)
        if folder is None:
            folder = folders[disk_path.parent] = ctx.store.confine.memory_path(disk_path.parent)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        return None
    hit_mp = folder.child(disk_path.name)
    return hit_mp if nameable(hit_mp) else None


@tool(
    description="""
    Search .md files line by line with a regular expression (never across lines); frontmatter
    lines are searched too. Returns matching lines as path:line: text. path may be a folder
    (searched recursively) or one .md file.
    """,
    params={
        "pattern": "A regular expression, matched against each line.",
        "path": "Folder or .md file to search; default /memories.",
        "case_sensitive": "Match case exactly (default false).",
        "max_results": f"Most matching lines to return (default 100, at most {MAX_RESULTS}).",
    },
    read_only=True,
    title="Search lines by regular expression",
    output_schema=outputs.GREP,
)
def grep(
    ctx: ToolContext,
    pattern: str,
    path: str = "/memories",
    case_sensitive: bool = False,
    max_results: int = DEFAULT_MAX_RESULTS,
) -> str:
    mp, disk = ctx.store.resolve(path)
    if not disk.exists():
        raise NotFoundError(f"{mp.text} does not exist; grep a folder or a .md file that exists")
    if disk.is_file() and not mp.name.endswith(".md"):
        raise PathError(f"{mp.text} is not a .md file; grep searches .md files")
    if max_results < 1:
        raise EditError(f"max_results must be at least 1 (at most {MAX_RESULTS})")
    limit = min(max_results, MAX_RESULTS)
    if pattern == "":
        raise EditError("pattern is empty; give a regular expression to look for")
    if "\0" in pattern:  # no line of a text file holds one, and no process argument can
        raise EditError("pattern holds a NUL character; give a regular expression without one")
    hits = (
        _rg_hits(pattern, disk, case_sensitive, ctx.store, mp)
        if _rg()
        else _py_hits(ctx, pattern, mp, case_sensitive)
    )
    out: list[str] = []
    matches: list[JsonObject] = []
    size = 0
    stop = ""
    folders: dict[Path, MemoryPath] = {}
    last: tuple[Path, MemoryPath | None] | None = None
    for disk_path, lineno, line in hits:
        if last is None or last[0] != disk_path:  # hits come grouped by file: check each file once
            last = (disk_path, _shown_path(ctx, disk_path, folders))
        hit_mp = last[1]
        if hit_mp is None:
            continue
        if len(out) >= limit:
            stop = (
                f"stopped at max_results={max_results}; narrow the pattern or path, or raise max_results"
                if limit == max_results
                else f"stopped at {MAX_RESULTS} lines, the most grep returns; narrow the pattern or path"
            )
            break
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" …[{len(line) - MAX_LINE_CHARS} more characters]"
        shown = f"{hit_mp.text}:{lineno}: {line}"
        size += len(shown.encode("utf-8")) + 1
        if size > MAX_REPLY_BYTES:
            stop = (
                f"stopped at {MAX_REPLY_BYTES // 1024} KB of output, the most grep returns; "
                "narrow the pattern or path"
            )
            break
        ctx.touch(hit_mp)
        out.append(shown)
        matches.append({"path": hit_mp.text, "line": lineno, "text": line})
    ctx.data = {"pattern": pattern, "path": mp.text, "matches": matches, "truncated": bool(stop)}
    shown_pattern = repr(pattern) if len(pattern) <= 200 else repr(pattern[:200]) + "…"
    if not out:  # never for want of room: one clipped line is far below MAX_REPLY_BYTES
        return f"No lines match {shown_pattern} in {mp.text}."
    head = f"{len(out)} matching line(s) for {shown_pattern} in {mp.text}"
    if stop:
        head += f" ({stop})"
    return head + ":\n" + "\n".join(out)
