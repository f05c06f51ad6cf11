"""Run folders under `--runs`: the conversational study's (memdir_study/eval/folder.py) and the skill
setting's (memdir_study/skills/folder.py), found a few levels down and read through a bare `Store` rooted
at each, so a run's files are confined exactly as a store's are.

A run's stores become sources of the UI as it is opened; an eval cell's store knows its
benchmark and conversation, so its locators link to the turns they cite.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import MemdirError, NotFoundError
from memdir.jsontypes import JsonObject
from memdir.store.paths import ROOT, MemoryPath
from memdir.store.store import Store
from memdir.ui.listing import child_folders
from memdir.ui.sources import Source, Sources
from memdir_study.eval.folder import RunFolder
from memdir_study.eval.records import AnswerRow
from memdir_study.skills.folder import TASKS, ChainFolder, TaskRow

SEARCH_DEPTH = 3  # run folders are found this many levels below --runs (runs/<study>/<bench>)
SKIP = {"stores", "cells"}  # inside a run folder: its own parts, never other runs


@dataclass
class Run:
    name: str  # the folder relative to --runs ("." for --runs itself)
    kind: str  # "eval" or "skills"
    root: Path
    manifest: JsonObject = field(default_factory=dict)
    stores: list[Source] = field(default_factory=list)

    @property
    def store(self) -> Store:
        return Store(self.root)


def _kind(store: Store, folder: MemoryPath) -> str | None:
    if not store.exists(folder.child("manifest.json")):
        return None
    if store.exists(folder.child("answers.jsonl")):
        return "eval"
    if store.exists(folder.child(TASKS)):
        return "skills"
    return None


def find_runs(runs_dir: Path) -> list[Run]:
    """Every run folder at most SEARCH_DEPTH levels below `runs_dir`, in path order."""
    top = Store(runs_dir)
    found: list[Run] = []
    stack: list[MemoryPath] = [ROOT]
    while stack:
        folder = stack.pop()
        kind = _kind(top, folder)
        if kind is not None:
            name = "/".join(folder.parts) or "."
            found.append(Run(name, kind, top.root.joinpath(*folder.parts)))
            continue
        if len(folder.parts) >= SEARCH_DEPTH:
            continue
        try:
            names = child_folders(top, folder)
        except MemdirError:
            continue
        stack.extend(folder.child(n) for n in reversed(names) if n not in SKIP)
    return sorted(found, key=lambda r: r.name)


def open_run(runs_dir: Path, name: str, sources: Sources) -> Run:
    """The run called `name`, its manifest read and its stores registered as sources."""
    for run in find_runs(runs_dir):
        if run.name == name:
            break
    else:
        raise NotFoundError(f"no run folder {name!r} under the runs folder; pick one from the runs page")
    store = run.store
    try:
        run.manifest = json.loads(store.read_text("/memories/manifest.json"))
    except (MemdirError, ValueError):
        run.manifest = {}
    run.stores = _stores(run, store)
    for s in run.stores:
        sources.add(s)
    return run


def _stores(run: Run, store: Store) -> list[Source]:
    base = MemoryPath(("stores",))
    if not store.is_dir(base):
        return []
    out: list[Source] = []
    if run.kind == "eval":
        folder = RunFolder(run.root, create=False)  # its layout only: store_dir() names the stores
        for b in child_folders(store, base):
            for c in child_folders(store, base.child(b)):
                for v in child_folders(store, base.child(b).child(c)):
                    root = folder.store_dir(b, c, v)
                    out.append(
                        Source(store_id(run.name, b, c, v), f"{b}/{c}/{v}", root, (b, c), run=run.name)
                    )
    else:
        chains = ChainFolder(run.root)  # makes nothing: its layout only
        for v in child_folders(store, base):
            for chain in child_folders(store, base.child(v)):
                if chain.startswith("chain-") and chain[6:].isdigit():
                    root = chains.store_dir(v, int(chain[6:]))
                    out.append(Source(store_id(run.name, v, chain), f"{v}/{chain}", root, run=run.name))
    return out


def store_id(run: str, *parts: str) -> str:
    return "~".join((run.replace("/", "~"), *parts))  # a URL path segment: no slash


@dataclass(frozen=True)
class Malformed:
    """A line of a run's table the pages leave out, and why (shown with its line number)."""

    line: int
    reason: str


ROW_TYPES: dict[str, object] = {"answers.jsonl": AnswerRow, TASKS: TaskRow}
