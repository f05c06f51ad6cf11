"""The chain runner: tasks in order, leak-free, one store per (variant, chain), a run folder.

Task i is played with entries served from a store built from tasks 1..i-1 only: the store is
written after the episode ends, never during it. All variants of a run advance in lockstep
over the same chain, so each game is loaded once and reset per variant (loading dominates a
short episode); a `ChainRunner` (skills/ray_executor.py) plays each cell elsewhere instead,
through the same `play_task`. Every task appends one row to `tasks.jsonl` as it finishes;
`summary.json`, `report.md` and the plots are derived from the folder afterwards (see
`report.py`; the folder's layout is `folder.py`, its tables and manifest the studies' shared
kernel, memdir_study/runfolder.py).

The executor is an offline policy (model `offline`: the procedures built in, only locations to
learn; model `offline-novice`: the procedures must be learned from memory too; both baselines)
or the execution agent over a model; the curator and the guidance writer are models when
`Roles` names them (the search model apart from the executor, as the paper runs gpt-4.1 and
gpt-4.1-mini executors against one search agent). Model calls go to `record.jsonl`; a row's
deploy cost is its search bill (the search agent choosing entries or writing GS guidance) plus
its execution bill, each also kept apart, and its build cost the curator's calls, each priced
with its role's card (`role_cards`; the run's price card for a role not named). A row counts
the executor's invalid actions (sent while not admissible); the admissible actions are shown at
every step only with `show_admissible`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, TypedDict

from memdir.errors import MemdirError
from memdir.jsontypes import array, record_json
from memdir.models import Model, ModelError, PriceCard, Usage
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.journal import Journal
from memdir.store.store import Store
from memdir.tokens import count_tokens
from memdir.tools.guards import Guards
from memdir.tools.wiring import open_store
from memdir_study.bench.alfworld import SEED, Game, chains, load_games
from memdir_study.bench.alfworld_env import STEP_CAP, AlfworldEnv, Observation
from memdir_study.runfolder import read_manifest, require_same, write_manifest
from memdir_study.skills.execution import Trajectory, execute
from memdir_study.skills.fate import entry_texts, fate
from memdir_study.skills.folder import ChainFolder, TaskRow
from memdir_study.skills.novice import Novice
from memdir_study.skills.policy import OfflinePolicy
from memdir_study.skills.retrieve import DEFAULT, Retriever
from memdir_study.skills.variants import GATED, SKILL_VARIANTS, Roles, SkillVariant, make_variant

OFFLINE_MODEL = "offline"
# The skill setting's roles, each billed apart (the paper's Tables 16-17 price the search and
# execution bills apart; the curator's is the build cost), each at its card (`role_cards`).
SKILL_ROLES = ("execution", "search", "curator")
OFFLINE_POLICIES: dict[str, type[OfflinePolicy]] = {"offline": OfflinePolicy, "offline-novice": Novice}
EARLY_FRACTION = 0.25


@dataclass
class ChainCell:
    """One variant on one chain: its store and the snapshot taken at 25% of the chain."""

    variant: SkillVariant
    chain: int
    store_dir: Path | None
    early: dict[str, str] | None = None
    rows: list[TaskRow] = field(default_factory=list)
    aborted: bool = False  # a model call failed: the cell plays no more tasks


def store_size(store: Store | None) -> tuple[int, float]:
    """(entry files, kilobytes) of a store as the paper's Table 8 counts them: its entries, not
    memdir's index files (MEMORY.md), so the episode log of 140 tasks is 140 files, as
    `memdir stats` counts them (docs/metrics.md, "Store profile")."""
    if store is None:
        return 0, 0.0
    files = [e for e in store.files() if e.path.name != MEMORY_INDEX]
    return len(files), round(sum(e.size for e in files) / 1024, 3)


# How the execution agent is told to phrase actions: from the list shown at each step, or, as
# the paper runs it (the list hidden), in ALFWorld's command forms.
SHOWN_ACTIONS = "Each observation ends with the admissible actions: reply with exactly one of them."
ALFWORLD_ACTIONS = (
    "Commands take forms such as `go to cabinet 1`, `open cabinet 1`, `close cabinet 1`, "
    "`take apple 1 from countertop 2`, `put apple 1 in/on fridge 1`, `heat apple 1 with microwave 1`, "
    "`cool apple 1 with fridge 1`, `clean apple 1 with sinkbasin 1`, `use desklamp 1`, "
    "`examine apple 1`, `look` and `inventory`."
)


class TextEnv:
    """An ALFWorld game as the execution agent's environment: the chain's reset observation
    first, then each step's text; with `show_admissible` each also lists the admissible actions
    (a named option, off by default: the paper's executors were not shown them, and its 19-40%
    invalid actions depend on that)."""

    def __init__(self, env: AlfworldEnv, first: Observation, show_admissible: bool = False) -> None:
        self.env = env
        self.first = first
        self.show_admissible = show_admissible
        self.actions_rule = SHOWN_ACTIONS if show_admissible else ALFWORLD_ACTIONS

    def show(self, obs: Observation) -> str:
        if not self.show_admissible:
            return obs.text
        return f"{obs.text}\nAdmissible actions: {', '.join(obs.admissible)}"

    def reset(self) -> str:
        return self.show(self.first)

    def step(self, action: str) -> tuple[str, bool, bool]:
        obs = self.env.step(action)
        return self.show(obs), obs.done, obs.won


def run_chains(
    out: Path,
    variants: list[str],
    *,
    model: str | Model = OFFLINE_MODEL,
    roles: Roles | None = None,
    price_card: PriceCard | None = None,
    protocol: str = "full",
    n_tasks: int | None = None,
    games: list[Game] | None = None,
    retriever: Retriever = DEFAULT,
    on_task: Callable[[TaskRow], None] | None = None,
    step_cap: int = STEP_CAP,
    runner: ChainRunner | None = None,
    show_admissible: bool = False,
    role_cards: dict[str, PriceCard] | None = None,
) -> list[TaskRow]:
    """Play every chain of `protocol` for every variant; returns (and appends) the task rows.

    `model` is the executor: an offline policy's name (`OFFLINE_POLICIES`) or a :class:`Model`;
    `show_admissible` lists the admissible actions in each observation a model executor reads.
    `runner` plays the cells elsewhere (skills/ray_executor.py); by default all cells of a chain
    advance in lockstep here.
    """
    return asyncio.run(
        _run_chains(
            out, variants, model=model, roles=roles or Roles(), price_card=price_card, protocol=protocol,
            n_tasks=n_tasks, games=games, retriever=retriever, on_task=on_task, step_cap=step_cap,
            runner=runner, show_admissible=show_admissible, role_cards=role_cards or {},
        )
    )  # fmt: skip


async def _run_chains(
    out: Path,
    variants: list[str],
    *,
    model: str | Model,
    roles: Roles,
    price_card: PriceCard | None,
    protocol: str,
    n_tasks: int | None,
    games: list[Game] | None,
    retriever: Retriever,
    on_task: Callable[[TaskRow], None] | None,
    step_cap: int,
    runner: ChainRunner | None,
    show_admissible: bool,
    role_cards: dict[str, PriceCard],
) -> list[TaskRow]:
    executor = None if isinstance(model, str) and model in OFFLINE_POLICIES else model
    if isinstance(executor, str):
        raise MemdirError(
            f"{executor!r} is not an offline policy ({', '.join(OFFLINE_POLICIES)}); "
            "pass a model as a Model (memdir.models.get_model)"
        )
    if price_card is None and (executor is not None or roles.curator or roles.searcher):
        raise MemdirError("a run with model calls needs a price card to account its cost")
    model_name = executor.name if executor is not None else str(model)
    for v in variants:
        make_variant(v, None)  # fail fast on an unknown variant name
    chain_list = chains(games if games is not None else load_games(), protocol, n_tasks)
    out.mkdir(parents=True, exist_ok=True)
    folder = ChainFolder(out)
    _write_manifest(
        folder, variants, model_name, roles, price_card, protocol, n_tasks, chain_list, retriever,
        show_admissible, role_settings(executor, roles, price_card, role_cards),
    )  # fmt: skip
    folder.tasks.repair()  # a row cut by a kill of an earlier run: cut, so the next row starts a line
    folder.aborted.repair()
    policy = OFFLINE_POLICIES[model_name]() if executor is None else OfflinePolicy()
    play = TaskPlayer(policy, executor, roles, price_card, role_cards)
    cells = []
    for ci, chain in enumerate(chain_list):
        for v in variants:
            store_dir = None if v == "no-store" else folder.store_dir(v, ci + 1)
            if store_dir is not None and store_dir.exists() and any(store_dir.iterdir()):
                raise MemdirError(f"{store_dir} already holds a store; use a fresh --out folder")
            cells.append(CellSpec(v, ci + 1, chain, model_name, protocol, step_cap, show_admissible))
    if runner is not None:
        return runner.run_chains(folder, cells, play, retriever, on_task)
    rows: list[TaskRow] = []
    for ci, chain in enumerate(chain_list):
        # All variants of a chain advance in lockstep, so each game is loaded once.
        mine = [c for c in cells if c.chain == ci + 1]
        live = [(spec, open_cell(folder, spec, retriever, roles)) for spec in mine]
        for index, game in enumerate(chain, start=1):
            t_load = time.perf_counter()
            with AlfworldEnv(game, step_cap) as env:
                load_s = time.perf_counter() - t_load
                for spec, cell in live:
                    if cell.aborted:
                        continue
                    row = await play_task(play, folder, spec, cell, env, index, game, load_s)
                    if row is not None:
                        rows.append(row)
                        if on_task:
                            on_task(row)
    return rows


@dataclass(frozen=True)
class CellSpec:
    """A chain cell as settings (variant, chain and its games): what a cell needs to be opened
    in any process, the local one or a Ray worker (skills/ray_executor.py)."""

    variant: str
    chain: int
    games: list[Game]
    model: str  # the executor's name, as the rows name it
    protocol: str
    step_cap: int = STEP_CAP
    show_admissible: bool = False  # a model executor reads the admissible actions at each step


class ChainRunner(Protocol):
    """Who plays the cells when not the local lockstep loop (skills/ray_executor.py): each cell's
    chain in order, each task through `play_task`, rows returned in the local loop's order."""

    def run_chains(
        self,
        folder: ChainFolder,
        cells: list[CellSpec],
        play: TaskPlayer,
        retriever: Retriever,
        on_task: Callable[[TaskRow], None] | None,
    ) -> list[TaskRow]: ...


def open_cell(folder: ChainFolder, spec: CellSpec, retriever: Retriever, roles: Roles) -> ChainCell:
    """A cell's variant over its store, created in the run folder (no store for no-store)."""
    store_dir = None if spec.variant == "no-store" else folder.store_dir(spec.variant, spec.chain)
    gate = Guards(outcome_gate=SKILL_VARIANTS[spec.variant].outcome_gate)  # skills+mem and GS only
    store = open_store(store_dir, create=True, guards=gate) if store_dir else None
    return ChainCell(make_variant(spec.variant, store, retriever, roles), spec.chain, store_dir)


async def play_chain(
    play: TaskPlayer, folder: ChainFolder, spec: CellSpec, retriever: Retriever, roles: Roles
) -> list[TaskRow]:
    """One cell's whole chain in this process, each game loaded for it alone (a Ray task)."""
    cell = open_cell(folder, spec, retriever, roles)
    rows = []
    for index, game in enumerate(spec.games, start=1):
        t_load = time.perf_counter()
        with AlfworldEnv(game, spec.step_cap) as env:
            load_s = time.perf_counter() - t_load
            row = await play_task(play, folder, spec, cell, env, index, game, load_s)
        if row is None:
            break
        rows.append(row)
    return rows


async def play_task(
    play: TaskPlayer, folder: ChainFolder, spec: CellSpec, cell: ChainCell, env: AlfworldEnv,
    index: int, game: Game, load_s: float,
) -> TaskRow | None:  # fmt: skip
    """One task of one cell, its row appended to tasks.jsonl; None when the cell is aborted."""
    try:
        row = await play.run(env, cell, index, game, spec.model, spec.protocol, load_s, spec.show_admissible)
    except ModelError as exc:
        # The study's rule: a cell whose model calls fail is aborted whole, never reported
        # partially; the other cells go on.
        cell.aborted = True
        note = {
            "variant": cell.variant.name, "model": spec.model, "protocol": spec.protocol,
            "chain": cell.chain, "index": index, "game": game.id, "error": str(exc),
        }  # fmt: skip
        folder.aborted.append([note])
        return None
    early_at = max(1, round(len(spec.games) * EARLY_FRACTION))
    if index == early_at:
        cell.early = entry_texts(cell.variant.store)  # the paper's checkpoint (Figure 8)
    if index == len(spec.games):
        row["early_fate"] = fate(cell.early or {}, entry_texts(cell.variant.store))
    folder.tasks.append([row])
    return row


@dataclass
class TaskPlayer:
    """One task of one cell: serve, play (offline policy or execution agent), record, a row."""

    policy: OfflinePolicy
    executor: Model | None
    roles: Roles
    card: PriceCard | None
    role_cards: dict[str, PriceCard] = field(default_factory=dict)  # a role priced apart

    def cost(self, usage: Usage, role: str | None = None) -> float:
        """Dollars of `usage` at `role`'s card (`card` for a role not priced apart)."""
        card = self.role_cards.get(role, self.card) if role is not None else self.card
        return card.cost(usage) if card is not None and usage.calls else 0.0

    async def run(
        self,
        env: AlfworldEnv,
        cell: ChainCell,
        index: int,
        game: Game,
        model: str,
        protocol: str,
        load_s: float,
        show_admissible: bool = False,
    ) -> TaskRow:
        start = time.perf_counter()
        variant = cell.variant
        obs = env.reset()
        episode = env.episode
        assert episode is not None
        task = episode.task
        served = await variant.serve(index, task, game.family)
        t_served = time.perf_counter()
        search = served.usage  # the search agent's calls: choosing entries, or writing GS guidance
        execution = Usage()
        if self.executor is None:
            self.policy.play(env, obs, served.pairs())
            hint_sources = self.policy.hints.sources if self.policy.hints else []
            learned = getattr(self.policy, "learned_from", None)
            if learned and learned not in hint_sources:
                hint_sources = [*hint_sources, learned]
        else:
            traj = await self._execute(
                TextEnv(env, obs, show_admissible), task, index, served.text(), variant
            )
            execution = traj.usage
            hint_sources = []
        t_played = time.perf_counter()
        deploy = search + execution
        build = await variant.record(index, episode, served)
        files, kb = store_size(variant.store)
        # The store's snapshot after this task: the journal commit its last write made.
        snapshot = Journal(variant.store.root).head() if variant.store is not None else None
        row: TaskRow = {
            "variant": variant.name, "model": model, "protocol": protocol, "chain": cell.chain,
            "index": index, "game": game.id, "family": game.family, "task": task,
            "success": episode.won, "steps": episode.n_steps, "served": served.paths,
            "served_tokens": count_tokens(served.text()),
            "hint_sources": hint_sources, "store_files": files, "store_kb": kb, "snapshot": snapshot,
            "deploy_usage": record_json(deploy.as_dict()), "build_usage": record_json(build.as_dict()),
            "deploy_cost_usd": round(self.cost(search, "search") + self.cost(execution, "execution"), 6),
            "build_cost_usd": round(self.cost(build, "curator"), 6),
            "search_usage": record_json(search.as_dict()),
            "search_cost_usd": round(self.cost(search, "search"), 6),
            "execution_usage": record_json(execution.as_dict()),
            "execution_cost_usd": round(self.cost(execution, "execution"), 6),
            "invalid_actions": episode.invalid_actions,
            "seconds": {"load": round(load_s, 3), "reset_serve": round(t_served - start, 3),
                        "play": round(t_played - t_served, 3),
                        "record": round(time.perf_counter() - t_played, 3)},
        }  # fmt: skip
        return row

    async def _execute(
        self, env: TextEnv, task: str, index: int, served: str, variant: SkillVariant
    ) -> Trajectory:
        assert self.executor is not None
        return await execute(
            self.executor, env, task, episode=index, guidance=served, record=self.roles.record,
            variant=variant.name, actions_rule=env.actions_rule,
        )  # fmt: skip


def _round_cap(roles: Roles) -> int | None:
    """The `--round-cap` the run's models were given, if any (ModelAPI.round_cap)."""
    caps = {m.api.round_cap for m in (roles.curator, roles.searcher) if m is not None}
    return min((c for c in caps if c is not None), default=None)


class ChainRoleSetting(TypedDict):
    """A skill role's settings as the chain's manifest records them (eval's RoleSetting, but a
    role may play unpriced)."""

    model: str
    reasoning_effort: str | None
    effort_sent: bool
    price_card: str | None


def role_settings(
    executor: Model | None, roles: Roles, card: PriceCard | None, role_cards: dict[str, PriceCard]
) -> dict[str, ChainRoleSetting]:
    """Each role's model, the reasoning effort asked of it (`Model.with_settings`) and whether
    the model takes one, and its price card (docs/study.md, Configuration of record (Table 11))."""
    out: dict[str, ChainRoleSetting] = {}
    for role, m in zip(SKILL_ROLES, (executor, roles.searcher, roles.curator), strict=True):
        priced = role_cards.get(role, card)
        effort = m.config.reasoning_effort if m is not None else None
        out[role] = {
            "model": m.name if m is not None else OFFLINE_MODEL,
            "reasoning_effort": effort,
            "effort_sent": bool(m is not None and effort is not None and m.api.takes_reasoning_effort()),
            "price_card": priced.name if priced is not None else None,
        }
    return out


def _write_manifest(
    folder: ChainFolder, variants: list[str], model: str, roles: Roles, card: PriceCard | None, protocol: str,
    n_tasks: int | None, chain_list: list[list[Game]], retriever: Retriever, show_admissible: bool = False,
    roles_record: dict[str, Any] | None = None,
) -> None:  # fmt: skip
    """The run's settings; variants run into the folder before are kept, and so is its start."""
    old = read_manifest(folder.manifest)
    ran = array((old or {}).get("variants"))  # the variants an earlier start of this run asked for
    versions: dict[str, str | None] = {}
    for pkg in ("alfworld", "textworld"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    manifest = {
        "benchmark": "alfworld valid_seen (140 games)",
        "model": model,
        "curator_model": roles.curator.name if roles.curator else OFFLINE_MODEL,
        "search_model": roles.searcher.name if roles.searcher else OFFLINE_MODEL,
        "guidance_model": roles.searcher.name
        if roles.searcher
        else OFFLINE_MODEL,  # the GS writer: the search model
        "show_admissible": show_admissible,
        "outcome_gate": list(GATED),
        "tool_set": {"manage": roles.manage_profile, "search": roles.search_profile},
        "price_card": card.name if card else None,
        "roles": roles_record,
        "protocol": protocol,
        "n_tasks": n_tasks,
        "seed": SEED,
        "step_cap": STEP_CAP,
        "round_cap": _round_cap(roles),
        "retriever": getattr(retriever, "__name__", "?"),
        "variants": sorted({*(v for v in ran if isinstance(v, str)), *variants}),
        "chains": [[g.id for g in c] for c in chain_list],
        "families": {g.id: g.family for c in chain_list for g in c},
        "versions": versions,
        "started": (old or {}).get("started") or datetime.now(UTC).isoformat(timespec="seconds"),
    }
    refusal = f"{folder.out} holds a run over other chains; use a fresh --out folder"
    require_same(folder.out, old or None, manifest, keys=("chains",), refusal=refusal)
    write_manifest(folder.manifest, manifest, indent=1, end="\n")
