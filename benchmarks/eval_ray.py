"""The conversational study's cells run locally (one event loop, the default) and as Ray tasks
(`--executor ray`), side by side in one run: wall time of the whole run, Ray's cluster start
shown apart, and whether the two summaries agree (every figure but the builds' wall times).

The cells are offline (no model calls), so what this measures is the executor's overhead and
its spread over cores, not a provider's latency: with model calls, which wait on the network,
a cell's wall time is far longer and the cells in flight add up. The local run is the baseline.

    python benchmarks/eval_ray.py [--conversations 4] [--cpus 2] [--out runs] [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import machine, table, timed, write_json
from rich.console import Console

from memdir_study.eval.ray_executor import RayExecutor
from memdir_study.eval.runner import RunConfig, run_eval

VARIANTS = ["chunk-retrieval", "verbatim-dump", "agent-curated"]


def conversations(n: int) -> list[str]:
    """Generated samples of ten sessions each (bench/generated.py): distinct seeds, one size."""
    return [f"gen-s{seed}-p3-n10-t6-a3-c2" for seed in range(1, n + 1)]


def same_summary(a: Path, b: Path) -> bool:
    """summary.json byte for byte (it holds no wall time: those are in timings.json)."""
    return (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=4)
    ap.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    ap.add_argument("--out", type=Path, default=Path("runs"))
    ap.add_argument("--quick", action="store_true", help="two conversations")
    args = ap.parse_args()
    n = 2 if args.quick else args.conversations
    convs = conversations(n)

    def config() -> RunConfig:
        return RunConfig(
            benchmark="generated",
            conversations=convs,
            variants=VARIANTS,
            builder_model="offline",
            search_model="offline",
        )

    import ray

    with tempfile.TemporaryDirectory() as tmp:
        local_s, _ = timed(lambda: run_eval(config(), Path(tmp) / "local", progress=False))
        start_s, _ = timed(
            lambda: ray.init(
                num_cpus=args.cpus,
                include_dashboard=False,
                log_to_driver=False,
                object_store_memory=200 * 1024 * 1024,
            )
        )
        try:
            ray_s, _ = timed(
                lambda: run_eval(config(), Path(tmp) / "ray", progress=False, executor=RayExecutor())
            )
            # a second run on the warm cluster: the workers' imports already paid
            warm_s, _ = timed(
                lambda: run_eval(config(), Path(tmp) / "ray-warm", progress=False, executor=RayExecutor())
            )
        finally:
            ray.shutdown()
        agree = same_summary(Path(tmp) / "local", Path(tmp) / "ray")
    cells = n * len(VARIANTS)
    rows = [
        ("local (baseline)", f"{local_s:.1f}", "-", f"{cells / local_s:.2f}", "1.00x"),
        (
            "ray, cold workers",
            f"{ray_s:.1f}",
            f"{start_s:.1f}",
            f"{cells / ray_s:.2f}",
            f"{local_s / ray_s:.2f}x",
        ),
        ("ray, warm workers", f"{warm_s:.1f}", "-", f"{cells / warm_s:.2f}", f"{local_s / warm_s:.2f}x"),
    ]
    console = Console()
    console.print(
        table(
            f"{cells} offline cells ({n} conversations x {len(VARIANTS)} variants), Ray on {args.cpus} CPUs",
            ["executor", "run s", "cluster start s", "cells/s", "speed-up"],
            rows,
        )
    )
    console.print(f"summaries agree (builds' wall times aside): {agree}")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    write_json(
        args.out / f"bench-eval-ray-{stamp}" / "results.json",
        {
            "machine": machine(),
            "cells": cells,
            "local_s": local_s,
            "ray_start_s": start_s,
            "ray_s": ray_s,
            "ray_warm_s": warm_s,
            "summaries_agree": agree,
        },
    )


if __name__ == "__main__":
    main()
