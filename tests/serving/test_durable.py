"""A tenant's copies on replicas (serving/durable.py), without Ray: what one copy acknowledges
is in the tenant's remote, and another copy of the same tenant reads it on its next call."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memdir.serving.durable import TenantCopy
from memdir.serving.replica import DurableHarness
from memdir.serving.wire import Grant
from memdir.store import spec
from memdir.tools.wiring import open_store, release_store


def _note(name: str, line: str) -> str:
    return f"---\nname: {name}\ndescription: {line}\n---\n- {line} [S1T1]\n"


@pytest.fixture
def remote(tmp_path: Path) -> str:
    from memdir.sync import sync

    root = tmp_path / "origin"
    store = open_store(root, create=True)
    spec.init(store)
    release_store(store)
    bare = tmp_path / "acme.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(bare)], check=True)
    sync(root, str(bare))
    return str(bare)


def _in_remote(remote: str, path: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={remote}", "show", f"main:{path}"], capture_output=True, text=True
    )
    return done.stdout


def test_a_write_returns_once_the_remote_holds_it_and_the_other_copy_reads_it(
    tmp_path: Path, remote: str
) -> None:
    grant = Grant("acme", remote, "manage", "0" * 64)
    one = TenantCopy.load("acme", remote, tmp_path / "replica-1")
    two = TenantCopy.load("acme", remote, tmp_path / "replica-2")
    try:
        a, b = DurableHarness(one, grant), DurableHarness(two, grant)
        assert not b.call("view", {"path": "/memories"}).is_error  # two is loaded, and idle
        made = a.call(
            "create", {"path": "/memories/people/ann.md", "file_text": _note("ann", "Ann moved to Lisbon")}
        )
        assert not made.is_error, made.text
        assert "Lisbon" in _in_remote(remote, "people/ann.md")  # acknowledged: in the remote already
        seen = b.call("view", {"path": "/memories/people/ann.md"})
        assert not seen.is_error and "Lisbon" in seen.text, seen.text
        # and the other way: a write on the second copy, read on the first
        made = b.call("create", {"path": "/memories/people/bo.md", "file_text": _note("bo", "Bo likes tea")})
        assert not made.is_error, made.text
        seen = a.call("grep", {"pattern": "tea", "path": "/memories"})
        assert not seen.is_error and "bo.md" in seen.text, seen.text
    finally:
        one.close()
        two.close()
    assert not one.root.exists() and not two.root.exists()  # an unloaded copy leaves nothing behind


def test_a_write_the_remote_refuses_is_not_acknowledged(tmp_path: Path, remote: str) -> None:
    copy = TenantCopy.load("acme", remote, tmp_path / "replica")
    try:
        harness = DurableHarness(copy, Grant("acme", remote, "manage", "0" * 64))
        hooks = Path(remote) / "hooks" / "pre-receive"
        hooks.write_text("#!/bin/sh\necho 'disk full' >&2\nexit 1\n")
        hooks.chmod(0o755)
        made = harness.call(
            "create", {"path": "/memories/people/cy.md", "file_text": _note("cy", "Cy is new")}
        )
        assert made.is_error and "not acknowledged" in made.text, made.text
        assert _in_remote(remote, "people/cy.md") == ""
    finally:
        hooks.unlink()
        copy.close()  # one more try on the way out: the remote takes it now
    assert "Cy is new" in _in_remote(remote, "people/cy.md")
