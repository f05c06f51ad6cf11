"""Retrieval quality per search mode on LoCoMo and REALTALK, without any LLM.

The same code as `memdir study bench retrieval` (`memdir_study.eval.retrieval` computes, the command's
module runs, tabulates and plots): recall@k of the evidence turns over the study's chunk store
for files (the study's bm25_chunk_retrieve ranking), bm25, dense, hybrid and hybrid-convex
by section; session recall; nDCG@10; per category; build and query timings; and the search by
section over the offline-curated store against the verbatim dump.

    python benchmarks/retrieval.py [--benchmark all] [--conversation ID,...] [--modes all]
        [--questions N] [--no-sections] [--out runs/retrieval] [--fresh] [--quick]

`--quick`: conv-26 and Chat_10_Fahim_Muhhamed, 10 questions each, files and bm25 only, no
section level (seconds).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import _common  # noqa: F401  (puts src/ on sys.path)
from rich.console import Console

from memdir_study.cli.bench_cmd import BENCHMARKS, run_retrieval, tables
from memdir_study.eval.retrieval import CHUNK_MODES, mode_named


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benchmark", choices=[*BENCHMARKS, "longmemeval", "all"], default="all")
    ap.add_argument(
        "--conversation", "-c", dest="conversations", default=None, help="sample ids, comma-separated"
    )
    ap.add_argument("--conversations", dest="conversations", help=argparse.SUPPRESS)  # the old spelling
    ap.add_argument("--modes", default="all", help=f"all or some of {', '.join(CHUNK_MODES)}")
    ap.add_argument("--questions", type=int, default=None, help="at most N questions per conversation")
    ap.add_argument("--no-sections", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("runs/retrieval"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="measure again what OUT already holds")
    args = ap.parse_args()
    modes = list(CHUNK_MODES) if args.modes == "all" else [mode_named(m) for m in args.modes.split(",")]
    ids = args.conversations.split(",") if args.conversations else None
    sections = not args.no_sections
    if args.quick:
        ids, modes, sections = ["conv-26", "Chat_10_Fahim_Muhhamed"], ["files", "bm25"], False
        args.questions = args.questions or 10
    chosen = list(BENCHMARKS) if args.benchmark == "all" else [args.benchmark]
    record = run_retrieval(chosen, ids, modes, args.questions, sections, args.out, fresh=args.fresh)
    console = Console(width=150)
    for name, why in record["unavailable"].items():
        console.print(f"{name}: skipped, {why}")
    for t in tables(record):
        console.print(t)
    console.print(f"wrote {args.out / 'retrieval.json'} and retrieval.png ({record['wall_seconds']} s)")


if __name__ == "__main__":
    main()
