"""A typo is refused, not obeyed (issue 34, items 4 and 8): `ingest --root` and `serve --root`
name `memdir init` for a folder that is not a memory instead of making or serving one, and
`serve --http` refuses a non-loopback address without tenants' tokens unless the operator says
in a flag that unauthenticated writes from the network are what they want."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli


def _chat(tmp_path: Path) -> Path:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": "I am vegan now."}) + "\n", encoding="utf-8")
    return chat


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    """`memdir serve` in a process of its own: a server that starts instead of refusing is cut at
    the deadline and the test fails on its exit status."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "memdir", "serve", *args], capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=30, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"memdir serve {' '.join(args)} served instead of refusing: {exc.stderr!r}")


def test_ingest_into_a_missing_root_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    typo = tmp_path / "nope"
    res = CliRunner().invoke(cli, ["ingest", "--root", str(typo), "--model", "offline", str(_chat(tmp_path))])
    assert res.exit_code != 0
    assert "memdir init" in res.output and str(typo) in res.output
    assert not typo.exists()


def test_ingest_into_a_folder_that_is_not_a_memory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# mine\n", encoding="utf-8")
    res = CliRunner().invoke(
        cli, ["ingest", "--root", str(folder), "--model", "offline", str(_chat(tmp_path))]
    )
    assert res.exit_code != 0 and "is not a memory" in res.output and "memdir init" in res.output
    assert sorted(p.name for p in folder.iterdir()) == ["notes.md"]  # nothing written, not even .memdir


def test_ingest_into_an_initialized_memory_still_works(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    res = CliRunner().invoke(cli, ["ingest", "--root", str(root), "--model", "offline", str(_chat(tmp_path))])
    assert res.exit_code == 0, res.output


def test_serve_refuses_a_folder_that_is_not_a_memory(tmp_path: Path) -> None:
    done = _serve("--root", str(tmp_path))
    assert done.returncode != 0
    assert "is not a memory" in done.stderr and "memdir init" in done.stderr
    assert not (tmp_path / ".memdir").exists()


def test_serve_refuses_a_network_address_without_tenants(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    done = _serve("--root", str(root), "--http", "0", "--host", "0.0.0.0")
    assert done.returncode != 0
    assert "--tenants" in done.stderr and "--allow-remote-unauthenticated" in done.stderr


def test_serve_with_the_flag_serves_a_network_address_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    args = ["--root", str(root), "--http", "0", "--host", "0.0.0.0", "--allow-remote-unauthenticated"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve", *args], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # the warning comes before the server starts
        assert "warning" in first and "without authentication" in first, first
    finally:
        proc.terminate()
        proc.wait(timeout=30)
