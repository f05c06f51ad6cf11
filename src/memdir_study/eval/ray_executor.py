"""`memdir study eval --executor ray`: each cell of the conversational study as one Ray task.

The driver checks the manifest and repairs the folder as the local path does (eval/runner.py),
then ships each cell as a `CellTask`: the run's settings, the folder's path, the models as
`ModelSpec`s, and the cell's conversation and variant. The worker opens everything itself and
runs the same `Runner.run_cell` the local executor runs, so it writes the same marker, store,
answers and calls, through the same locked tables (memdir_study/runfolder.py); the run resumes from
them exactly as a local run does. The driver derives `summary.json` from the folder once every
cell is back, in the run's order, so the summary does not depend on where or in what order the
cells ran.

Caps hold as on one machine: each cell asks at most `in_flight` questions at once and each
model keeps its round cap (it travels in its spec); `cells_at_once` bounds the cells in flight,
so at most `cells_at_once x in_flight` questions are asked of a provider at any moment. A task
is never retried by Ray: a worker that dies fails the run, and rerunning it resumes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from memdir_study.bench import load_sample
from memdir_study.bench.types import Sample
from memdir_study.cluster import (
    ModelSpec,
    build_all,
    cluster,
    model_specs,
    remote_cell,
    run_bounded,
    worker_env,
)
from memdir_study.eval.progress import ProgressBars
from memdir_study.eval.runner import ConversationCell, RunConfig, Runner


@dataclass(frozen=True)
class CellTask:
    """All a worker needs to run one cell: settings and paths only (picklable, and no key)."""

    config: RunConfig
    out: str
    models: tuple[ModelSpec, ...]
    conversation: str
    variant: str


def play_cell(task: CellTask) -> ConversationCell:
    """Run one cell in this process (a Ray worker): the local path's own cell code."""
    runner = Runner(task.config, task.out, progress=False, models=build_all(task.models))
    sample = task.config.apply_sessions(load_sample(task.config.benchmark, task.conversation))
    with ProgressBars(False) as bars:
        cell = asyncio.run(runner.run_cell(sample, task.variant, bars))
    return cell  # Ray pickles it back to the driver


class RayExecutor:
    """Cells as Ray tasks, on the cluster at `address` or on a local `ray.init()`."""

    def __init__(
        self, address: str | None = None, *, cells_at_once: int | None = None, num_cpus: int | None = None
    ) -> None:
        self.address = address
        self.cells_at_once = cells_at_once
        self.num_cpus = num_cpus  # of a local cluster started here (None: Ray counts the cores)

    async def run_cells(
        self, runner: Runner, jobs: list[tuple[Sample, str]], bars: ProgressBars
    ) -> list[ConversationCell]:
        config = runner.config
        models = {n: runner.model(n) for n in runner.model_names()}
        specs = tuple(model_specs(models))
        out = str(Path(runner.folder.out).resolve())
        tasks = [CellTask(config, out, specs, s.id, v) for s, v in jobs]
        tick = bars.task("cells (ray)", len(tasks))
        with cluster(self.address, self.num_cpus) as ray:
            remote = remote_cell(ray, play_cell, worker_env(models))
            rows = await asyncio.to_thread(
                run_bounded, ray, remote, tasks, at_once=self.cells_at_once, done=lambda i, r: tick()
            )
        return list(rows)
