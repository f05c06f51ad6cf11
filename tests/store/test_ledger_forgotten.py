"""A forget is remembered by the ingest ledger (a digest, never the words): ingesting the same
chat log again leaves out the turn that held the words, and says so."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.store.journal import stop_committer
from memdir.store.paths import STATE_DIR

SECRET = "ZQXJ-4417-BLUE-HERON"
CHAT = [
    {"role": "user", "name": "Alice", "content": "I went vegan last month.", "date": "2024-03-01"},
    {"role": "assistant", "content": "Noted, Alice.", "date": "2024-03-01"},
    {
        "role": "user",
        "name": "Alice",
        "content": f"My boat hull reads {SECRET}, keep it in mind.",
        "date": "2024-03-01",
    },
    {"role": "assistant", "content": "Kept.", "date": "2024-03-01"},
    {"role": "user", "name": "Alice", "content": "I moved to Lisbon in May.", "date": "2024-06-02"},
]


def _words(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def _line_of(root: Path) -> str:
    """`PATH:N` of the first live line holding the words."""
    for p in sorted(root.rglob("*.md")):
        if STATE_DIR not in p.parts and SECRET in p.read_text():
            n = p.read_text().split("\n").index(next(x for x in p.read_text().split("\n") if SECRET in x))
            return f"{p.relative_to(root)}:{n + 1}"
    raise AssertionError("no line holds the words")


@pytest.mark.parametrize(("strategy", "by"), [("dump", "text"), ("curate", "text"), ("curate", "line")])
def test_reingest_does_not_bring_the_words_back(tmp_path: Path, strategy: str, by: str) -> None:
    """By line, the turn is known by the locator its line cited (the line's words are the
    curator's, not the turn's)."""
    root, chat = tmp_path / "mem", tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps(m) + "\n" for m in CHAT), encoding="utf-8")
    run = CliRunner().invoke
    assert run(cli, ["init", str(root)]).exit_code == 0
    out = run(cli, ["ingest", str(root), "--model", "offline", "--strategy", strategy, str(chat)])
    assert out.exit_code == 0, out.output
    assert _words(root), strategy  # the words landed in the files
    what = [SECRET] if by == "text" else ["--line", _line_of(root)]
    out = run(cli, ["forget", str(root), *what, "--yes", "--reason", "asked"])
    assert out.exit_code == 0, out.output
    stop_committer()
    assert _words(root) == []
    ledger = (root / STATE_DIR / "ingested.jsonl").read_text()
    assert ('"forgotten_hmac"' if by == "text" else '"forgotten_key"') in ledger and SECRET not in ledger
    assert hashlib.sha256(SECRET.encode()).hexdigest() not in ledger  # keyed, not a plain hash
    out = run(cli, ["ingest", str(root), "--model", "offline", "--strategy", strategy, str(chat)])
    assert "hold words forgotten by 'memdir forget', left out" in out.output, out.output
    stop_committer()
    assert _words(root) == []


def test_reingesting_the_same_export_does_not_bring_the_words_back(tmp_path: Path) -> None:
    """A Claude.ai export: its turns are known by their message ids, and the turn holding the
    words is left out by their digest."""
    root, export = tmp_path / "mem", tmp_path / "conversations.json"
    at = "2024-07-10T09:00:00Z"
    messages = [
        {"uuid": "m1", "sender": "human", "text": "I started learning the guitar.", "created_at": at},
        {"uuid": "m2", "sender": "assistant", "text": "Great, which songs?", "created_at": at},
        {"uuid": "m3", "sender": "human", "text": f"The safe code is {SECRET}.", "created_at": at},
    ]
    chat = [{"uuid": "c1", "name": "Guitar", "created_at": at, "chat_messages": messages}]
    export.write_text(json.dumps(chat), encoding="utf-8")
    run = CliRunner().invoke
    assert run(cli, ["init", str(root)]).exit_code == 0
    ingest = ["ingest", str(root), "--model", "offline", "--strategy", "dump", str(export)]
    assert run(cli, ingest).exit_code == 0 and _words(root)
    assert run(cli, ["forget", str(root), SECRET, "--yes"]).exit_code == 0
    out = run(cli, ingest)
    assert "1 turn(s) hold words forgotten by 'memdir forget', left out" in out.output, out.output
    stop_committer()
    assert _words(root) == []


def test_a_plain_digest_row_of_an_earlier_version_still_leaves_its_turn_out(tmp_path: Path) -> None:
    """Ledgers written before the store's key named the words by plain SHA-256; those forgets
    hold too."""
    root, chat = tmp_path / "mem", tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps(m) + "\n" for m in CHAT), encoding="utf-8")
    run = CliRunner().invoke
    assert run(cli, ["init", str(root)]).exit_code == 0
    raw = SECRET.encode()
    (root / STATE_DIR).mkdir(exist_ok=True)
    with (root / STATE_DIR / "ingested.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"forgotten": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}) + "\n")
    out = run(cli, ["ingest", str(root), "--model", "offline", "--strategy", "dump", str(chat)])
    assert "1 turn(s) hold words forgotten by 'memdir forget', left out" in out.output, out.output
    stop_committer()
    assert _words(root) == []
