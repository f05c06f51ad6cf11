"""The local model's install hint leads somewhere (issue 34, item 10): the command every refusal
names installs everything the refusal is about, the server package included, and says so first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HIDE_SERVER = "import sys; sys.modules['llama_cpp'] = None; from memdir.cli.main import cli; cli()"


def _memdir(args: list[str], models: Path, hide_server: bool = False) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own, with an empty model cache (a fresh machine); with
    `hide_server`, llama.cpp's package cannot be imported (as where the `local` extra is absent)."""
    env = {**os.environ, "MEMDIR_MODELS": str(models)}
    code = HIDE_SERVER if hide_server else "from memdir.cli.main import cli; cli()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False
    )


def test_status_names_the_command_that_installs_the_missing_server_and_that_command_would(
    tmp_path: Path,
) -> None:
    status = _memdir(["local-model", "status"], tmp_path, hide_server=True)
    assert status.returncode == 1
    assert "llama.cpp's server" in status.stdout and "memdir local-model install" in status.stdout
    assert "make local-model" not in status.stdout  # one command, not two to choose between
    plan = _memdir(["local-model", "install", "--dry-run"], tmp_path, hide_server=True)
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.strip() == "would install: server, weights"
    assert list(tmp_path.iterdir()) == []  # a dry run writes nothing


def test_with_the_server_present_only_the_weights_are_missing(tmp_path: Path) -> None:
    import importlib.util

    plan = _memdir(["local-model", "install", "--dry-run"], tmp_path)
    server = importlib.util.find_spec("llama_cpp") is not None
    assert plan.stdout.strip() == ("would install: weights" if server else "would install: server, weights")
