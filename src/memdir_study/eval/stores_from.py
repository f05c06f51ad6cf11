"""Stores another run built, searched again: `memdir study eval --stores-from RUN` (the paper's Table 7
grid, every builder's store under every search model).

Why not rebuild: a model-built store is one draw, and the paper's rebuilds of one cell differ
from 2 to 29 files, so a grid whose rows rebuilt their stores would compare searchers over
different stores. A run with a source takes each cell's store from the source run's folder
(eval/folder.py's layout) instead of building it: copied whole into its own folder (the files;
the derived state under `.memdir/` is rebuilt on first use), checked byte for byte against the
digest taken when the run started, and opened as any built store. The run spends nothing on
building; the source's build cost, its checks and the store's digest are named in this run's
manifest, beside the source run's path and creation stamp, and each cell's marker names the
source cell. Closed-book has no store to take and runs as ever.

A link is never followed out of the source run: a store folder reached through a symbolic link
(the store itself or a folder above it, inside the run) could be any store on the machine, a
private one included, so it is refused, saying to copy the store into the run. The copy walks
from the run folder with descriptors that never follow a link (store/safefs.py) and takes what
memdir reads of a store, its folders and plain files; links, hard links and special files inside
it are left behind, as every reader of a store leaves them.

A source must have built the cells asked for, over the same benchmark, sessions and tool set
(the tool set chose the search profile the source recorded), by the builder this run names:
anything else is refused before this run writes its manifest, saying what to change.
"""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memdir.agents.landing import digests
from memdir.errors import MemdirError, PathError
from memdir.jsontypes import JsonObject, obj
from memdir.store.safefs import SafeRoot
from memdir.store.store import Store
from memdir.tools.wiring import open_store
from memdir_study.eval.folder import CellMarker, RunFolder
from memdir_study.runfolder import read_manifest
from memdir_study.variants import Built, get_variant

SAME = ("benchmark", "sessions", "tool_set")  # settings a source's stores were built under


class _Config(Protocol):
    benchmark: str
    builder_model: str
    sessions: str | None
    tool_set: str


class _Cell(Protocol):
    benchmark: str
    conversation: str
    variant: str
    stores_from: dict[str, str] | None


def store_digest(root: Path) -> str:
    """One sha256 over every file of a store (memory path and bytes; `.memdir/` left out)."""
    h = hashlib.sha256()
    for path, digest in sorted(digests(Store(root)).items()):
        h.update(f"{path}\0{digest}\n".encode())
    return h.hexdigest()


@dataclass
class StoreSource:
    """A finished run whose stores this run searches (its folder, read only)."""

    run: Path
    manifest: JsonObject

    @classmethod
    def open(cls, run: str | Path) -> StoreSource:
        path = Path(run).resolve()
        manifest = read_manifest(path / "manifest.json") if path.is_dir() else None
        if manifest is None or not isinstance(manifest.get("config"), dict):
            raise MemdirError(
                f"--stores-from {run}: not a run folder of memdir study eval (no manifest.json); name the "
                "--out folder of the run that built the stores"
            )
        return cls(path, manifest)

    @property
    def folder(self) -> RunFolder:
        return RunFolder(self.run, create=False)

    @property
    def config(self) -> JsonObject:
        return dict(obj(self.manifest.get("config")))

    @property
    def builder_model(self) -> str:
        return str(self.config.get("builder_model"))

    def check(self, config: _Config) -> None:
        """Refuse a source whose stores were built under other settings than this run states."""
        theirs = self.config
        for key in SAME:
            if theirs.get(key) != getattr(config, key):
                raise MemdirError(
                    f"--stores-from {self.run}: its stores were built with {key} {theirs.get(key)!r}, "
                    f"this run has {getattr(config, key)!r}; run with the source's {key}"
                )
        if config.builder_model != self.builder_model:
            raise MemdirError(
                f"--stores-from {self.run}: its stores were built by {self.builder_model}, not "
                f"{config.builder_model}; give --builder-model {self.builder_model} or leave it out"
            )

    def _marker(self, benchmark: str, conversation: str, variant: str) -> CellMarker:
        name = f"{benchmark}/{conversation}/{variant}"
        folder = self.folder
        marker = folder.read_marker(folder.marker(benchmark, conversation, variant))
        store = folder.store_dir(benchmark, conversation, variant)
        why = None
        if marker is None:
            why = "it has no such cell"
        elif marker.get("status") != "built":
            why = f"its cell is {marker.get('status')}" + (
                f": {marker['reason']}" if marker.get("reason") else ""
            )
        elif not self._has_store(name, store):
            why = f"its store folder {store} is missing"
        if why is not None or marker is None:
            raise MemdirError(
                f"--stores-from {self.run} has no store for {name} ({why}); build it there first "
                f"(memdir study eval ... --out {self.run}), or leave {variant} out of --variants"
            )
        return marker

    def _linked(self, name: str, store: Path, detail: str) -> MemdirError:
        return MemdirError(
            f"--stores-from {self.run}: the store of {name} ({store}) is reached through a symbolic "
            f"link ({detail}), and links are never followed out of the source run; copy the store "
            "into the run folder in place of the link, or leave this cell out"
        )

    def _has_store(self, name: str, store: Path) -> bool:
        """Whether the store folder holds a MEMORY.md, found without following any link from the
        run folder down; a link on the way is refused."""
        parts = (*store.relative_to(self.run).parts, "MEMORY.md")
        try:
            st = SafeRoot(self.run).lstat(parts, str(store))
        except PathError as exc:
            raise self._linked(name, store, str(exc)) from None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise self._linked(name, store, "its MEMORY.md is a link")
        return st is not None and stat.S_ISREG(st.st_mode)

    def _copy(self, name: str, source: Path, store_dir: Path) -> None:
        """The store's folders and plain files copied to `store_dir` (a new folder), read by
        descriptors that never follow a link, so a folder swapped for one since it was checked is
        refused, not read."""
        parts = source.relative_to(self.run).parts
        safe, dest = SafeRoot(self.run), SafeRoot(store_dir)
        with SafeRoot(store_dir.parent).dir_fd((store_dir.name,), str(store_dir), create=True):
            pass
        try:
            with safe.reader() as reader:
                for found in safe.scan(parts, str(source)):
                    rel = found.parts[len(parts) :]
                    shown = str(store_dir.joinpath(*rel))
                    if found.kind == "dir":
                        with dest.dir_fd(rel, shown, create=True):
                            pass
                    elif found.kind == "file" and found.nlink == 1:
                        data = reader.read(found.parts, str(self.run.joinpath(*found.parts)))
                        dest.write(rel, shown, data, must_exist=False)
        except PathError as exc:
            raise self._linked(name, source, str(exc)) from None

    def require(self, cells: list[tuple[str, str, str]]) -> JsonObject:
        """What this run records of its source (manifest.json's `stores_from`), refusing the first
        cell (benchmark, conversation, variant) the source has no store for."""
        taken: dict[str, Any] = {}
        for benchmark, conversation, variant in cells:
            if not get_variant(variant).builds_store:  # nothing to take from a source
                continue
            marker = self._marker(benchmark, conversation, variant)
            store = self.folder.store_dir(benchmark, conversation, variant)
            taken[f"{benchmark}/{conversation}/{variant}"] = {
                "store": store.relative_to(self.run).as_posix(),
                "sha256": store_digest(store),
                "build": {k: v for k, v in (marker.get("build") or {}).items() if k != "seconds"},
            }
        return {
            "run": str(self.run),
            "created": self.manifest.get("created"),
            "memdir": self.manifest.get("memdir"),
            "builder_model": self.builder_model,
            "cells": taken,
        }

    def take(self, cell: _Cell, store_dir: Path, sha256: str) -> Built:
        """The source cell's store copied to `store_dir` (no build), opened with its index and
        journal; refused if its bytes are no longer those recorded when this run started."""
        marker = self._marker(cell.benchmark, cell.conversation, cell.variant)
        source = self.folder.store_dir(cell.benchmark, cell.conversation, cell.variant)
        name = f"{cell.benchmark}/{cell.conversation}/{cell.variant}"
        self._copy(name, source, store_dir)
        if store_digest(store_dir) != sha256:
            raise MemdirError(
                f"--stores-from {self.run}: the store of {name} changed since this run started; "
                "rerun to record its current digest, or restore the source run"
            )
        cell.stores_from = {"run": str(self.run), "cell": name}
        return Built(
            cell.variant, open_store(store_dir), marker.get("search_profile"), marker.get("checks") or {}
        )
