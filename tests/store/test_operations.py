"""History per operation (issue 34, item 7): every journaled step carries the operation that made
it (one ingest, one add, one consolidate, one adopt, one tool call outside any of them); `history`
groups by operation, `revert --operation` undoes one whole, and the UI's history page groups the
same way. Real stores, the real journal, the real CLI and the real UI app."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pygit2
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from memdir.agents.run import manage_chunk
from memdir.api.memory import Memory
from memdir.cli.main import cli
from memdir.models import get_model
from memdir.store import operations
from memdir.store.journal import Journal, group
from memdir.stream import Turn, chunk_stream
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store
from memdir.ui.app import build_app
from memdir.ui.sources import Source, Sources

FACTS = [
    "I went vegan last month.",
    "My sister Carol lives in Porto.",
    "I work as a nurse at the city hospital.",
    "I adopted a cat named Miso in April.",
    "I am learning Portuguese on Tuesdays.",
]
NOTE = "---\nname: notes\ndescription: Loose notes\n---\n# Notes\n- buy stamps\n"


def _note(name: str) -> dict[str, str]:
    return {
        "path": f"/memories/{name}.md",
        "file_text": f"---\nname: {name}\ndescription: {name}\n---\n{name}\n",
    }


def _chat(tmp_path: Path) -> Path:
    lines = []
    for i, fact in enumerate(FACTS):
        day = f"2024-03-0{i + 1}"
        lines.append({"role": "user", "name": "Alice", "content": fact, "date": day})
        lines.append({"role": "assistant", "content": "Noted.", "date": day})
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
    return path


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


def _invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.output


def _ingested(tmp_path: Path) -> tuple[Path, dict[str, bytes], str]:
    """A store with one note made by a tool call, then one CLI ingest of a 10-turn file: the
    store, its files before the ingest, and the ingest's operation id."""
    root = tmp_path / "mem"
    assert _invoke("init", str(root))[0] == 0
    made = Harness(open_store(root), "manage").call(
        "create", {"path": "/memories/notes.md", "file_text": NOTE}
    )
    assert not made.is_error, made.text
    before = _files(root)
    code, out = _ingest(root, _chat(tmp_path))
    assert code == 0, out
    op = re.search(r"--operation ([0-9a-f]{12})", out)
    assert op is not None, out
    return root, before, op.group(1)


def _ingest(root: Path, chat: Path) -> tuple[int, str]:
    return _invoke("ingest", str(root), "--model", "offline", str(chat))


def test_an_ingest_lists_as_one_operation_of_its_steps(tmp_path: Path) -> None:
    root, _before, op_id = _ingested(tmp_path)
    steps = Journal(root).steps()
    code, out = _invoke("history", str(root), "--json")
    assert code == 0, out
    ops = json.loads(out)
    assert [o["kind"] for o in ops] == ["baseline", "call", "call", "ingest"]  # init, the note's create
    ingest = ops[-1]
    assert ingest["operation"] == op_id and ingest["label"] == "ingest chat.jsonl"
    assert len(ingest["steps"]) > 5 and ingest["steps"] == list(range(3, len(steps)))
    assert "/memories/people/MEMORY.md" in ingest["files"] and "/memories/notes.md" not in ingest["files"]
    code, out = _invoke("history", str(root), "--operation", op_id[:6], "--json")
    assert code == 0, out
    assert [s["step"] for s in json.loads(out)] == ingest["steps"]
    code, out = _invoke("history", str(root))
    assert code == 0 and op_id in out and "chat.jsonl" in out and "--operation ID" in out
    (row,) = [line for line in out.splitlines() if op_id in line]
    assert "ingest chat.jsonl" in row  # piped, the label is not folded onto lines of its own
    code, out = _invoke("history", str(root), "--operation", "zzzz")
    assert code == 1 and "no operation 'zzzz'" in out


def test_revert_operation_restores_the_ingest_and_keeps_a_later_operation_on_other_files(
    tmp_path: Path,
) -> None:
    root, before, op_id = _ingested(tmp_path)
    later = Harness(open_store(root), "manage").call(
        "str_replace",
        {"path": "/memories/notes.md", "old_str": "buy stamps", "new_str": "buy stamps and tea"},
    )
    assert not later.is_error, later.text
    edited = (root / "notes.md").read_bytes()
    steps_before = len(Journal(root).steps())
    code, out = _invoke("revert", str(root), "--operation", op_id)
    assert code == 0, out
    assert (
        f"reverted operation {op_id} (ingest: ingest chat.jsonl;" in out and "removed /memories/people" in out
    )
    after = _files(root)
    assert after["notes.md"] == edited  # the later operation's edit stays
    assert {k: v for k, v in after.items() if k != "notes.md"} == {
        k: v for k, v in before.items() if k != "notes.md"
    }
    steps = Journal(root).steps()
    assert len(steps) == steps_before + 1 and steps[-1].tool == "revert"  # one journaled step
    assert steps[-1].operation.kind == "revert" and steps[-1].meta["reverted_operation"] == op_id
    code, out = _invoke("revert", str(root), "--operation", op_id)
    assert code == 0 and "nothing to revert" in out  # said, not silent
    code, out = _ingest(root, _chat(tmp_path))
    assert code == 0, out  # the turns it took back can be ingested again


def test_revert_operation_refuses_when_a_later_operation_changed_its_files(tmp_path: Path) -> None:
    root, before, op_id = _ingested(tmp_path)
    harness = Harness(open_store(root), "manage")
    facts = "/memories/people/alice/facts.md"
    text = harness.call("view", {"path": facts}).text
    line = next(ln for ln in text.splitlines() if "vegan" in ln).split("\t", 1)[-1].strip()
    later = harness.call("str_replace", {"path": facts, "old_str": line, "new_str": line + " (checked)"})
    assert not later.is_error, later.text
    later_id = Journal(root).steps()[-1].operation.id
    held = _files(root)
    code, out = _invoke("revert", str(root), "--operation", op_id)
    assert code == 2
    assert later_id in out and facts in out and "Revert those operations first" in out and "--force" in out
    assert _files(root) == held  # refused: nothing changed
    assert _invoke("revert", str(root), "--operation", later_id)[0] == 0  # newest first, as it says
    code, out = _invoke("revert", str(root), "--operation", op_id)
    assert code == 0, out
    assert _files(root) == before


def test_force_puts_an_operations_files_back_over_a_later_change(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    assert not memory.call("create", {"path": "/memories/notes.md", "file_text": NOTE}).is_error
    made = Journal(memory.store.root).steps()[-1].operation.id
    edit = {"path": "/memories/notes.md", "old_str": "stamps", "new_str": "tea"}
    assert not memory.call("str_replace", edit).is_error
    code, out = _invoke("revert", memory.root, "--operation", made)
    assert code == 2 and "/memories/notes.md" in out
    code, out = _invoke("revert", memory.root, "--operation", made, "--force")
    assert code == 0 and "removed /memories/notes.md" in out
    assert not (memory.store.root / "notes.md").exists()
    code, out = _invoke("revert", memory.root, "--operation", "1")
    assert code == 2 and "4 or more characters" in out
    code, out = _invoke("revert", memory.root)
    assert code == 2 and "a STEP, or --operation ID" in out


def test_a_journal_without_operation_ids_reads_as_one_operation_per_step(tmp_path: Path) -> None:
    """Steps committed before steps carried an operation (the old message, committed by hand)."""
    root = tmp_path / "mem"
    memory = Memory(root)
    assert not memory.call("create", _note("a")).is_error
    journal = Journal(root)
    old = "str_replace: 1 change\n\nMemdir-Tool: str_replace\nMemdir-Change: modify\t/memories/a.md\n"
    repo = journal.repo()
    hand = pygit2.Signature("hand", "hand@localhost")
    for _ in (1, 2):
        head = repo.head.target
        repo.create_commit("HEAD", hand, hand, old, repo[head].peel(pygit2.Tree).id, [head])
    repo.free()
    steps = journal.steps()
    ops = group(steps)
    assert [len(o.steps) for o in ops] == [1] * len(steps)
    assert ops[-1].id == steps[-1].commit[:12] and ops[-1].operation.kind == "str_replace"


def test_add_and_calls_outside_any_operation_each_get_their_own(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    added = memory.add([{"role": "user", "content": f} for f in FACTS])
    assert not memory.call("create", _note("x")).is_error
    assert not memory.call("create", _note("y")).is_error
    ops = memory.operations()
    add = next(o for o in ops if o.id == added.operation)
    assert add.kind == "add" and add.label == "add 5 turns" and len(add.steps) > 1
    assert {s.tool for s in add.steps} >= {"create"} and add.files and add.steps[0].index > 1
    calls = ops[-2:]
    assert [(o.kind, o.label, len(o.steps)) for o in calls] == [("call", "create", 1), ("call", "create", 1)]
    assert calls[0].id != calls[1].id and calls[1].files == ("/memories/y.md",)


def test_an_operation_stays_on_its_own_store(tmp_path: Path) -> None:
    a, b = (
        open_store(tmp_path / "a", create=True, init=True),
        open_store(tmp_path / "b", create=True, init=True),
    )
    with operations.operation(a.root, "ingest", "ingest x") as op:
        with operations.operation(a.root, "episode", "manage chunk 1") as inner:
            assert inner == op  # the outer operation goes on
        assert not Harness(a, "manage").call("create", _note("a")).is_error
        assert not Harness(b, "manage").call("create", _note("b")).is_error
    assert Journal(a.root).steps()[-1].operation == op
    other = Journal(b.root).steps()[-1].operation
    assert other.id != op.id and other.kind == "call"


def test_a_management_episode_outside_any_operation_is_one(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m", create=True, init=True)
    turns = [Turn(f"S1T{i + 1}", "Alice", fact, "2024-03-01") for i, fact in enumerate(FACTS)]
    out = asyncio.run(manage_chunk(get_model("offline"), store, chunk_stream(turns)[0]))
    assert out.extra["writes"] > 1
    ops = group(Journal(store.root).steps())
    assert [(o.operation.kind, o.operation.label) for o in ops[2:]] == [("episode", "manage chunk 1")]
    assert len(ops[-1].steps) > 1


@pytest.fixture
def ui(tmp_path: Path) -> tuple[TestClient, str, int]:
    root, _before, op_id = _ingested(tmp_path)
    steps = len(Journal(root).steps())
    app = build_app(Sources([Source("store", "mem", root)]), scratch=tmp_path / "scratch")
    return TestClient(app, base_url="http://127.0.0.1"), op_id, steps


def test_ui_history_lists_operations_and_an_operations_steps(ui: tuple[TestClient, str, int]) -> None:
    client, op_id, steps = ui
    html = client.get("/s/store/history").text
    rows = re.findall(r'<tr class="operation">(.*?)</tr>', html, re.S)
    assert len(rows) == 4  # baseline, init, the note, the ingest: not one row per step
    ingest = rows[0]  # newest first
    n = steps - 3
    assert op_id in ingest and "ingest chat.jsonl" in ingest and f"{n} steps (3-{steps - 1})" in ingest
    assert f'href="/s/store/history?operation={op_id}"' in ingest
    step = client.get(f"/s/store/step/{steps - 1}").text
    assert f'href="/s/store/history?operation={op_id}"' in step and "ingest: ingest chat.jsonl" in step
    one = client.get("/s/store/history", params={"operation": op_id[:5]}).text
    assert (
        len(re.findall(r'<tr class="step">', one)) == n and "memdir revert ROOT --operation " + op_id in one
    )
    assert client.get("/s/store/history", params={"operation": "ffffffff"}).status_code == 404
