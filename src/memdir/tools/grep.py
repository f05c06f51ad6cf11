"""grep: per-line regex search over the store's .md files.

ripgrep does the scanning when it is installed (4x faster than a Python line scan on 100 MB,
and linear-time, so a hostile pattern cannot hang the harness); `--engine auto` lets patterns
with look-around or back-references fall through to PCRE2, whose match limits bound them too.
Without ripgrep a Python scan gives the same results.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from memdir.errors import EditError, NotFoundError, PathError, ToolError
from memdir.store.paths import MemoryPath
from memdir.tools.base import ToolContext, tool

MAX_LINE_CHARS = 400
DEFAULT_MAX_RESULTS = 100
TIMEOUT_S = 30.0


def _rg() -> str | None:
    return shutil.which("rg")


def _rg_hits(
    pattern: str, target: Path, case_sensitive: bool, root: Path
) -> Iterator[tuple[Path, int, str]]:
    cmd = [
        _rg() or "rg", "--no-config", "--no-heading", "--with-filename", "--line-number",
        "--null", "--no-ignore", "--color", "never", "--sort", "path", "--engine", "auto",
        "--glob", "*.md", "--max-columns", "0",
        "--case-sensitive" if case_sensitive else "--ignore-case",
        "--regexp", pattern, "--", str(target),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root)
    assert proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + TIMEOUT_S
    try:
        for raw in proc.stdout:
            if time.monotonic() > deadline:
                raise ToolError(f"grep took over {TIMEOUT_S:.0f} s; narrow the path or the pattern")
            name, _, rest = raw.partition(b"\0")
            lineno, _, line = rest.partition(b":")
            yield Path(os.fsdecode(name)), int(lineno), line.rstrip(b"\r\n").decode("utf-8", "replace")
        proc.wait(timeout=TIMEOUT_S)
        if proc.returncode == 2:
            err = proc.stderr.read().decode("utf-8", "replace").strip()
            if "regex" in err.lower() or "parse" in err.lower():
                raise EditError(f"invalid regex {pattern!r}: {err.splitlines()[-1] if err else ''}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _md_files_in_path_order(folder: Path) -> Iterator[Path]:
    """Visible regular .md files below `folder`, lazily, in the order `rg --sort path` gives.

    Lazy so a search capped by max_results stops reading early; listing a 100,000-file store
    up front cost seconds before the first line was searched. Same rules as Store.walk: hidden
    names and symbolic links are never entered; an explicit stack, so no depth can overflow.
    """

    def sorted_entries(path: str | Path) -> Iterator[os.DirEntry[str]]:
        try:
            return iter(sorted(os.scandir(path), key=lambda e: e.name))
        except OSError:
            return iter(())

    stack = [sorted_entries(folder)]
    while stack:
        ent = next(stack[-1], None)
        if ent is None:
            stack.pop()
            continue
        if ent.name.startswith("."):
            continue
        try:
            st = ent.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            stack.append(sorted_entries(ent.path))
        elif stat.S_ISREG(st.st_mode) and ent.name.endswith(".md"):
            yield Path(ent.path)


def _py_hits(
    ctx: ToolContext, pattern: str, top: MemoryPath, case_sensitive: bool
) -> Iterator[tuple[Path, int, str]]:
    try:
        rx = re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)
    except re.error as exc:
        raise EditError(f"invalid regex {pattern!r}: {exc}") from None
    _, disk = ctx.store.resolve(top)
    entries = [disk] if disk.is_file() else _md_files_in_path_order(disk)
    for path in entries:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, start=1):
                if rx.search(line.rstrip("\n")):
                    yield path, n, line.rstrip("\r\n")


def _shown_path(ctx: ToolContext, disk_path: Path, folders: dict[Path, MemoryPath]) -> MemoryPath | None:
    """The memory path of a file the scan reported, or None if it must not be shown: anything
    but a plain file with one link (a hard link may lead out of the store), or anything hidden.
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
    return None if any(p.startswith(".") for p in hit_mp.parts) else hit_mp


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
        "max_results": "Most matching lines to return (default 100).",
    },
    read_only=True,
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
        raise EditError("max_results must be at least 1")
    if pattern == "":
        raise EditError("pattern is empty; give a regular expression to look for")
    hits = (
        _rg_hits(pattern, disk, case_sensitive, ctx.store.root)
        if _rg()
        else _py_hits(ctx, pattern, mp, case_sensitive)
    )
    out: list[str] = []
    more = False
    folders: dict[Path, MemoryPath] = {}
    last: tuple[Path, MemoryPath | None] | None = None
    for disk_path, lineno, line in hits:
        if last is None or last[0] != disk_path:  # hits come grouped by file: check each file once
            last = (disk_path, _shown_path(ctx, disk_path, folders))
        hit_mp = last[1]
        if hit_mp is None:
            continue
        if len(out) >= max_results:
            more = True
            break
        ctx.touch(hit_mp)
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" …[{len(line) - MAX_LINE_CHARS} more characters]"
        out.append(f"{hit_mp.text}:{lineno}: {line}")
    if not out:
        return f"No lines match {pattern!r} in {mp.text}."
    head = f"{len(out)} matching line(s) for {pattern!r} in {mp.text}"
    if more:
        head += f" (stopped at max_results={max_results}; narrow the pattern or path, or raise max_results)"
    return head + ":\n" + "\n".join(out)
