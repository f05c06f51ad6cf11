"""forget: no byte of the words left under the root or in any journal object, the history still
read (times, tools and operations kept, a marker where it was), nothing brought back by search,
a snapshot or a revert to any step; bad input and no match refused with nothing changed."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.api.memory import Memory
from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.store.journal import Journal, stop_committer
from memdir.store.paths import STATE_DIR
from memdir.store.redaction import Forget
from memdir.store.traces import traces as find_traces
from memdir.tools.forget import run
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

SECRET = "ZQXJ-4417-BLUE-HERON"
OLD_ONLY = "KESTREL-9931-ATTIC"  # only in a file deleted later: an old version holds it


def fm(name: str) -> str:
    return f"---\nname: {name}\ndescription: notes on {name}\n---\n# {name}\n"


def traces(root: Path, *words: str) -> list[str]:
    """Every file under `root` (the state folder included) and every object of the journal that
    holds any of `words`, byte for byte (`store/traces.py`, the one such search)."""
    return sorted(
        {where for found in find_traces(root, [w.encode() for w in words]).values() for where in found}
    )


def build(root: Path) -> Harness:
    h = Harness(open_store(root, create=True, init=True), "manage", keep_indexes=True)
    h.call_or_raise(
        "create", {"path": "/memories/people/alice.md", "file_text": fm("alice") + "- likes tea\n"}
    )
    h.call_or_raise(
        "insert",
        {
            "path": "/memories/people/alice.md",
            "insert_line": 6,
            "insert_text": f"- door code {SECRET} [S1T2]",
        },
    )
    h.call_or_raise(
        "create", {"path": "/memories/attic.md", "file_text": fm("attic") + f"- {OLD_ONLY}\n- {SECRET}\n"}
    )
    h.call_or_raise("delete", {"path": "/memories/attic.md"})
    h.call_or_raise(
        "insert", {"path": "/memories/people/alice.md", "insert_line": 7, "insert_text": "- likes cats"}
    )
    return h


def test_forget_leaves_no_trace_and_the_history_reads(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    build(root)
    with Memory(root) as memory:
        assert SECRET in repr(memory.search(SECRET, mode="bm25"))  # the index holds it before
        before = Journal(root).steps()
        assert traces(root, SECRET, OLD_ONLY)  # the test's needle finds what is there
        out = memory.forget(SECRET, reason="the user asked")
        assert out.files == {"/memories/people/alice.md": 1}
        assert out.steps and "/memories/attic.md" in out.history_paths
        assert SECRET not in repr(memory.search(SECRET, mode="bm25"))
        assert not memory.search(SECRET, mode="bm25")
        memory.forget(OLD_ONLY)  # in an old version only: found and gone too
        after = memory.history()
    stop_committer()
    assert traces(root, SECRET, OLD_ONLY) == []
    # every step kept, in order, with its time, tool and operation; two forget steps on top
    assert len(after) == len(before) + 2
    for old, new in zip(before, after, strict=False):
        assert (old.time, old.tool, old.operation.id, old.changes) == (
            new.time,
            new.tool,
            new.operation.id,
            new.changes,
        )
    assert any(s.redacted for s in after[: len(before)])
    record = after[len(before)]
    assert record.tool == "forget" and record.meta["redaction-reason"] == "the user asked"
    assert record.meta["redaction-digest"] and record.meta["redaction-lines"] == "1"
    assert "- likes cats" in (root / "people/alice.md").read_text()
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 0, result.output
    shown = json.loads(CliRunner().invoke(cli, ["history", str(root), "--steps", "--json"]).output)
    assert [s["step"] for s in shown if "redacted" in s] == [s.index for s in after if s.redacted]


def test_no_snapshot_or_revert_brings_it_back(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    build(root)
    with Memory(root) as memory:
        memory.forget(SECRET)
        n = len(memory.history())
        for i in range(n):
            with memory.at(i) as snap:
                assert all(SECRET not in snap.read(p) for p in snap.paths())
    stop_committer()
    for i in range(1, n):
        result = CliRunner().invoke(cli, ["revert", str(root), str(i), "--force"])
        assert result.exit_code == 0, result.output
        assert traces(root, SECRET) == []


def test_line_and_file_forms(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    build(root)
    with Memory(root) as memory:
        with pytest.raises(MemdirError, match="PATH:N"):
            memory.forget(line="people/alice.md")
        with pytest.raises(MemdirError, match="blank or a frontmatter fence"):
            memory.forget(line="people/alice.md:1")
        out = memory.forget(line="people/alice.md:7")  # the door-code line
        assert out.files == {"/memories/people/alice.md": 1}
        memory.forget(file="/memories/people/alice.md")
        assert not (root / "people/alice.md").exists()
    stop_committer()
    assert traces(root, "likes tea") == []


def test_bad_input_and_nothing_matched_change_nothing(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    build(root)
    with Memory(root) as memory:
        head = Journal(root).head()
        for bad in ("", "ab", "two\nlines"):
            with pytest.raises(MemdirError):
                memory.forget(bad)
        with pytest.raises(MemdirError, match="nothing matched"):
            memory.forget("NOT-IN-THIS-STORE-ANYWHERE")
        with pytest.raises(MemdirError):
            memory.forget(SECRET, file="people/alice.md")
        dry = memory.forget(SECRET, dry_run=True)
        assert dry.files and dry.steps
        assert Journal(root).head() == head
    assert SECRET in (root / "people/alice.md").read_text()


def test_the_tool_forgets_and_refuses_with_text_for_the_model(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    h = build(root)
    r = h.call("forget", {"text": "NOT-IN-THIS-STORE-ANYWHERE"})
    assert r.is_error and "nothing matched" in r.text
    r = h.call("forget", {"text": SECRET, "reason": "user asked"})
    assert not r.is_error and "Forgotten" in r.text
    stop_committer()
    assert traces(root, SECRET) == []


def test_a_frontmatter_field_keeps_its_key_so_the_file_stays_valid(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True, init=True), "manage", keep_indexes=True)
    text = f"---\nname: bob\ndescription: bob, whose pin is {SECRET}\n---\n# bob\n- likes tea\n"
    h.call_or_raise("create", {"path": "/memories/bob.md", "file_text": text})
    r = h.call("forget", {"text": SECRET})
    assert not r.is_error, r.text
    stop_committer()
    assert (root / "bob.md").read_text() == (
        '---\nname: bob\ndescription: "[redacted]"\n---\n# bob\n- likes tea\n'
    )
    assert traces(root, SECRET) == []
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 0, result.output


def test_a_matcher_redacts_its_spans_in_every_version(tmp_path: Path) -> None:
    """The seam a scanner plugs into (`Forget(matcher=...)`): spans per line, replaced by
    `[redacted]` in the files, every version and the messages; the line's other words stay."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True, init=True), "manage", keep_indexes=True)
    key = "sk-" + "Q7w" * 10
    text = fm("keys") + f"- the api key is {key} for the test bot\n"
    h.call_or_raise("create", {"path": "/memories/keys.md", "file_text": text})
    h.call_or_raise(
        "insert", {"path": "/memories/keys.md", "insert_line": 6, "insert_text": "- rotate monthly"}
    )
    pattern = re.compile(r"sk-[A-Za-z0-9]{20,}")
    out = run(
        h.store, Forget(matcher=lambda line: [m.span() for m in pattern.finditer(line)], label="secrets")
    )
    stop_committer()
    assert out.files == {"/memories/keys.md": 1} and out.steps
    assert "- the api key is [redacted] for the test bot" in (root / "keys.md").read_text()
    assert traces(root, key) == []
    ledger = (root / STATE_DIR / "ingested.jsonl").read_text()
    assert '"forgotten_hmac"' in ledger and key not in ledger


def test_what_a_forget_keeps_names_the_words_by_a_keyed_digest_only(tmp_path: Path) -> None:
    """A plain SHA-256 of a four-digit PIN is the PIN to anyone who tries 10,000 values: no
    file under the root and no journal object may hold it, in any form; two stores name the
    same words by two unrelated digests."""
    pin = "PIN 4417"
    digests = []
    for name in ("a", "b"):
        root = tmp_path / name
        h = Harness(open_store(root, create=True, init=True), "manage")
        h.call_or_raise("create", {"path": "/memories/bank.md", "file_text": fm("bank") + f"- card {pin}\n"})
        with Memory(root) as memory:
            digests.append(memory.forget(pin).record.digest)
        stop_committer()
        plain = hashlib.sha256(pin.encode()).hexdigest()
        assert traces(root, pin, plain, plain[:16]) == []
        assert traces(root, digests[-1])  # the record does keep the keyed one
    assert digests[0] != digests[1]
