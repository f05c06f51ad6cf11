"""Concurrent syncs of one store queue, and a writer writing meanwhile loses nothing (issue 50,
item 3): two `memdir sync` processes on one store at once, while this process writes to it
through the tools, with the other store's changes waiting on the remote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memdir.sync import clone, sync
from sync_helpers import bare_remote, call, create, memory_files, new_store, remote_files

NOTE = "/memories/people/eve.md"


@pytest.mark.slow
def test_two_syncs_and_a_writer_at_once(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = new_store(tmp_path / "a")
    create(a, NOTE, "# Eve\n", "eve")
    sync(a, remote)
    b = tmp_path / "b"
    clone(remote, b)
    for k in range(5):
        call(
            b, "str_replace", path=NOTE, old_str="# Eve\n", new_str=f"# Eve\n- Eve from b {k} [S9T{k + 1}]\n"
        )
    sync(b)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memdir", "sync", str(a)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    written = []
    for k in range(8):
        line = f"- Eve from a {k} [S8T{k + 1}]"
        call(a, "str_replace", path=NOTE, old_str="# Eve\n", new_str=f"# Eve\n{line}\n")
        written.append(line)
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    sync(a)
    text = (a / "people/eve.md").read_text()
    assert all(line in text for line in written)
    assert all(f"- Eve from b {k} [S9T{k + 1}]" in text for k in range(5))
    assert memory_files(a) == remote_files(remote)
