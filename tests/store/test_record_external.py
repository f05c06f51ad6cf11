"""Store.record_external: changes made outside the tools, with renames paired by content."""

from __future__ import annotations

import os
from pathlib import Path

from memdir.store.store import Step, Store, StoreObserver


class Recorder(StoreObserver):
    def __init__(self) -> None:
        self.steps: list[Step] = []

    def on_step(self, store: Store, step: Step) -> None:
        self.steps.append(step)


def _store(tmp_path: Path) -> tuple[Store, Recorder]:
    store = Store(tmp_path)
    rec = Recorder()
    store.observers.append(rec)
    return store, rec


def test_moves_are_renames_with_mtime_snapshots(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("alpha\n")
    (tmp_path / "b.md").write_text("beta\n")
    store, rec = _store(tmp_path)
    with store.step("external"):
        before = store.snapshot()
        os.rename(tmp_path / "a.md", tmp_path / "moved.md")  # keeps size and mtime
        (tmp_path / "b.md").unlink()
        (tmp_path / "c.md").write_text("gamma\n")
        store.record_external(before, store.snapshot())
    got = [(c.kind, c.path, c.new_path) for c in rec.steps[0].changes]
    assert got == [
        ("create", "/memories/c.md", None),
        ("rename", "/memories/a.md", "/memories/moved.md"),
        ("delete", "/memories/b.md", None),
    ]


def test_ambiguous_content_is_not_paired(tmp_path: Path) -> None:
    store, rec = _store(tmp_path)
    with store.step("external"):
        store.record_external(
            {"/memories/x.md": "same", "/memories/y.md": "same"},
            {"/memories/p.md": "same", "/memories/q.md": "same", "/memories/z.md": "other"},
        )
    kinds = sorted((c.kind, c.path) for c in rec.steps[0].changes)
    assert kinds == [
        ("create", "/memories/p.md"),
        ("create", "/memories/q.md"),
        ("create", "/memories/z.md"),
        ("delete", "/memories/x.md"),
        ("delete", "/memories/y.md"),
    ]
