"""The chain runner: tasks in order, leak-free, one store per (variant, chain), a run folder.

Task i is played with entries served from a store built from tasks 1..i-1 only: the store is
written after the episode ends, never during it. All variants of a run advance in lockstep
over the same chain, so each game is loaded once and reset per variant (loading dominates a
short episode). Every task appends one row to `tasks.jsonl` as it finishes; `summary.json`,
`report.md` and the plots are derived from the folder afterwards (see `report.py`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from filelock import FileLock

from memdir.bench.alfworld import SEED, Game, chains, load_games
from memdir.bench.alfworld_env import STEP_CAP, AlfworldEnv
from memdir.errors import MemdirError
from memdir.skills.policy import OfflinePolicy
from memdir.skills.retrieve import DEFAULT, Retriever
from memdir.skills.variants import Variant, make_variant
from memdir.store.store import Store

OFFLINE_MODEL = "offline"
EARLY_FRACTION = 0.25


@dataclass
class Cell:
    """One variant on one chain: its store and the snapshot taken at 25% of the chain."""

    variant: Variant
    chain: int
    store_dir: Path | None
    early: dict[str, str] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)


def _hashes(store: Store | None) -> dict[str, str]:
    if store is None:
        return {}
    return {e.path.text: hashlib.sha1(e.disk.read_bytes()).hexdigest() for e in store.files()}


def store_size(store: Store | None) -> tuple[int, float]:
    """(entry files, kilobytes) of a store; folder indexes (MEMORY.md) count too: they are files."""
    if store is None:
        return 0, 0.0
    files = store.files()
    return len(files), round(sum(e.size for e in files) / 1024, 3)


def fate(early: dict[str, str], late: dict[str, str]) -> dict[str, int]:
    """What became of the files present at 25% of the chain, by the end."""
    out = {"untouched": 0, "edited": 0, "deleted": 0}
    for path, digest in early.items():
        if path not in late:
            out["deleted"] += 1
        elif late[path] == digest:
            out["untouched"] += 1
        else:
            out["edited"] += 1
    return out


def check_model(model: str) -> None:
    if model != OFFLINE_MODEL:
        raise MemdirError(
            f"model {model!r} needs the model-backed execution agent (the agents issue); "
            f"only --model {OFFLINE_MODEL} (the no-model policy, a baseline) runs for now"
        )


def run_chains(
    out: Path,
    variants: list[str],
    *,
    model: str = OFFLINE_MODEL,
    protocol: str = "full",
    n_tasks: int | None = None,
    games: list[Game] | None = None,
    retriever: Retriever = DEFAULT,
    on_task: Callable[[dict[str, Any]], None] | None = None,
    step_cap: int = STEP_CAP,
) -> list[dict[str, Any]]:
    """Play every chain of `protocol` for every variant; returns (and appends) the task rows."""
    check_model(model)
    for v in variants:
        make_variant(v, None)  # fail fast on an unknown or model-only variant name
    chain_list = chains(games if games is not None else load_games(), protocol, n_tasks)
    out.mkdir(parents=True, exist_ok=True)
    _write_manifest(out, variants, model, protocol, n_tasks, chain_list, retriever)
    rows: list[dict[str, Any]] = []
    policy = OfflinePolicy()
    lock = FileLock(str(out / ".tasks.lock"))
    for ci, chain in enumerate(chain_list):
        cells = []
        for v in variants:
            store_dir = None if v == "no-store" else out / "stores" / v / f"chain-{ci + 1}"
            if store_dir is not None and store_dir.exists() and any(store_dir.iterdir()):
                raise MemdirError(f"{store_dir} already holds a store; use a fresh --out folder")
            store = Store(store_dir, create=True) if store_dir else None
            cells.append(Cell(make_variant(v, store, retriever), ci + 1, store_dir))
        early_at = max(1, round(len(chain) * EARLY_FRACTION))
        for index, game in enumerate(chain, start=1):
            t_load = time.perf_counter()
            with AlfworldEnv(game, step_cap) as env:
                load_s = time.perf_counter() - t_load
                for cell in cells:
                    row = _play(env, policy, cell, index, game, model, protocol, load_s)
                    if index == early_at:
                        cell.early = _hashes(cell.variant.store)
                    if index == len(chain):
                        row["early_fate"] = fate(cell.early or {}, _hashes(cell.variant.store))
                    rows.append(row)
                    with lock, open(out / "tasks.jsonl", "a") as fh:
                        fh.write(json.dumps(row) + "\n")
                    if on_task:
                        on_task(row)
    return rows


def _play(
    env: AlfworldEnv, policy: OfflinePolicy, cell: Cell, index: int, game: Game, model: str, protocol: str,
    load_s: float,
) -> dict[str, Any]:  # fmt: skip
    start = time.perf_counter()
    variant = cell.variant
    obs = env.reset()
    assert env.episode is not None
    task = env.episode.task
    docs = variant.serve(index, task, game.family)
    served = time.perf_counter()
    episode = policy.play(env, obs, [(d.path, d.text) for d in docs])
    played = time.perf_counter()
    variant.record(index, episode)
    files, kb = store_size(variant.store)
    return {
        "variant": variant.name, "model": model, "protocol": protocol, "chain": cell.chain, "index": index,
        "game": game.id, "family": game.family, "task": task, "success": episode.won,
        "steps": episode.n_steps, "served": [d.path for d in docs],
        "hint_sources": policy.hints.sources if policy.hints else [],
        "store_files": files, "store_kb": kb, "deploy_cost_usd": 0.0, "build_cost_usd": 0.0,
        "seconds": {"load": round(load_s, 3), "reset_serve": round(served - start, 3),
                    "play": round(played - served, 3), "record": round(time.perf_counter() - played, 3)},
    }  # fmt: skip


def _write_manifest(
    out: Path, variants: list[str], model: str, protocol: str, n_tasks: int | None,
    chain_list: list[list[Game]], retriever: Retriever,
) -> None:  # fmt: skip
    path = out / "manifest.json"
    old = json.loads(path.read_text()) if path.exists() else None
    versions: dict[str, str | None] = {}
    for pkg in ("alfworld", "textworld"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    manifest = {
        "benchmark": "alfworld valid_seen (140 games)",
        "model": model,
        "protocol": protocol,
        "n_tasks": n_tasks,
        "seed": SEED,
        "step_cap": STEP_CAP,
        "retriever": getattr(retriever, "__name__", "?"),
        "variants": sorted({*(old or {}).get("variants", []), *variants}),
        "chains": [[g.id for g in c] for c in chain_list],
        "families": {g.id: g.family for c in chain_list for g in c},
        "versions": versions,
        "started": (old or {}).get("started") or datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if old and old.get("chains") != manifest["chains"]:
        raise MemdirError(f"{out} holds a run over other chains; use a fresh --out folder")
    path.write_text(json.dumps(manifest, indent=1) + "\n")
