"""The command line, run as a person runs it (subprocess), exit codes included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import fm


def memdir(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = (
        str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + env.get("PYTHONPATH", "")
    )
    return subprocess.run(
        [sys.executable, "-m", "memdir", *args], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.slow
def test_init_validate_tool_context(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = memdir("init", str(root))
    assert r.returncode == 0 and (root / "MEMORY.md").exists()
    r = memdir("validate", str(root))
    assert r.returncode == 0 and "valid" in r.stdout
    args = json.dumps({"path": "/memories/people/alice.md", "file_text": fm("alice", body="vegan [S1T2]\n")})
    r = memdir("tool", str(root), "create", args)
    assert r.returncode == 0, r.stderr
    r = memdir("tool", str(root), "view", '{"path": "/memories/people/alice.md"}')
    assert r.returncode == 0 and "     5\tvegan [S1T2]" in r.stdout
    r = memdir("tool", str(root), "view", '{"path": "/etc/passwd"}')
    assert r.returncode == 1 and "outside memory" in r.stdout
    r = memdir("tool", str(root), "view", "{not json")
    assert r.returncode == 2 and "not JSON" in r.stderr
    r = memdir("tool", str(root), "frobnicate", "{}")
    assert r.returncode == 2 and "no tool named" in r.stderr
    assert (root / "people" / "MEMORY.md").is_file()  # the tool keeps the convention (docs/tools.md)
    assert memdir("validate", str(root)).returncode == 0
    (root / "places").mkdir()  # a folder made by hand, outside the tools, has no index
    (root / "places" / "lisbon.md").write_text(fm("lisbon", body="sunny\n"))
    r = memdir("validate", str(root), "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["valid"] is False and report["violations"][0]["rule"] == "dir-index"
    r = memdir("context", str(root))
    assert r.returncode == 0 and "<core_memory>" in r.stdout and "/memories/people" in r.stdout
    (root / "big.md").write_text(fm("big", body="word " * 200))
    r = memdir("context", str(root), "--core-budget", "50", "--strict")
    assert r.returncode == 1 and "over the budget of 50" in r.stderr
    r = memdir("context", str(root), "--core-budget", "50")
    assert r.returncode == 0 and "warning" in r.stderr


def test_errors_for_missing_root(tmp_path: Path) -> None:
    r = memdir("tool", str(tmp_path / "absent"), "view", "{}")
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = memdir("serve", str(tmp_path), "--profile", "nope")
    assert r.returncode == 2 and "nope" in r.stderr


def test_demo_runs_offline(tmp_path: Path) -> None:
    r = memdir("demo", str(tmp_path / "demo"))
    assert r.returncode == 0, r.stderr
    assert "validate: valid" in r.stdout
    assert "not available in the 'search' profile" in r.stdout
