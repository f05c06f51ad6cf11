"""Real stores, a real bare git remote, writes through the real tools."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import fm, snapshot
from memdir.store import spec
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store, release_store


def bare_remote(tmp: Path, name: str = "remote.git") -> str:
    path = tmp / name
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)
    return str(path)


def new_store(root: Path) -> Path:
    store = open_store(root, create=True)
    spec.init(store)
    release_store(store)
    return root


def call(root: Path, tool: str, **args: str) -> str:
    store = open_store(root)
    try:
        result = Harness(store, "manage").call(tool, dict(args))
        assert not result.is_error, result.text
        return result.text
    finally:
        release_store(store)


def create(root: Path, path: str, body: str, name: str = "note") -> None:
    call(root, "create", path=path, file_text=fm(name, body=body))


def memory_files(root: Path) -> dict[str, bytes]:
    """The memory files: what a sync carries. A temp file a killed writer left (a hidden
    `.memdir-tmp-*`, swept by a later writer) is no memory file."""
    return {k: v for k, v in snapshot(root).items() if not any(p.startswith(".") for p in k.split("/"))}


def remote_files(url: str, branch: str = "main") -> dict[str, bytes]:
    """The files on the remote's branch, read by git itself as a person browsing it would."""
    names = subprocess.run(
        ["git", f"--git-dir={url}", "ls-tree", "-r", "--name-only", branch],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    return {
        n: subprocess.run(
            ["git", f"--git-dir={url}", "show", f"{branch}:{n}"], capture_output=True, check=True
        ).stdout
        for n in names
        if n
    }
