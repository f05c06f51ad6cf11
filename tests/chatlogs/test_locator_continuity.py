"""Locators never collide (issue 34, item 3): `memdir ingest` continues after the highest session
the store cites, a second ingest of turns the store already holds adds nothing and says so, and
`memdir check` reports a locator given to two different turns."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memdir.analytics.integrity import check
from memdir.cli.main import cli
from memdir.conventions import locators
from memdir.store import ingest_ledger
from memdir.stream import Turn
from memdir.tools.wiring import open_store

ALICE = [
    {"role": "user", "name": "Alice", "content": "I went vegan last month.", "date": "2024-03-01"},
    {"role": "assistant", "content": "Noted, Alice.", "date": "2024-03-01"},
]
BOB = [
    {"role": "user", "name": "Bob", "content": "I moved to Lisbon in May.", "date": "2024-06-02"},
    {"role": "assistant", "content": "Lisbon, got it.", "date": "2024-06-02"},
]


def _file(tmp_path: Path, name: str, messages: list[dict[str, str]]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def _ingest(root: Path, chat: Path) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["ingest", str(root), "--model", "offline", str(chat)])
    return res.exit_code, res.output


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text()
        for p in sorted(root.rglob("*.md"))
        if ".memdir" not in p.parts
    }


def _cited(root: Path) -> set[str]:
    return {loc for text in _tree(root).values() for loc in locators(text)}


def test_ingesting_the_same_file_twice_adds_nothing_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    CliRunner().invoke(cli, ["init", str(root)])
    chat = _file(tmp_path, "alice.jsonl", ALICE)
    code, out = _ingest(root, chat)
    assert code == 0, out
    before = _tree(root)
    code, out = _ingest(root, chat)
    assert code == 1
    assert "2 of 2 turn(s) already in the store" in out and "nothing was added" in out
    assert _tree(root) == before


def test_a_second_conversation_continues_after_the_sessions_the_store_cites(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    CliRunner().invoke(cli, ["init", str(root)])
    assert _ingest(root, _file(tmp_path, "alice.jsonl", ALICE))[0] == 0
    first = _cited(root)
    assert first and all(loc.startswith("S1T") for loc in first)
    code, out = _ingest(root, _file(tmp_path, "bob.jsonl", BOB))
    assert code == 0, out
    assert "sessions numbered from S2" in out
    added = _cited(root) - first
    assert added and all(loc.startswith("S2T") for loc in added)
    assert check(open_store(root)).ok


def test_turns_carrying_a_locator_that_names_another_turn_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    CliRunner().invoke(cli, ["init", str(root)])
    a = {"locator": "S1T1", "speaker": "Alice", "text": "I went vegan last month.", "date": "2024-03-01"}
    b = {"locator": "S1T1", "speaker": "Bob", "text": "I moved to Lisbon in May.", "date": "2024-06-02"}
    assert _ingest(root, _file(tmp_path, "a.jsonl", [a]))[0] == 0
    before = _tree(root)
    code, out = _ingest(root, _file(tmp_path, "b.jsonl", [b]))
    assert code == 1 and "S1T1 already names another turn" in out
    assert _tree(root) == before


def test_check_reports_a_locator_given_to_two_different_turns(tmp_path: Path) -> None:
    """Two turns differ when their speaker, text or date differ; the same turn ingested twice is
    not a reuse. The ledger here is written as two separate ingests would have left it."""
    root = tmp_path / "mem"
    CliRunner().invoke(cli, ["init", str(root)])
    store = open_store(root)
    (root / "alice.md").write_text("---\nname: alice\ndescription: Alice\n---\n- diet: vegan [S1T1]\n")
    alice = Turn("S1T1", "Alice", "I went vegan last month.", "2024-03-01")
    ingest_ledger.record(store, [alice])
    ingest_ledger.record(store, [alice])  # the same turn again: no problem
    assert check(store).ok
    ingest_ledger.record(store, [Turn("S1T1", "Bob", "I moved to Lisbon.", "2024-06-02")])
    report = check(store)
    assert [(p.rule, p.path) for p in report.problems] == [("locator-reuse", "S1T1")]
    assert "2 different turns" in report.problems[0].message
