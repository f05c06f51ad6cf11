"""The examples that call a cloud model, run as a new user runs them without a key (issue 34,
item 12): one clear line naming the key, a non-zero status, no traceback, and nothing created
(no ./memory left behind in the folder they ran in). Real processes, a real temp cwd."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KEYED = [
    ("openai_agent.py", ["I moved to Lisbon in May."], "OPENAI_API_KEY"),
    ("anthropic_agent.py", ["I moved to Lisbon in May."], "ANTHROPIC_API_KEY"),
    ("memory_openai.py", [], "OPENAI_API_KEY"),
    ("memory_anthropic.py", [], "ANTHROPIC_API_KEY"),
]
UNSET = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@pytest.mark.parametrize(("script", "args", "key"), KEYED)
def test_a_missing_key_is_one_line_and_creates_nothing(
    tmp_path: Path, script: str, args: list[str], key: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode in (1, 2), out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""
    [line] = out.stderr.strip().splitlines()
    assert line.startswith(f"{script}: set {key} in the environment") and "nothing was created" in line
    assert list(tmp_path.iterdir()) == []
