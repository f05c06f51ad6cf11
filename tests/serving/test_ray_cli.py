"""`memdir serve --ray` refuses what it cannot serve before any cluster starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.mcp import tenants
from memdir.store import spec
from memdir.tools.wiring import open_store, release_store

pytest.importorskip("ray.serve")


def _tenants(tmp_path: Path) -> Path:
    root = tmp_path / "acme"
    store = open_store(root, create=True)
    spec.init(store)
    release_store(store)
    tf = tmp_path / "tenants.json"
    tenants.add_token(tf, str(root), "manage")
    return tf


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--ray"], "add --tenants FILE --http PORT"),
        (["--http", "1", "--replicas", "2"], "add --ray"),
    ],
)
def test_ray_options_need_their_company(tmp_path: Path, args: list[str], said: str) -> None:
    tf = _tenants(tmp_path)
    out = CliRunner().invoke(cli, ["serve", "--tenants", str(tf), *args])
    assert out.exit_code == 2 and said in out.output


def test_a_tenant_without_a_remote_is_named(tmp_path: Path) -> None:
    tf = _tenants(tmp_path)
    out = CliRunner().invoke(cli, ["serve", "--tenants", str(tf), "--http", "1", "--ray"])
    assert isinstance(out.exception, MemdirError), out.output  # the entry point prints it, exit 2
    assert "acme" in str(out.exception) and "memdir sync ROOT REMOTE" in str(out.exception)
