"""Resource bounds at full size: a 50 MB file, a 100,000-file folder, a 10 MB line, and regexes
with catastrophic backtracking, through the tools (both grep engines: ripgrep and
MEMDIR_GREP=python), BM25 search, `memdir stats` and `memdir check`.

Each operation runs in its own child process under a hard timeout, so a hang is measured as a
hang (not as a stuck script); the table gives its wall time (the operation only, imports
excluded), the child's peak RSS, and what the caller got (a clear error or a bounded answer).

    .venv/bin/python benchmarks/reliability/resource_bounds.py
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
from rich.console import Console
from rich.table import Table

MB = 1024 * 1024
FM = "---\nname: {n}\ndescription: {d}\n---\n"
CATASTROPHIC = ["(a|aa)+$", "(a+)+$", "(x+x+)+y", "^(a|a?)+$", r"(a+)+\1$", r"(\w+\s?)+$"]


def build(base: Path, files: int, big_mb: int, line_mb: int) -> dict[str, Path]:
    """The fixtures, written straight to disk (no tool writes a file over 16 MB)."""
    roots = {k: base / k for k in ("big", "many", "line", "regex")}
    for r in roots.values():
        r.mkdir(parents=True)
        (r / "MEMORY.md").write_text(FM.format(n="MEMORY", d="index") + "# Memory\n")
    with open(roots["big"] / "big.md", "w") as fh:
        fh.write(FM.format(n="big", d="a 50 MB file"))
        i = 0
        while fh.tell() < big_mb * MB:
            fh.write(f"line {i} alpha beta gamma delta {'x' * 60} needle{i % 1000}\n")
            i += 1
        fh.write("the unique last line zyzzyva\n")
    folder = roots["many"] / "notes"
    folder.mkdir()
    for i in range(files):
        (folder / f"n{i:06d}.md").write_text(
            FM.format(n=f"n{i:06d}", d=f"note {i}") + f"fact {i} word{i % 997}\n"
        )
    (roots["line"] / "wide.md").write_text(
        FM.format(n="wide", d="one 10 MB line") + "start " + "z" * (line_mb * MB) + " needle\nafter\n"
    )
    (roots["regex"] / "a.md").write_text(
        FM.format(n="a", d="backtracking bait") + "\n".join("a" * 5000 + "b" for _ in range(20)) + "\n"
    )
    return roots


def ops(roots: dict[str, Path]) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """(label, kind, arguments, extra env) of every measured operation."""
    big, many, line, rx = (str(roots[k]) for k in ("big", "many", "line", "regex"))
    py = {"MEMDIR_GREP": "python"}
    out: list[tuple[str, str, dict[str, Any], dict[str, str]]] = [
        (
            "50 MB file: view whole",
            "tool",
            {"root": big, "name": "view", "args": {"path": "/memories/big.md"}},
            {},
        ),
        (
            "50 MB file: view lines 300000-300050",
            "tool",
            {
                "root": big,
                "name": "view",
                "args": {"path": "/memories/big.md", "start_line": 300_000, "end_line": 300_050},
            },
            {},
        ),
        (
            "50 MB file: grep last line (ripgrep)",
            "tool",
            {"root": big, "name": "grep", "args": {"pattern": "zyzzyva"}},
            {},
        ),
        (
            "50 MB file: grep last line (python)",
            "tool",
            {"root": big, "name": "grep", "args": {"pattern": "zyzzyva"}},
            py,
        ),
        (
            "50 MB file: grep a common word (ripgrep)",
            "tool",
            {"root": big, "name": "grep", "args": {"pattern": "alpha"}},
            {},
        ),
        (
            "50 MB file: str_replace",
            "tool",
            {
                "root": big,
                "name": "str_replace",
                "args": {
                    "path": "/memories/big.md",
                    "old_str": "the unique last line zyzzyva",
                    "new_str": "changed",
                },
            },
            {},
        ),
        (
            "50 MB file: bm25_full_search (index build)",
            "tool",
            {"root": big, "name": "bm25_full_search", "args": {"query": "zyzzyva"}},
            {},
        ),
        (
            "50 MB file: bm25_full_search (warm)",
            "tool",
            {"root": big, "name": "bm25_full_search", "args": {"query": "needle7 gamma"}},
            {},
        ),
        ("50 MB file: memdir stats", "cli", {"argv": ["stats", "--json", big]}, {}),
        ("50 MB file: memdir check", "cli", {"argv": ["check", "--json", big]}, {}),
        (
            "100k files: view folder",
            "tool",
            {"root": many, "name": "view", "args": {"path": "/memories/notes"}},
            {},
        ),
        ("100k files: view root", "tool", {"root": many, "name": "view", "args": {"path": "/memories"}}, {}),
        (
            "100k files: grep (ripgrep)",
            "tool",
            {"root": many, "name": "grep", "args": {"pattern": "word996$"}},
            {},
        ),
        (
            "100k files: grep (python)",
            "tool",
            {"root": many, "name": "grep", "args": {"pattern": "word996$"}},
            py,
        ),
        (
            "100k files: bm25_full_search (index build)",
            "tool",
            {"root": many, "name": "bm25_full_search", "args": {"query": "fact 99999"}},
            {},
        ),
        (
            "100k files: bm25_full_search (warm)",
            "tool",
            {"root": many, "name": "bm25_full_search", "args": {"query": "word5 note"}},
            {},
        ),
        (
            "100k files: create one more",
            "tool",
            {
                "root": many,
                "name": "create",
                "args": {"path": "/memories/notes/extra.md", "file_text": FM.format(n="extra", d="x")},
            },
            {},
        ),
        (
            "100k files: create another (journal exists)",
            "tool",
            {
                "root": many,
                "name": "create",
                "args": {"path": "/memories/notes/extra2.md", "file_text": FM.format(n="extra2", d="x")},
            },
            {},
        ),
        ("100k files: memdir stats", "cli", {"argv": ["stats", "--json", many]}, {}),
        ("100k files: memdir check", "cli", {"argv": ["check", "--json", many]}, {}),
        (
            "10 MB line: grep (ripgrep)",
            "tool",
            {"root": line, "name": "grep", "args": {"pattern": "needle"}},
            {},
        ),
        (
            "10 MB line: grep (python)",
            "tool",
            {"root": line, "name": "grep", "args": {"pattern": "needle"}},
            py,
        ),
        (
            "10 MB line: view that line",
            "tool",
            {
                "root": line,
                "name": "view",
                "args": {"path": "/memories/wide.md", "start_line": 5, "end_line": 5},
            },
            {},
        ),
        (
            "10 MB line: view whole",
            "tool",
            {"root": line, "name": "view", "args": {"path": "/memories/wide.md"}},
            {},
        ),
        (
            "10 MB line: bm25_full_search",
            "tool",
            {"root": line, "name": "bm25_full_search", "args": {"query": "needle after"}},
            {},
        ),
        ("10 MB line: memdir check", "cli", {"argv": ["check", "--json", line]}, {}),
    ]
    for pat in CATASTROPHIC:
        out.append(
            (
                f"regex {pat}: grep (ripgrep)",
                "tool",
                {"root": rx, "name": "grep", "args": {"pattern": pat}},
                {},
            )
        )
        out.append(
            (
                f"regex {pat}: grep (python)",
                "tool",
                {"root": rx, "name": "grep", "args": {"pattern": pat}},
                py,
            )
        )
        out.append(
            (
                f"regex {pat}: bm25_full_search",
                "tool",
                {"root": rx, "name": "bm25_full_search", "args": {"query": pat}},
                {},
            )
        )
    out.append(
        (
            "1 MB query: bm25_full_search",
            "tool",
            {"root": rx, "name": "bm25_full_search", "args": {"query": "a b c " * 170_000}},
            {},
        )
    )
    return out


def child(spec_json: str) -> None:
    """Run one operation and print {seconds, is_error, chars, head} as JSON."""
    spec = json.loads(sys.stdin.read() if spec_json == "-" else spec_json)
    if spec["kind"] == "tool":
        from memdir.tools.profiles import Harness
        from memdir.tools.wiring import open_store

        h = Harness(open_store(spec["root"]), "manage-bm25")
        t, c = time.perf_counter(), time.process_time()
        r = h.call(spec["name"], spec["args"])
        seconds, is_error, text = time.perf_counter() - t, r.is_error, r.text
    else:
        from click.testing import CliRunner

        from memdir.cli.main import cli

        t, c = time.perf_counter(), time.process_time()
        res = CliRunner().invoke(cli, spec["argv"])
        seconds, is_error, text = time.perf_counter() - t, res.exit_code not in (0, 1), res.output
        if res.exception and not isinstance(res.exception, SystemExit):
            is_error, text = True, f"{type(res.exception).__name__}: {res.exception}"
    cpu = time.process_time() - c  # this process only (ripgrep runs in a child of it)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # imports included
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_s": round(cpu, 2),
                "is_error": is_error,
                "chars": len(text),
                "peak_rss_mb": round(peak_mb),
                "head": text[:300],
            }
        )
    )


def run(label: str, kind: str, args: dict[str, Any], extra: dict[str, str], timeout: float) -> dict[str, Any]:
    env = {**_common.env(), **extra, "MEMDIR_GREP_TIMEOUT": "10"}
    cmd = [sys.executable, __file__, "--child", "-"]  # the operation comes on stdin (a 1 MB query)
    proc = subprocess.Popen(
        cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    t = time.monotonic()
    try:
        out, err = proc.communicate(json.dumps({"kind": kind, **args}).encode(), timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        hung = True
    wall = time.monotonic() - t
    row: dict[str, Any] = {"op": label, "hung": hung, "wall_s": round(wall, 2)}
    try:
        row.update(json.loads(out.decode().strip().split("\n")[-1]))
        row["seconds"] = round(row["seconds"], 2)
    except (ValueError, IndexError):
        row.update(
            {"seconds": None, "cpu_s": None, "is_error": True, "chars": 0, "head": err.decode()[-300:]}
        )
        row["peak_rss_mb"] = None
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--big-mb", type=int, default=50)
    ap.add_argument("--line-mb", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=600, help="seconds before an operation counts as a hang")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    console = Console()
    base = Path(tempfile.mkdtemp(prefix="memdir-bounds-"))
    t = time.monotonic()
    with console.status("writing fixtures ..."):
        roots = build(base, args.files, args.big_mb, args.line_mb)
    console.print(f"fixtures written in {time.monotonic() - t:.0f} s under {base}")
    rows = []
    table = Table(title="resource bounds (each operation in its own process)")
    for col in ("operation", "seconds", "CPU s", "peak RSS MB", "result", "answer (start)"):
        table.add_column(col)
    for label, kind, a, extra in ops(roots):
        row = run(label, kind, a, extra, args.timeout)
        rows.append(row)
        result = "HANG" if row["hung"] else ("error" if row["is_error"] else "answer")
        console.print(f"{label}: {row['seconds']} s (CPU {row['cpu_s']} s), {result}, {row['chars']} chars")
        table.add_row(
            label,
            str(row["seconds"]),
            str(row["cpu_s"]),
            str(row["peak_rss_mb"]),
            result,
            row["head"][:90].replace("\n", " | "),
        )
    console.print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "resource_bounds.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False))
    ok = not any(r["hung"] or r["seconds"] is None for r in rows)
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
