"""The skill chain's run folder, laid out over the shared kernel (memdir_study/runfolder.py).

    manifest.json                   the run's settings; the variants run into it accumulate
    tasks.jsonl                     one row per task played: the record
    aborted.jsonl                   one note per cell whose model calls failed (the abort rule)
    stores/<variant>/chain-<n>/     a cell's store, with its journal
    summary.json, report.md, *.png  derived from the above (skills/report.py)

Several processes may run different variants into one folder, so both tables take one lock,
`.tasks.lock`, the file the chain has always locked. Rows are ASCII-escaped JSON, as they always
were.
"""

from __future__ import annotations

from pathlib import Path
from typing import NotRequired, TypedDict, cast

from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir_study.runfolder import JsonlTable, row_problem

TASKS = "tasks.jsonl"
ABORTED = "aborted.jsonl"
LOCK = ".tasks.lock"


class TaskRow(TypedDict):
    """One line of tasks.jsonl (docs/skills.md): a task played by one cell of one chain, what
    was served, whether it succeeded, the store after it, and what deployment and curation
    cost; the last task of a chain also says what became of the store's early files."""

    variant: str
    model: str
    protocol: str
    chain: int
    index: int
    game: str
    family: str
    task: str
    success: bool
    steps: int
    served: list[str]
    served_tokens: int
    hint_sources: list[str]
    store_files: int
    store_kb: float
    snapshot: str | None
    # the usages stay open JSON objects: rows are checked field by field by pydantic (runfolder.row_problem),
    # which takes no typing.TypedDict before Python 3.12, and older rows lack later usage fields
    deploy_usage: JsonObject
    build_usage: JsonObject
    deploy_cost_usd: float
    build_cost_usd: float
    seconds: dict[str, float]
    early_fate: NotRequired[dict[str, int]]
    # Deployment split into its two bills (the paper's Table 16), and the executor's invalid
    # actions; rows written before these existed lack them.
    search_usage: NotRequired[JsonObject]
    search_cost_usd: NotRequired[float]
    execution_usage: NotRequired[JsonObject]
    execution_cost_usd: NotRequired[float]
    invalid_actions: NotRequired[int]


class Bills(TypedDict):
    """A cell's two bills (the paper's Table 16) and its invalid actions, in summary.json."""

    search_cost_usd: float
    search_cost_per_task_usd: float | None
    execution_cost_usd: float
    execution_cost_per_task_usd: float | None
    search_cost_cumulative_usd: list[float]
    invalid_actions: int | None
    invalid_action_rate: float | None


class SkillCell(Bills):
    """One cell of summary.json (docs/skills.md): a variant, model and protocol over its chains.
    `store_health` is added once the cells are summarized, `wall_seconds` is taken out to
    timings.json before the summary is written."""

    variant: str
    model: str
    protocol: str
    n_tasks: int
    success: float
    success_by_family: dict[str, float]
    deploy_cost_usd: float
    build_cost_usd: float
    deploy_cost_per_task_usd: float
    deploy_cost_per_solved_usd: float | None
    store_files: float
    store_kb: float
    chains: int
    mean_steps: float
    mean_steps_solved: float | None
    served_per_task: float
    served_tokens_per_task: float
    deploy_tokens_per_task: float
    build_tokens: int
    early_file_fate: dict[str, int]
    wall_seconds: NotRequired[float]
    store_health: NotRequired[dict[str, float | None] | None]


class PlotStyle(TypedDict):
    """A variant's curve, the same in every plot of a report."""

    color: str
    linestyle: str | tuple[int, tuple[int, ...]]
    linewidth: float


class ChainFolder:
    """The files of one skill run: its manifest, its two tables and the cells' stores."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.manifest = out / "manifest.json"
        self.tasks = JsonlTable(out / TASKS, lock=out / LOCK, ensure_ascii=True)
        self.aborted = JsonlTable(out / ABORTED, lock=out / LOCK, ensure_ascii=True)

    def task_rows(self) -> list[TaskRow]:
        """tasks.jsonl, each row checked once here against `TaskRow` as the UI's pages check it
        (`runfolder.row_problem`: a field of another type is named; one older chains did not
        write is not a problem); the rows are returned as written, so a summary of them is the
        same bytes as ever."""
        rows = self.tasks.rows()
        for i, row in enumerate(rows, 1):
            problem = row_problem(row, TaskRow)
            if problem is not None:
                raise MemdirError(
                    f"{self.tasks.path} row {i} is not a TaskRow: {problem}; no chain of this memdir "
                    "wrote it: remove the line, or restore the run folder's copy"
                )
        return cast(list[TaskRow], rows)  # each one checked above

    def store_dir(self, variant: str, chain: int) -> Path:
        return self.out / "stores" / variant / f"chain-{chain}"

    def stores(self, variant: str) -> list[Path]:
        """A variant's stores, one per chain played."""
        return sorted((self.out / "stores" / variant).glob("chain-*"))
