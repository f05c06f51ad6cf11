"""`memdir ui` on a 10,000-file store: how long the first page (the tree at the root, with the
core-memory gauge) takes, against the same page of a 200-file store measured in the same run.

Each store is served by the real `memdir ui` process. Per store: the first page request after
the server starts (cold: the store not opened yet), then the median of repeated requests, over
one HTTP connection;
and, where Debian's chromium exists, the browser's own time from navigation to the load event
(the page rendered, its script run). Target (issue 17): under 1 s for 10,000 files.

    python benchmarks/ui_first_page.py [--files 10000] [--reps 20] [--out runs/bench-ui] [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import REPO, build_store, env, stats_ms, table, timed, write_json

TARGET_S = 1.0


def start(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", str(root), "--port", "0"],
        env={**env(), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"memdir ui did not print its URL (got {line!r})")
    return proc, line.rstrip("/")


def browser_ms(url: str, reps: int) -> list[float] | None:
    """Navigation to load event, in the browser's own clock; None without chromium."""
    sys.path.insert(0, str(REPO / "tests"))
    from ui_helpers import Browser, chrome_missing

    if chrome_missing() is not None:
        return None
    b = Browser()
    try:
        out: list[float] = []
        for _ in range(reps):
            b.driver.get(url)
            t = b.driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0];"
                " return n.loadEventEnd - n.startTime;"
            )
            out.append(float(t) / 1000)
        return out
    finally:
        b.close()


def measure(root: Path, reps: int) -> dict[str, Any]:
    import httpx

    proc, base = start(root)
    try:
        # One client, its connection opened on a static file first: the figures are the
        # server's, not the client's setup (a fresh httpx client costs ~100 ms here).
        client = httpx.Client(timeout=120)
        client.get(base + "/static/ui.css").raise_for_status()
        page = base + "/s/store/tree"
        cold, first = timed(lambda: client.get(page))
        assert first.status_code == 200 and "always loaded" in first.text
        warm = [timed(lambda: client.get(page))[0] for _ in range(reps)]
        folder = base + "/s/store/children?path=/memories/people"
        expand = [timed(lambda: client.get(folder))[0] for _ in range(reps)]
        client.close()
        shown = browser_ms(page, max(3, reps // 4))
        return {
            "cold_s": cold,
            "warm": stats_ms(warm),
            "expand_folder": stats_ms(expand),
            "browser": stats_ms(shown) if shown else None,
            "bytes": len(first.content),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--baseline-files", type=int, default=200)  # the generator needs 172+
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "bench-ui")
    ap.add_argument("--quick", action="store_true", help="1,000 files, 5 repetitions")
    args = ap.parse_args()
    if args.quick:
        args.files, args.reps = 1_000, 5
    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-ui-"))
    try:
        results: dict[str, Any] = {}
        for label, n in (("baseline", args.baseline_files), ("large", args.files)):
            root = tmp / label
            build_store(root, n)
            files = sum(1 for p in root.rglob("*.md"))
            results[label] = {"files": files, **measure(root, args.reps)}
        rows = []
        for label in ("baseline", "large"):
            r = results[label]
            b = r["browser"]
            rows.append(
                (
                    f"{r['files']:,}",
                    f"{r['cold_s'] * 1000:.0f}",
                    f"{r['warm']['median_ms']:.0f}",
                    f"{r['warm']['p90_ms']:.0f}",
                    f"{b['median_ms']:.0f}" if b else "n/a",
                    f"{r['expand_folder']['median_ms']:.0f}",
                    f"{r['bytes'] / 1024:.1f}",
                )
            )
        cols = (
            "files",
            "first ms (cold)",
            "median ms",
            "p90 ms",
            "browser load ms",
            "open folder ms",
            "page KiB",
        )
        from rich.console import Console

        Console().print(table("memdir ui: the first page (tree at the root)", cols, rows))
        large, base = results["large"], results["baseline"]
        worst = max(large["cold_s"], large["warm"]["p90_ms"] / 1000)
        ratio = large["warm"]["median_ms"] / max(base["warm"]["median_ms"], 1e-9)
        print(
            f"{large['files']:,} files: first page {large['cold_s'] * 1000:.0f} ms cold, "
            f"{large['warm']['median_ms']:.0f} ms median; {ratio:.1f}x the {base['files']:,}-file page; "
            f"target < {TARGET_S * 1000:.0f} ms: {'met' if worst < TARGET_S else 'MISSED'}"
        )
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(args.out / "ui_first_page.json", {"target_s": TARGET_S, **results})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
