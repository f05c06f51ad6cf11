"""`open_store` is the one place a store gets its views (index, journal) and its guards: what
each switch gives, and that the stock MEMORY.md is written before the guards hold."""

from __future__ import annotations

from pathlib import Path

from memdir import Memory
from memdir.search.index import SearchIndex
from memdir.store.journal import Journal
from memdir.store.store import Store
from memdir.tools.guards import GuardedStore, Guards
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

NOTE = "---\nname: tea\ndescription: tea notes\n---\n# Tea\n- Ann likes green tea [S1T1]\n"


def _write_a_note(store: Store) -> None:
    r = Harness(store, "manage", role="t").call("create", {"path": "/memories/tea.md", "file_text": NOTE})
    assert not r.is_error, r.text


def test_a_bare_store_writes_files_and_nothing_else(tmp_path: Path) -> None:
    store = Store(tmp_path / "m", create=True)
    assert store.observers == []
    _write_a_note(store)
    assert (tmp_path / "m" / "tea.md").is_file() and not Journal(store.root).exists


def test_open_store_journals_and_indexes_each_step(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m", create=True, init=True)
    assert not isinstance(store, GuardedStore)
    assert SearchIndex.for_store(store).sync().changed == 1  # builds the index (MEMORY.md)
    _write_a_note(store)
    assert [s.tool for s in Journal(store.root).steps()] == ["baseline", "init", "create"]
    # The step noted its path for the index; the next search commits it (search/index.py defer).
    assert SearchIndex.for_store(store).search("green tea", sync=False) == []
    hits = SearchIndex.for_store(store).search("green tea")
    assert [h.path for h in hits] == ["/memories/tea.md"]


def test_each_view_can_be_left_out(tmp_path: Path) -> None:
    no_journal = open_store(tmp_path / "a", create=True, journal=False)
    _write_a_note(no_journal)
    assert not Journal(no_journal.root).exists
    assert len(open_store(tmp_path / "b", create=True, index=False).observers) == 1
    assert open_store(tmp_path / "c", create=True, index=False, journal=False).observers == []


def test_guards_hold_from_the_first_call_but_not_for_the_stock_index(tmp_path: Path) -> None:
    # A budget the stock MEMORY.md alone exceeds: init still writes it (the operator's file),
    # journaled like any step, and the first model write to core memory is refused.
    store = open_store(tmp_path / "m", create=True, init=True, guards=Guards(core_budget=5))
    assert isinstance(store, GuardedStore) and store.guards.core_budget == 5
    assert (tmp_path / "m" / "MEMORY.md").is_file()
    r = Harness(store, "manage").call("create", {"path": "/memories/tea.md", "file_text": NOTE})
    assert r.is_error and "over this store's budget of 5" in r.text
    assert not (tmp_path / "m" / "tea.md").exists()
    assert [s.tool for s in Journal(store.root).steps()] == ["baseline", "init"]


def test_the_anthropic_adapter_goes_through_the_callers_harness(tmp_path: Path) -> None:
    """Its calls are metered with the caller's own and journaled with their meta, its role on top."""
    mem = Memory(tmp_path / "m", session="s1")
    tool = mem.anthropic_memory_tool()
    assert tool.harness is mem.harness("manage")
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "one\n"})
    tool.call({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"})
    assert (tmp_path / "m" / "b.md").read_text().startswith("---\nname: b\n")  # renamed, name fixed
    mem.call("view", {"path": "/memories"})
    assert mem.harness("manage").meter.calls == 3  # the adapter's two calls and the API's own
    steps = Journal(mem.store.root).steps()[-2:]  # the rename and its name fix are one step
    assert [(s.tool, s.meta["role"], s.meta["session"]) for s in steps] == [
        ("create", "anthropic-memory", "s1"),
        ("rename", "anthropic-memory", "s1"),
    ]
