"""`memdir study skills --executor ray`: each chain cell (variant x chain) as one Ray task.

The driver writes the manifest, repairs the tables and refuses a folder that already holds a
cell's store, as the local path does (skills/chain.py); then it ships each cell as a
`ChainTask`: the cell's settings and games, the folder's path, and the roles' models as
`ModelSpec`s (memdir_study/cluster.py), never a store, client or open record. The worker plays the
cell's chain in order with the local path's own task code (`chain.play_task`), so leak-freedom
holds as it does there (task i sees a store built from tasks 1..i-1 of its own cell), and
appends its rows to the same locked tables. Unlike the local loop, which loads each game once
for all variants of a chain, a worker loads each game for its one cell: the price of playing
the variants side by side.

A model keeps its round cap in its spec; `cells_at_once` bounds the cells, and so the
executions and curations, in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.agents.record import RunRecord
from memdir.models import Model, PriceCard
from memdir_study.cluster import ModelSpec, cluster, remote_cell, run_bounded, worker_env
from memdir_study.skills.chain import OFFLINE_POLICIES, CellSpec, TaskPlayer, play_chain
from memdir_study.skills.folder import ChainFolder, TaskRow
from memdir_study.skills.policy import OfflinePolicy
from memdir_study.skills.retrieve import Retriever
from memdir_study.skills.variants import Roles


@dataclass(frozen=True)
class ChainTask:
    """All a worker needs to play one cell: settings, paths and games (picklable, and no key)."""

    out: str
    cell: CellSpec
    executor: ModelSpec | None  # None: the offline policy the cell's `model` names
    curator: ModelSpec | None
    searcher: ModelSpec | None
    record: str | None  # the model calls' record.jsonl
    manage_profile: str
    search_profile: str
    card: PriceCard | None
    retriever: Retriever
    role_cards: dict[str, PriceCard] = field(default_factory=dict)


def play_cell(task: ChainTask) -> list[TaskRow]:
    """Play one cell's chain in this process (a Ray worker)."""
    built: dict[ModelSpec, Model] = {}

    def model(spec: ModelSpec | None) -> Model | None:
        if spec is None:
            return None
        if spec not in built:  # one model for the roles one model plays, as on the driver
            built[spec] = spec.build()
        return built[spec]

    executor = model(task.executor)
    record = RunRecord(task.record) if task.record is not None else None
    roles = Roles(model(task.curator), model(task.searcher), record, task.manage_profile, task.search_profile)
    policy = OFFLINE_POLICIES[task.cell.model]() if executor is None else OfflinePolicy()
    play = TaskPlayer(policy, executor, roles, task.card, task.role_cards)
    folder = ChainFolder(Path(task.out))
    return asyncio.run(play_chain(play, folder, task.cell, task.retriever, roles))


class RayChainRunner:
    """Chain cells as Ray tasks, on the cluster at `address` or on a local `ray.init()`."""

    def __init__(
        self, address: str | None = None, *, cells_at_once: int | None = None, num_cpus: int | None = None
    ) -> None:
        self.address = address
        self.cells_at_once = cells_at_once
        self.num_cpus = num_cpus

    def run_chains(
        self,
        folder: ChainFolder,
        cells: list[CellSpec],
        play: TaskPlayer,
        retriever: Retriever,
        on_task: Callable[[TaskRow], None] | None,
    ) -> list[TaskRow]:
        roles = play.roles
        named = {"executor": play.executor, "curator": roles.curator, "searcher": roles.searcher}
        models = {m.name: m for m in named.values() if m is not None}
        specs = {role: None if m is None else ModelSpec.of(m.name, m) for role, m in named.items()}
        record = roles.record.path if roles.record is not None else None
        out = str(Path(folder.out).resolve())
        record_path = None if record is None else str(record.resolve())
        tasks = [
            ChainTask(
                out,
                cell,
                executor=specs["executor"],
                curator=specs["curator"],
                searcher=specs["searcher"],
                record=record_path,
                manage_profile=roles.manage_profile,
                search_profile=roles.search_profile,
                card=play.card,
                retriever=retriever,
                role_cards=play.role_cards,
            )
            for cell in cells
        ]

        def done(i: int, rows: Any) -> None:
            for row in rows:
                if on_task:
                    on_task(row)

        with cluster(self.address, self.num_cpus) as ray:
            remote = remote_cell(ray, play_cell, worker_env(models))
            per_cell = run_bounded(ray, remote, tasks, at_once=self.cells_at_once, done=done)
        order = {c.variant: i for i, c in enumerate(cells)}
        rows: list[TaskRow] = [r for rs in per_cell for r in rs]
        # the local loop's order: chain by chain, task by task, the variants as given
        return sorted(rows, key=lambda r: (r["chain"], r["index"], order[r["variant"]]))
