"""Crash consistency at full size: a writer editing through the tools is killed with SIGKILL
at random points until 1,000 edits are acknowledged. After every kill: no file torn (each is
exactly some version), no acknowledged edit lost. At the end, `validate` and a fresh index
rebuild must agree with the files (when those views are installed).

    .venv/bin/python benchmarks/reliability/crash_consistency.py --edits 1000
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import _common
from rich.console import Console
from rich.progress import Progress
from tests.workers import crash_campaign, seed_crash_store

from memdir.store import spec
from memdir.store.store import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edits", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="memdir-crash-")) / "mem"
    seed_crash_store(root)
    t = time.monotonic()
    with Progress(console=console) as progress:
        task = progress.add_task("edits acknowledged", total=args.edits)
        result = crash_campaign(
            root, args.edits, args.seed, _common.REPO, lambda n: progress.update(task, completed=n)
        )
    result["seconds"] = round(time.monotonic() - t, 1)
    result["validate_violations"] = len(spec.validate(Store(root)).violations)
    console.print_json(json.dumps(result))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "crash_consistency.json").write_text(json.dumps(result, indent=2))
    ok = (
        result["torn_files"] == 0
        and result["lost_acknowledged_edits"] == 0
        and result["validate_violations"] == 0
    )
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
