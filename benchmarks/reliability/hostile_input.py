"""Hostile input at full size: each case is one operation on a hostile fixture, run in its own
child process under a hard timeout, so a hang is measured as a hang. The table gives the wall
time of the operation (imports excluded), the child's peak RSS (imports included) and what the
caller got: a clear error, an answer, or a HANG (the child killed at the timeout).

Sections (one table of cases; `--only SECTION` runs some of them):
- `yaml`: the "billion laughs" alias bomb (under 400 bytes, 9 anchors of 9 aliases each) in a
  memory file's frontmatter (`memdir search`, `validate`, `check`, `stats`, a `create` through
  the Harness under manage-bm25) and in a tenants file.
- `ingest`: `memdir ingest --model offline` of a 150 MB single-turn JSONL, of `[1,2,3]`, of a
  JSON list nested 200,000 deep, and of a turn holding a lone surrogate (`"\\ud800"`).

    .venv/bin/python benchmarks/reliability/hostile_input.py [--only yaml] [--timeout 120]
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from tests.hostile import alias_bomb

FM = "---\nname: {n}\ndescription: {d}\n---\n"


@dataclass(frozen=True)
class Case:
    """One measured operation: `build(base)` writes its fixture under `base` and returns the
    spec the child runs (`kind` names the runner in RUNNERS; the rest are its arguments).
    `expect` is what a caller must get: "error" (a clear refusal or finding) or "answer"."""

    section: str
    label: str
    build: Callable[[Path], dict[str, Any]]
    expect: str


# --- fixtures -----------------------------------------------------------------------------------


def _bomb_store(base: Path) -> Path:
    """A store holding the bomb and one ordinary file (built once, shared by the yaml cases)."""
    root = base / "bomb-store"
    if not root.exists():
        root.mkdir(parents=True)
        (root / "MEMORY.md").write_text(FM.format(n="MEMORY", d="index") + "# Memory\n")
        (root / "laughs.md").write_text(alias_bomb())
        (root / "vegan.md").write_text(FM.format(n="vegan", d="diet") + "Alice is vegan\n")
    return root


def _cli_on_bomb(*argv: str) -> Callable[[Path], dict[str, Any]]:
    def build(base: Path) -> dict[str, Any]:
        root = str(_bomb_store(base))
        return {"kind": "cli", "argv": [a.replace("ROOT", root) for a in argv]}

    return build


def _create_bomb(base: Path) -> dict[str, Any]:
    root = base / "create-store"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text(FM.format(n="MEMORY", d="index") + "# Memory\n")
    (root / "vegan.md").write_text(FM.format(n="vegan", d="diet") + "Alice is vegan\n")
    args = {"path": "/memories/laughs.md", "file_text": alias_bomb()}
    return {"kind": "tool", "root": str(root), "profile": "manage-bm25", "name": "create", "args": args}


def _tenants_bomb(base: Path) -> dict[str, Any]:
    raw = alias_bomb().split("---\n")[1]
    indented = "".join(f"    {line}\n" for line in raw.splitlines())
    f = base / "tenants.yaml"
    f.write_text(f"- token_sha256: {'0' * 64}\n  tenant: t\n  profile: manage\n  root:\n{indented}")
    return {"kind": "tenants", "path": str(f)}


def _ingest(name: str, write: Callable[[Path], object]) -> Callable[[Path], dict[str, Any]]:
    def build(base: Path) -> dict[str, Any]:
        f = base / name
        write(f)
        root = base / f"ingest-{f.stem}"
        return {"kind": "cli", "argv": ["ingest", str(root), "--model", "offline", str(f)]}

    return build


def _one_huge_turn(f: Path, mb: int = 150) -> None:
    with open(f, "w") as fh:
        fh.write('{"locator": "S1T1", "speaker": "A", "text": "')
        block = "y" * 2**20
        for _ in range(mb):
            fh.write(block)
        fh.write('"}\n')


def _surrogate(f: Path) -> None:
    turns = [
        {"locator": "S1T1", "speaker": "Alice", "text": "Alice is vegan \ud800 since 2020"},
        {"locator": "S1T2", "speaker": "Bob", "text": "noted"},
    ]
    f.write_text("".join(json.dumps(t) + "\n" for t in turns))  # json.dumps writes "\ud800" escaped


CASES = [
    Case("yaml", "alias bomb on disk: memdir search", _cli_on_bomb("search", "ROOT", "vegan"), "answer"),
    Case("yaml", "alias bomb on disk: memdir validate", _cli_on_bomb("validate", "ROOT"), "error"),
    Case("yaml", "alias bomb on disk: memdir check", _cli_on_bomb("check", "ROOT"), "error"),
    Case("yaml", "alias bomb on disk: memdir stats", _cli_on_bomb("stats", "--json", "ROOT"), "answer"),
    Case("yaml", "alias bomb: create through the Harness (manage-bm25)", _create_bomb, "error"),
    Case("yaml", "alias bomb in the tenants file: load", _tenants_bomb, "error"),
    Case("ingest", "ingest: 150 MB single-turn JSONL", _ingest("huge.jsonl", _one_huge_turn), "error"),
    Case("ingest", "ingest: [1,2,3]", _ingest("list.json", lambda f: f.write_text("[1,2,3]")), "error"),
    Case(
        "ingest",
        "ingest: JSON nested 200,000 deep",
        _ingest("deep.json", lambda f: f.write_text("[" * 200_000 + "]" * 200_000)),
        "error",
    ),
    Case("ingest", "ingest: lone surrogate in a turn", _ingest("surrogate.jsonl", _surrogate), "answer"),
]
SECTIONS = sorted({c.section for c in CASES})


# --- the child: one operation, timed --------------------------------------------------------------


def _run_cli(spec: dict[str, Any]) -> tuple[bool, str]:
    from click.testing import CliRunner

    from memdir.cli.main import cli

    res = CliRunner().invoke(cli, spec["argv"])
    if res.exception and not isinstance(res.exception, SystemExit):
        return True, f"{CRASH}{type(res.exception).__name__}: {res.exception}"
    return res.exit_code != 0, f"exit {res.exit_code}: {res.output}"


def _run_tool(spec: dict[str, Any]) -> tuple[bool, str]:
    from memdir.tools.profiles import Harness
    from memdir.tools.wiring import open_store

    r = Harness(open_store(spec["root"]), spec["profile"]).call(spec["name"], spec["args"])
    return r.is_error, r.text


def _run_tenants(spec: dict[str, Any]) -> tuple[bool, str]:
    from memdir.errors import MemdirError
    from memdir.mcp import tenants

    try:
        return False, f"{len(tenants.load(spec['path']).tokens)} token(s)"
    except MemdirError as exc:
        return True, str(exc)


CRASH = "crash (a traceback, not a clear error): "
RUNNERS: dict[str, Callable[[dict[str, Any]], tuple[bool, str]]] = {
    "cli": _run_cli,
    "tool": _run_tool,
    "tenants": _run_tenants,
}


def child() -> None:
    """Run the spec on stdin and print {seconds, peak_rss_mb, is_error, head} as JSON."""
    spec = json.loads(sys.stdin.read())
    run = RUNNERS[spec["kind"]]
    for module in ("memdir.cli.main", "memdir.mcp.tenants", "memdir.tools.profiles"):
        importlib.import_module(module)  # imports are not the operation: not timed
    t = time.perf_counter()
    is_error, text = run(spec)
    seconds = time.perf_counter() - t
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"seconds": seconds, "peak_rss_mb": round(peak_mb), "is_error": is_error, "head": text[:400]}
        )
    )


def measure(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run `spec` in a child under `timeout`; a child still running then is killed: a HANG."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child"],
        env=_common.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(json.dumps(spec).encode(), timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        hung = True
    try:
        row: dict[str, Any] = json.loads(out.decode().strip().split("\n")[-1])
        row["seconds"] = round(row["seconds"], 3)
    except (ValueError, IndexError):
        row = {"seconds": None, "peak_rss_mb": None, "is_error": True, "head": err.decode()[-400:]}
    row["hung"] = hung
    return row


def outcome(row: dict[str, Any], timeout: float) -> tuple[str, bool]:
    """What the caller got, in words, and whether it is what the case expects."""
    if row["hung"]:
        return f"HANG (killed at {timeout:.0f} s)", False
    if row["seconds"] is None:
        return "child died: " + row["head"].strip().split("\n")[-1], False
    got = "error" if row["is_error"] else "answer"
    first = " | ".join(line.strip() for line in row["head"].strip().split("\n")[:3] if line.strip())
    return f"{got}: {first[:200]}", got == row["expect"] and not row["head"].startswith(CRASH)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--only", action="append", choices=SECTIONS, help="Run only this section (repeat for several)."
    )
    ap.add_argument("--timeout", type=float, default=120, help="seconds before an operation counts as a hang")
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child()
        return
    console = Console(width=max(Console().width, 150))
    cases = [c for c in CASES if not args.only or c.section in args.only]
    base = Path(tempfile.mkdtemp(prefix="memdir-hostile-"))
    rows = []
    table = Table(title=f"hostile input (each case in its own process, timeout {args.timeout:.0f} s)")
    for col in ("section", "case", "seconds", "peak RSS MB", "outcome"):
        table.add_column(col, overflow="fold", max_width=70 if col == "outcome" else None)
    try:
        for case in cases:
            spec = case.build(base)
            row: dict[str, Any] = {"section": case.section, "case": case.label, "expect": case.expect}
            row.update(measure(spec, args.timeout))
            row["head"] = row["head"].replace(f"{base}/", "")  # the fixture's temp folder, noise
            row["outcome"], row["as_expected"] = outcome(row, args.timeout)
            rows.append(row)
            mark = "" if row["as_expected"] else f"[bold red]NOT AS EXPECTED ({case.expect})[/] "
            console.print(
                f"{case.label}: {row['seconds']} s, {row['peak_rss_mb']} MB, {escape(row['outcome'][:100])}"
            )
            table.add_row(
                case.section,
                case.label,
                str(row["seconds"]),
                str(row["peak_rss_mb"]),
                mark + escape(row["outcome"][:140]),
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)  # the 150 MB fixture
    console.print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "hostile_input.json").write_text(json.dumps(rows, indent=2, ensure_ascii=False))
    ok = all(r["as_expected"] for r in rows)
    console.print(
        "[bold green]PASS[/] (no hang, no crash, each outcome as expected)" if ok else "[bold red]FAIL[/]"
    )
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
