"""The one scratch copy a search role with a shell works in (eval shell search, skill serving):
nothing written there reaches the store, and nothing outside the store reaches the copy."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import fm

from memdir.store import spec
from memdir.store.workcopy import scratch_copy
from memdir.tools.wiring import open_store


def test_a_scratch_copy_holds_the_memory_only_and_is_thrown_away(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m", create=True)
    spec.init(store)
    with store.step("seed"):
        store.create(
            "/memories/people/alice.md", fm("alice", "- alice | diet: vegan (since 2023-05-02) [S6T5]\n")
        )
    secret = tmp_path / "outside.md"
    secret.write_text("OUTSIDE SECRET\n")
    os.link(secret, tmp_path / "m" / "shared.md")  # a hard link to a file outside the store
    os.symlink(secret, tmp_path / "m" / "link.md")
    before = {p: p.read_bytes() for p in (tmp_path / "m").rglob("*.md") if not p.is_symlink()}
    with scratch_copy(store) as copy:
        root = Path(copy.root)
        assert (root / "people" / "alice.md").read_bytes() == before[tmp_path / "m" / "people" / "alice.md"]
        assert not (root / ".memdir").exists()  # derived state left out
        assert not (root / "shared.md").exists()  # a hard-linked file is never copied
        copied = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
        assert all(b"OUTSIDE SECRET" not in p.read_bytes() for p in copied)  # no link was followed
        (root / "people" / "alice.md").write_text("overwritten\n")
        (root / "new.md").write_text("new\n")
    assert not root.exists()
    assert {p: p.read_bytes() for p in (tmp_path / "m").rglob("*.md") if not p.is_symlink()} == before
    assert not (tmp_path / "m" / "new.md").exists()
