"""Deep folders: a 10,000-level tree made by hand (outside the tools), and a create at depth
1,300 through the tools, against every walker: the folder listing, `memdir validate`,
`memdir check`, `memdir stats`, grep (ripgrep and MEMDIR_GREP=python) for the file at the
bottom, BM25 search, the journal's first step, and deleting the tree.

Every operation runs in its own child process under a hard timeout (the child of
resource_bounds.py: wall time of the operation only, the child's peak RSS, imports included),
so a hang is measured as a hang. Before the depth limit the issue measured `view /memories`
at 18 s and 546 MB, `validate` at 114 s and `check` over 120 s, and a RecursionError from
search and delete after the create at depth 1,300.

    .venv/bin/python benchmarks/reliability/deep_trees.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common  # noqa: F401  (puts the repo on sys.path)
import resource_bounds
from rich.console import Console
from rich.table import Table

from memdir.store.safefs import remove_tree

FM = resource_bounds.FM
BEFORE = {  # figures the issue reported for the same inputs before the fix
    "deep: view /memories": "18 s, 546 MB",
    "deep: memdir validate": "114 s",
    "deep: memdir check": ">120 s",
    "1,300: bm25_full_search after the create": "RecursionError",
    "1,300: delete the folder": "RecursionError",
}


def deep_tree(root: Path, levels: int) -> str:
    """`root/deep/d/.../d/leaf.md` with `levels` folders, made by descriptor (its path is far
    longer than the system's path limit); returns the leaf's memory path."""
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(FM.format(n="MEMORY", d="index") + "# Memory\n")
    (root / "top.md").write_text(FM.format(n="top", d="a shallow file") + "zyzzyva near the top\n")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    name = "deep"
    os.mkdir(name, dir_fd=fd)
    for _ in range(levels - 1):
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd, name = nfd, "d"
        os.mkdir(name, dir_fd=fd)
    nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.close(fd)
    out = os.open("leaf.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=nfd)
    os.write(out, (FM.format(n="leaf", d="the deepest file") + "zyzzyva at the bottom\n").encode())
    os.close(out)
    os.close(nfd)
    return "/memories/deep" + "/d" * (levels - 1) + "/leaf.md"


def ops(
    deep: Path, shallow: Path, create_depth: int
) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """(label, kind, arguments, extra env), in order: the last ones write."""
    d, s = str(deep), str(shallow)
    py = {"MEMDIR_GREP": "python"}
    grep = {"pattern": "zyzzyva"}
    far = "/memories" + "/d" * create_depth + "/x.md"
    return [
        ("deep: view /memories", "tool", {"root": d, "name": "view", "args": {"path": "/memories"}}, {}),
        ("deep: memdir validate", "cli", {"argv": ["validate", d]}, {}),
        ("deep: memdir check", "cli", {"argv": ["check", d]}, {}),
        ("deep: memdir stats", "cli", {"argv": ["stats", "--json", d]}, {}),
        ("deep: grep the bottom file (ripgrep)", "tool", {"root": d, "name": "grep", "args": grep}, {}),
        ("deep: grep the bottom file (python)", "tool", {"root": d, "name": "grep", "args": grep}, py),
        (
            "deep: bm25_full_search",
            "tool",
            {"root": d, "name": "bm25_full_search", "args": {"query": "zyzzyva"}},
            {},
        ),
        (
            "deep: create a file (journal's first step)",
            "tool",
            {
                "root": d,
                "name": "create",
                "args": {"path": "/memories/new.md", "file_text": FM.format(n="new", d="x")},
            },
            {},
        ),
        (
            "deep: delete the tree",
            "tool",
            {"root": d, "name": "delete", "args": {"path": "/memories/deep"}},
            {},
        ),
        (
            f"{create_depth:,}: create at that depth",
            "tool",
            {"root": s, "name": "create", "args": {"path": far, "file_text": FM.format(n="x", d="x")}},
            {},
        ),
        (
            f"{create_depth:,}: bm25_full_search after the create",
            "tool",
            {"root": s, "name": "bm25_full_search", "args": {"query": "index"}},
            {},
        ),
        (
            f"{create_depth:,}: delete the folder",
            "tool",
            {"root": s, "name": "delete", "args": {"path": "/memories/d"}},
            {},
        ),
    ]


def rmdir_reference(base: Path, n: int) -> float:
    """Seconds to rmdir `n` empty folders side by side: what the file system charges for the
    removals alone, to read the tree deletion's time against (it removes as many folders)."""
    flat = base / "flat"
    flat.mkdir()
    for i in range(n):
        (flat / str(i)).mkdir()
    t = time.perf_counter()
    for i in range(n):
        (flat / str(i)).rmdir()
    seconds = time.perf_counter() - t
    flat.rmdir()
    return seconds


def outcome(row: dict[str, Any]) -> str:
    if row["hung"]:
        return "HANG"
    if row["seconds"] is None:
        return "crash: " + row["head"].strip().splitlines()[-1][:80] if row["head"].strip() else "crash"
    return ("error: " if row["is_error"] else "answer: ") + " ".join(row["head"].split())[:90]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", type=int, default=10_000, help="folder levels of the tree made by hand")
    ap.add_argument("--create-depth", type=int, default=1_300, help="folder levels of the create attempt")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before an operation counts as a hang")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console(width=200)
    base = Path(tempfile.mkdtemp(prefix="memdir-deep-"))
    t = time.monotonic()
    leaf = deep_tree(base / "deep", args.levels)
    shallow = base / "shallow"
    shallow.mkdir()
    (shallow / "MEMORY.md").write_text(FM.format(n="MEMORY", d="index") + "# Memory\n")
    console.print(f"{args.levels:,}-level tree written in {time.monotonic() - t:.1f} s under {base}")
    console.print(f"its bottom file: {leaf[:60]}... ({len(leaf):,} characters)")
    rows: list[dict[str, Any]] = []
    table = Table(title=f"deep trees ({args.levels:,} levels by hand; create at {args.create_depth:,})")
    for col in ("case", "seconds", "peak RSS MB", "outcome", "before (issue)"):
        table.add_column(col)
    for label, kind, a, extra in ops(base / "deep", shallow, args.create_depth):
        row = resource_bounds.run(label, kind, a, extra, args.timeout)
        row["outcome"] = outcome(row)
        row["before"] = BEFORE.get(label, "")
        rows.append(row)
        console.print(f"{label}: {row['seconds']} s, {row['peak_rss_mb']} MB, {row['outcome'][:60]}")
        table.add_row(label, str(row["seconds"]), str(row["peak_rss_mb"]), row["outcome"], row["before"])
    reference = rmdir_reference(base, args.levels)
    table.add_row(
        f"reference: rmdir {args.levels:,} empty folders side by side", f"{reference:.2f}", "", "", ""
    )
    console.print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    record = {
        "levels": args.levels,
        "create_depth": args.create_depth,
        "rows": rows,
        "rmdir_reference_s": round(reference, 2),
    }
    (args.out / "deep_trees.json").write_text(json.dumps(record, indent=2, ensure_ascii=False))
    gone = not (base / "deep" / "deep").exists()
    ok = gone and not any(r["hung"] or r["seconds"] is None for r in rows)
    console.print(f"deep tree removed by the delete: {gone}")
    parent = os.open(base.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:  # whatever is left, at any depth (shutil.rmtree recurses once per level)
        remove_tree(parent, base.name)
    finally:
        os.close(parent)
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
