"""`memdir ui --tenants`: does one tenant's history wait behind another's, and what does the
server's private folder hold and keep (issue 33, defect 10)?

Two tenants behind one real `memdir ui` process: alpha's store has a long journal (its growth
replay takes seconds), beta's a short one whose history page was drawn once already. alpha's
history page is requested cold and, while its replay runs, beta's: the figure is how long
beta's page took. Then `diff --facts` is asked for `--pairs` pairs of alpha's steps, and the
snapshots left in the private folder are counted; last, the server gets SIGTERM and the script
says whether the folder outlived it. `--baseline REV` runs the same with that commit's code.

    python benchmarks/ui_history_tenants.py [--steps 2000] [--pairs 12] [--baseline REV]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import REPO, baseline_tree, env, table, timed, write_json


def build(root: Path, steps: int) -> None:
    from memdir.api.memory import Memory

    mem = Memory(root)
    for i in range(steps):
        r = mem.call(
            "create",
            {
                "path": f"/memories/t{i % 40}/n{i}.md",
                "file_text": f"---\nname: n{i}\ndescription: note {i}\n---\n# N{i}\n\n"
                f"- fact {i} [S1T{i + 1}]\n",
            },
        )
        if r.is_error:
            raise RuntimeError(r.text)


def serve(tenants: Path, src: Path | None, tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    code = {} if src is None else {"PYTHONPATH": str(src)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", "--tenants", str(tenants), "--port", "0"],
        env={**env(), "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp), **code},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"memdir ui did not print its URL (got {line!r})")
    return proc, line.rstrip("/")


def run(tenants: Path, tokens: dict[str, str], src: Path | None, pairs: int) -> dict[str, Any]:
    import httpx

    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-tmp-"))
    proc, base = serve(tenants, src, tmp)
    try:
        client = httpx.Client(timeout=900)
        auth = {k: {"authorization": f"Bearer {v}"} for k, v in tokens.items()}
        client.get(base + "/s/beta/history", headers=auth["beta"]).raise_for_status()  # beta's plots drawn
        beta_alone, _ = timed(lambda: client.get(base + "/s/beta/history", headers=auth["beta"]))
        got: dict[str, float] = {}

        def alpha() -> None:
            got["alpha_s"], r = timed(
                lambda: httpx.get(base + "/s/alpha/history", headers=auth["alpha"], timeout=900)
            )
            r.raise_for_status()

        worker = threading.Thread(target=alpha)
        worker.start()
        time.sleep(0.5)  # alpha's replay under way (it takes seconds)
        beta_s, r = timed(lambda: client.get(base + "/s/beta/history", headers=auth["beta"]))
        r.raise_for_status()
        worker.join()
        for i in range(pairs):
            client.get(
                base + "/s/alpha/facts", params={"old": i, "new": i + 1}, headers=auth["alpha"]
            ).raise_for_status()
        private = [p for p in tmp.iterdir() if p.name.startswith("memdir-ui-")]
        snaps = (
            [p for p in (private[0] / "snapshots").iterdir() if not p.name.startswith(".")] if private else []
        )
        size = sum(f.stat().st_size for s in snaps for f in s.rglob("*") if f.is_file())
        client.close()
        proc.terminate()
        proc.wait(timeout=120)
        left = any(p.name.startswith("memdir-ui-") for p in tmp.iterdir())
        return {
            "alpha_history_s": got["alpha_s"],
            "beta_history_alone_s": beta_alone,
            "beta_history_beside_alpha_s": beta_s,
            "snapshots_kept": len(snaps),
            "snapshot_kb": size / 1024,
            "private_folder_left_after_sigterm": left,
        }
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=2000, help="alpha's journal steps")
    ap.add_argument("--pairs", type=int, default=12, help="diff --facts requests over alpha's steps")
    ap.add_argument("--baseline", help="also run this commit's code")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "bench-ui")
    args = ap.parse_args()
    from memdir.mcp import tenants

    tmp = Path(tempfile.mkdtemp(prefix="memdir-bench-ui-tenants-"))
    try:
        build(tmp / "alpha", args.steps)
        build(tmp / "beta", 5)
        file = tmp / "tenants.json"
        tokens = {
            name: tenants.add_token(file, str(tmp / name), "search", tenant=name)
            for name in ("alpha", "beta")
        }
        codes: dict[str, Path | None] = {"now": None}
        if args.baseline:
            (tmp / "base").mkdir()
            codes = {f"baseline {args.baseline}": baseline_tree(args.baseline, tmp / "base"), **codes}
        results = {code: run(file, tokens, src, args.pairs) for code, src in codes.items()}
        rows = [
            (
                code,
                f"{r['alpha_history_s']:.2f}",
                f"{r['beta_history_alone_s']:.2f}",
                f"{r['beta_history_beside_alpha_s']:.2f}",
                str(r["snapshots_kept"]),
                f"{r['snapshot_kb']:,.0f}",
                "yes" if r["private_folder_left_after_sigterm"] else "no",
            )
            for code, r in results.items()
        ]
        cols = (
            "code",
            "alpha history s (cold)",
            "beta history s alone",
            "beta history s beside alpha's",
            f"snapshots kept after {args.pairs} diff --facts",
            "their KiB",
            "folder left after SIGTERM",
        )
        from rich.console import Console

        Console().print(table(f"memdir ui --tenants: alpha {args.steps} steps, beta 5", cols, rows))
        args.out.mkdir(parents=True, exist_ok=True)
        write_json(
            args.out / "ui_history_tenants.json", {"steps": args.steps, "load": os.getloadavg()[0], **results}
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
