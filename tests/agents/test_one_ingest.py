"""One ingest (agents/ingest_batch.py) behind every way a conversation comes in: `memdir
ingest` (a real process), `Memory.add`, `AsyncMemory.add` and the study's direct call leave the
same memory files and the same ledger for the same conversation, and a second run of each adds
nothing. Real files, real store, journal and index; the offline curator plays the model."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from memdir import AsyncMemory, Memory, NoOpWarning
from memdir.agents.ingest_batch import ingest_batch
from memdir.chatlogs import read_chat
from memdir.models import get_model
from memdir.store.ingest_ledger import DERIVED
from memdir.store.paths import STATE_DIR

CHAT = [
    {"speaker": "Alice", "text": "I moved to Lisbon in May.", "session": 1, "date": "2024-06-01"},
    {"speaker": "Bob", "text": "How is the new flat?", "session": 1, "date": "2024-06-01"},
    {
        "speaker": "Alice",
        "text": "Small, but I went vegan and cook a lot.",
        "session": 1,
        "date": "2024-06-01",
    },
    {"speaker": "Alice", "text": "My sister Ana is a nurse in Porto.", "session": 2, "date": "2024-06-03"},
]


def _cli(root: Path, chat: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "memdir", "ingest", str(root), str(chat), "--model", "offline"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def _sync(root: Path, chat: Path) -> str:
    with Memory(root) as memory:
        return memory.add(chat).summary


def _async(root: Path, chat: Path) -> str:
    async def run() -> str:
        async with AsyncMemory(root) as memory:
            return (await memory.add(chat)).summary

    return asyncio.run(run())


def _study(root: Path, chat: Path) -> str:
    """The study's way in: the chat read, then the one ingest with no API in between."""
    with Memory(root) as memory:  # opened as the others are: created and initialized
        log = read_chat(str(chat))
        run = ingest_batch(
            get_model("offline"), memory.store, log.turns, derived=log.format in DERIVED, ids=log.ids,
            kind="ingest", file=str(chat),
        )  # fmt: skip
        return asyncio.run(run).summary()


def _memory_files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.md"))
        if STATE_DIR not in p.relative_to(root).parts
    }


def _ledger(root: Path) -> list[tuple[str, str, str]]:
    """Each turn's locator, digest and key; the batch id is random per run."""
    rows = [json.loads(line) for line in (root / STATE_DIR / "ingested.jsonl").read_text().splitlines()]
    return [(r["locator"], r["digest"], r["key"]) for r in rows]


def test_every_way_in_leaves_the_same_store_and_ledger(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps(r) + "\n" for r in CHAT), encoding="utf-8")
    init = subprocess.run(
        [sys.executable, "-m", "memdir", "init", str(tmp_path / "cli")], capture_output=True
    )
    assert init.returncode == 0, init.stderr
    done = _cli(tmp_path / "cli", chat)
    assert done.returncode == 0, done.stderr
    said = {"sync": _sync(tmp_path / "sync", chat), "async": _async(tmp_path / "async", chat)}
    said["study"] = _study(tmp_path / "study", chat)
    files, ledger = _memory_files(tmp_path / "cli"), _ledger(tmp_path / "cli")
    assert any("Lisbon" in text for text in files.values()) and len(ledger) == len(CHAT)
    assert [loc for loc, _, _ in ledger] == ["S1T1", "S1T2", "S1T3", "S2T1"]
    for way in ("sync", "async", "study"):
        assert _memory_files(tmp_path / way) == files, way
        assert _ledger(tmp_path / way) == ledger, way
    # the one summary line: the CLI prints it as the API returns it
    assert said["sync"] == said["async"] == said["study"] and said["sync"] in done.stdout

    again = _cli(tmp_path / "cli", chat)
    assert again.returncode == 1 and "nothing was added" in again.stderr
    assert "4 of 4 turn(s) already in the store" in again.stdout
    with pytest.warns(NoOpWarning, match="every turn was already in the store"):
        assert "4 of 4 turn(s) already" in _sync(tmp_path / "sync", chat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoOpWarning)
        assert "4 of 4 turn(s) already" in _async(tmp_path / "async", chat)
    for way in ("cli", "sync", "async"):
        assert _memory_files(tmp_path / way) == files and _ledger(tmp_path / way) == ledger, way
