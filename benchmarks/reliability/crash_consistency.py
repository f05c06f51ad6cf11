"""Crash consistency at full size: a writer editing through the tools is killed with SIGKILL
at random points until 1,000 edits are acknowledged. After every kill: no file torn (each is
exactly some version), no acknowledged edit lost. At the end, the derived views must agree with
the files:
  * `memdir check` (analytics.integrity.check) finds no problem;
  * the BM25 index, maintained incrementally by the killed writers, is compared with a rebuild
    from scratch (in a copy of the files): after the catch-up sync every search runs before
    answering, both hold the same documents, and searching each file's unique `v=K` / `end F K`
    lines ranks that file first in both. Entries left stale by a kill between a file write and
    the index commit are counted before that sync;
  * the journal (`memdir history`): after every kill it holds every acknowledged edit, in a
    commit or in its step log (a step acknowledged, its commit not made yet: the first read of
    the journal commits it as its own step, `logged_not_landed` counts those it did not), and the files are
    ahead of it by at most the one edit in flight at the kill (written, not acknowledged); the
    next writer's first step commits that edit as a `recovered` step before it writes, so after
    one more edit the journal's last commit equals the files exactly.

    .venv/bin/python benchmarks/reliability/crash_consistency.py --edits 1000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/_common.py
import _common
from rich.console import Console
from rich.progress import Progress
from tests.workers import (
    N_FILES,
    crash_campaign,
    journal_behind,
    parse_version,
    seed_crash_store,
    version_text,
)

from memdir.analytics import integrity
from memdir.search.index import SearchIndex
from memdir.search.scan import scan
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def index_agreement(root: Path) -> dict[str, int]:
    """The incrementally kept index against a rebuild from scratch over a copy of the files."""
    live = SearchIndex.for_store(Store(root))
    stale_before_sync = live.sync().changed  # what the kills left behind; search syncs first anyway
    copy = Path(tempfile.mkdtemp(prefix="memdir-crash-copy-")) / "mem"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memdir"))
    fresh = SearchIndex.for_store(Store(copy))
    fresh.rebuild()
    disk = scan(root)
    out = {
        "index_stale_entries_before_sync": stale_before_sync,
        "index_docs_incremental": live.num_docs(),
        "index_docs_rebuilt": fresh.num_docs(),
        "files_on_disk": len(disk),
        "manifest_mismatches": sum(1 for p, v in disk.items() if live._load_manifest().get(p) != v),
        "searches": 0,
        "search_disagreements": 0,
        "search_misses": 0,
    }
    for f in range(N_FILES):
        k = parse_version(f, (root / f"f{f}.md").read_text())
        for q in (f"v={k} end {f} {k}", f"f{f} crash file {f} v={k}"):
            a = [h.path for h in live.search(q, top_k=3, sync=False)]
            b = [h.path for h in fresh.search(q, top_k=3, sync=False)]
            out["searches"] += 1
            out["search_disagreements"] += a[:1] != b[:1]  # the same file first (lower ranks may
            # differ by score ties: deleted documents count in BM25 statistics until a merge)
            out["search_misses"] += not a or a[0] != f"/memories/f{f}.md"
    return out


def journal_agreement(root: Path) -> dict[str, Any]:
    """Is the journal's last commit the files, before and after one more step through the
    tools? (The campaign itself checked, after every kill, that every acknowledged version
    was in the journal: `tests.workers.JournalAudit`.)"""
    j = Journal(root)
    behind = journal_behind(root)
    steps_before = len(j.steps())
    k = parse_version(0, (root / "f0.md").read_text())
    body_old = version_text(0, k).split("---\n", 2)[2]
    body_new = version_text(0, k + 1).split("---\n", 2)[2]
    res = Harness(open_store(root), "manage").call(
        "str_replace", {"path": "/memories/f0.md", "old_str": body_old, "new_str": body_new}
    )
    steps = j.steps()
    return {
        "journal_steps": steps_before,
        "journal_files_behind_at_end": len(behind),
        "journal_files_behind_after_one_more_step": len(journal_behind(root)),
        "one_more_step_ok": not res.is_error,
        "journal_steps_after": len(steps),
        "journal_new_steps": [s.tool for s in steps[steps_before:]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edits", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument(
        "--max-delay", type=float, default=0.3, help="kill after a random 0..MAX seconds of editing"
    )
    ap.add_argument("--out", type=Path, default=Path("runs/reliability"))
    args = ap.parse_args()
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="memdir-crash-")) / "mem"
    seed_crash_store(root)
    SearchIndex.for_store(open_store(root)).sync()  # an index exists, so every writer step maintains it
    t = time.monotonic()
    with Progress(console=console) as progress:
        task = progress.add_task("edits acknowledged", total=args.edits)
        result = crash_campaign(
            root,
            args.edits,
            args.seed,
            _common.REPO,
            lambda n: progress.update(task, completed=n),
            args.max_delay,
        )
    result["seconds"] = round(time.monotonic() - t, 1)
    result["validate_violations"] = len(spec.validate(open_store(root)).violations)
    report = integrity.check(Store(root))
    result["check_problems"] = [p.as_dict() for p in report.problems]
    result.update(index_agreement(root))
    result.pop("acknowledged")
    result.update(journal_agreement(root))
    console.print_json(json.dumps(result))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "crash_consistency.json").write_text(json.dumps(result, indent=2))
    ok = (
        result["torn_files"] == 0
        and result["lost_acknowledged_edits"] == 0
        and result["validate_violations"] == 0
        and not result["check_problems"]
        and result["manifest_mismatches"] == 0
        and result["index_docs_incremental"] == result["index_docs_rebuilt"] == result["files_on_disk"]
        and result["search_disagreements"] == 0
        and result["search_misses"] == 0
        and result["journal_files_behind_after_one_more_step"] == 0
        and result["acknowledged_missing_from_journal"] == 0
        and result["journal_ahead_beyond_in_flight"] == 0
        and result["logged_not_landed"] == 0
    )
    console.print("[bold green]PASS[/]" if ok else "[bold red]FAIL[/]")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
