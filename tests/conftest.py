"""Shared fixtures: real stores in temp dirs, compared as whole-directory snapshots."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

REPO = Path(__file__).resolve().parents[1]


def snapshot(root: Path) -> dict[str, bytes]:
    """{relative path: bytes} of every file under root, derived state (.memdir) excluded."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts and rel.parts[0] == ".memdir":
            continue
        if p.is_file() and not p.is_symlink():
            out[str(rel)] = p.read_bytes()
    return out


@contextlib.contextmanager
def flock_held(path: Path) -> Iterator[None]:
    """Another writer holding the lock file `path`, by a bare `flock` on its own descriptor
    (what another process does), not through the code under test."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def fm(name: str, description: str = "test file", body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "mem"
    spec.init(open_store(r, create=True))
    return r


@pytest.fixture
def store(root: Path) -> Store:
    return open_store(root)


@pytest.fixture
def manage(store: Store) -> Harness:
    return Harness(store, "manage", role="test")


@pytest.fixture
def search(store: Store) -> Harness:
    return Harness(store, "search", role="test")
