"""The ingest ledger tells the truth (issue 45, item 3): a turn is held only while the batch that
took it still has lines in the store, a failed run keeps what it landed and its rerun resumes,
a turn is known by its place in its conversation (an export's ids where it has them), not by
its words and day, and two ingests into one store run one after the other.

Real stores in temp dirs, the real CLI (click's runner, and real processes for the race), the
offline curator or a scripted model at the LLM boundary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir import Memory
from memdir.chatlogs import read_chat
from memdir.cli.main import cli
from memdir.conventions import locators
from memdir.models import ModelError, get_model
from memdir.models.base import ChatMessage
from memdir.models.scripted import ScriptedReply, answer, call
from memdir.store import ingest_ledger
from memdir.stream import Turn
from memdir.tools.wiring import open_store

ANA = [
    ("I live in Lisbon.", "2024-03-01"),
    ("I work as a nurse at the city hospital.", "2024-03-01"),
    ("My dog is called Pimenta.", "2024-03-01"),
]
RUI = [
    ("I play the cello in an orchestra.", "2024-04-01"),
    ("I grew up in Braga.", "2024-04-01"),
    ("My favourite food is bacalhau.", "2024-04-01"),
]


def _messages(name: str, said: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"role": "user", "name": name, "content": text, "date": day} for text, day in said]


def _file(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


def _init(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    res = CliRunner().invoke(cli, ["init", str(root)])
    assert res.exit_code == 0, res.output
    return root


def _ingest(root: Path, chat: Path, *more: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["ingest", str(root), "--model", "offline", *more, str(chat)])
    return res.exit_code, res.output


def _texts(root: Path) -> str:
    return "".join(p.read_text() for p in sorted(root.rglob("*.md")) if ".memdir" not in p.parts)


def _cited(root: Path) -> set[str]:
    return set(locators(_texts(root)))


def _operation(out: str) -> str:
    m = re.search(r"operation (\w+): undo it whole", out)
    assert m, out
    return m[1]


# -- 1. a reverted batch releases its turns -----------------------------------------------------


def test_a_reverted_ingest_stays_released_when_a_later_batch_reuses_its_locators(tmp_path: Path) -> None:
    """Ingest a, revert it, ingest b (which takes S1 again: the store cites nothing), then a:
    a's turns are not "already in the store" (b's lines cite S1T1-3, not a's)."""
    root = _init(tmp_path)
    a = _file(tmp_path, "a.json", _messages("Ana", ANA))
    b = _file(tmp_path, "b.json", _messages("Rui", RUI))
    code, out = _ingest(root, a)
    assert code == 0, out
    res = CliRunner().invoke(cli, ["revert", str(root), "--operation", _operation(out)])
    assert res.exit_code == 0, res.output
    assert "Lisbon" not in _texts(root)
    code, out = _ingest(root, b)
    assert code == 0, out
    assert _cited(root) >= {"S1T1", "S1T2", "S1T3"}  # b took the locators a had
    code, out = _ingest(root, a)
    assert code == 0, out
    assert "already in the store" not in out
    assert "Lisbon" in _texts(root) and "Pimenta" in _texts(root)
    assert "sessions numbered from S2" in out  # after b's session, not over it
    code, out = _ingest(root, a)  # and now a is held again, said in words
    assert code == 1 and "3 of 3 turn(s) already in the store" in out
    assert ingest_ledger.reused(open_store(root), _cited(root)) == {}  # no locator names two turns


def test_a_revert_releases_only_that_batch_and_it_stays_released(tmp_path: Path) -> None:
    """a (S1), b (S2); b reverted; c, a new conversation, takes S2 (the store cites only S1):
    b goes in again after c, and a, never reverted, is still held."""
    root = _init(tmp_path)
    a = _file(tmp_path, "a.json", _messages("Ana", ANA))
    b = _file(tmp_path, "b.json", _messages("Rui", RUI))
    c = _file(tmp_path, "c.json", _messages("Eva", [("I teach chemistry in Faro.", "2024-05-01")]))
    assert _ingest(root, a)[0] == 0
    code, out = _ingest(root, b)
    assert code == 0, out
    assert CliRunner().invoke(cli, ["revert", str(root), "--operation", _operation(out)]).exit_code == 0
    code, out = _ingest(root, c)
    assert code == 0 and "sessions numbered from S2" in out
    code, out = _ingest(root, b)
    assert code == 0 and "already" not in out and "sessions numbered from S3" in out, out
    assert "Braga" in _texts(root)
    code, out = _ingest(root, a)
    assert code == 1 and "3 of 3 turn(s) already in the store" in out


# -- 2. a failed run keeps what it landed; the rerun resumes ------------------------------------


def _book_turns(n: int) -> list[dict[str, str]]:
    return [
        {
            "role": "user",
            "name": "Ana",
            "content": f"Fact {i}: I own {i} books about birds.",
            "date": "2024-03-01",
        }
        for i in range(1, n + 1)
    ]


def _create(chunk: str, loc: str, value: str) -> dict[str, Any]:
    head = f"---\nname: chunk-{chunk}\ndescription: what Ana said in chunk {chunk}\n---\n"
    text = f"{head}- ana | books: {value} [{loc}]\n"
    return {
        "tool_calls": [
            {"name": "create", "arguments": {"path": f"/memories/chunk-{chunk}.md", "file_text": text}}
        ]
    }


def test_a_model_error_at_chunk_3_keeps_chunks_1_and_2_and_the_rerun_resumes(tmp_path: Path) -> None:
    """24 turns, three chunks of 8: the script answers two chunks, files one line of the third
    and runs out (a ModelError). The rerun of the same command files only chunk 3, in session 1
    where it stopped: no turn filed twice, no session that never happened."""
    root = _init(tmp_path)
    chat = _file(tmp_path, "long.json", _book_turns(24))
    first = _file(tmp_path, "s1.json", [_create("1", "S1T1", "1 books about birds"), "done",
                                        _create("2", "S1T9", "9 books about birds"), "done",
                                        _create("3", "S1T17", "17 books about birds")])  # fmt: skip
    res = CliRunner().invoke(
        cli, ["ingest", str(root), "--model", "scripted", "--script", str(first), str(chat)]
    )
    assert res.exit_code == 1 and "ran out of replies" in res.output
    assert "16 of 24 turn(s) landed" in res.output and "run the same command again" in res.output
    assert _cited(root) == {"S1T1", "S1T9", "S1T17"}  # chunk 3 left one line
    again = _file(tmp_path, "s2.json", [_create("3-rest", "S1T18", "18 books about birds"), "done"])
    res = CliRunner().invoke(
        cli, ["ingest", str(root), "--model", "scripted", "--script", str(again), str(chat)]
    )
    assert res.exit_code == 0, res.output
    assert "16 of 24 turn(s) already in the store" in res.output
    assert "integrated 8 turn(s) in 1 chunk(s)" in res.output
    assert "8 turn(s) continue S1" in res.output and "numbered from" not in res.output
    assert _cited(root) == {"S1T1", "S1T9", "S1T17", "S1T18"}
    code, out = _ingest(root, chat)  # all 24 held now
    assert code == 1 and "24 of 24 turn(s) already in the store" in out


def _file_the_chunk(messages: list[ChatMessage]) -> ScriptedReply:
    """A management reply that files every turn of the chunk it was shown, under its locator."""
    shown = re.findall(
        r"^\[(S\d+T\d+)\] \(\d{4}-\d\d-\d\d\) Ana: Fact (\d+): (.+)$", messages[-1].content, re.M
    )
    assert shown, messages[-1].content
    lines = "".join(f"- ana | books: {said} [{loc}]\n" for loc, _, said in shown)
    first = shown[0][1]
    text = f"---\nname: facts-{first}\ndescription: what Ana said from fact {first}\n---\n{lines}"
    return call("create", path=f"/memories/facts-{first}.md", file_text=text)


def test_memory_add_resumes_after_a_model_error_without_filing_a_turn_twice(tmp_path: Path) -> None:
    chat = _file(tmp_path, "long.json", _book_turns(24))
    boom = ModelError("the provider is down")
    failing = get_model(
        "scripted", script=[_file_the_chunk, answer("done"), _file_the_chunk, answer("done"), boom]
    )
    with Memory(tmp_path / "m") as memory:
        with pytest.raises(ModelError, match="the provider is down"):
            memory.add(chat, model=failing)
        rest = get_model("scripted", script=[_file_the_chunk, answer("done")])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            resumed = memory.add(chat, model=rest)
        assert resumed.turns == 8 and resumed.already == 16, resumed.summary
    cites = Counter(locators(_texts(tmp_path / "m")))
    assert set(cites) == {f"S1T{i}" for i in range(1, 25)}  # every turn once, all in session 1
    assert set(cites.values()) == {1}


# -- 3. a turn is its place in its conversation ------------------------------------------------


def test_a_turn_repeating_earlier_words_the_same_day_at_a_new_place_is_ingested(tmp_path: Path) -> None:
    """Ana moves to Porto and back the same day; the updated log repeats "I live in Lisbon."."""
    root = _init(tmp_path)
    said = [("I live in Lisbon.", "2024-03-01"), ("I moved to Porto.", "2024-03-01")]
    code, out = _ingest(root, _file(tmp_path, "v1.json", _messages("Ana", said)))
    assert code == 0, out
    updated = _file(tmp_path, "v2.json", _messages("Ana", [*said, ("I live in Lisbon.", "2024-03-01")]))
    code, out = _ingest(root, updated)
    assert code == 0, out
    assert "2 of 3 turn(s) already in the store" in out and "1 turn(s) continue S1" in out
    assert "S1T3" in _cited(root)
    code, out = _ingest(root, updated)  # the identical file: held, said in words, exit 1
    assert code == 1 and "3 of 3 turn(s) already in the store" in out and "nothing was added" in out


def _claude(messages: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    return [
        {
            "uuid": "conv-7f3a",
            "name": "Moving",
            "created_at": "2024-03-01T09:00:00Z",
            "chat_messages": [
                {"uuid": uid, "sender": sender, "text": text, "created_at": "2024-03-01T09:00:00Z"}
                for uid, sender, text in messages
            ],
        }
    ]


def test_an_export_message_is_known_by_its_ids_not_its_words(tmp_path: Path) -> None:
    root = _init(tmp_path)
    v1 = [("m1", "human", "I live in Lisbon."), ("m2", "assistant", "Lisbon, noted.")]
    code, out = _ingest(root, _file(tmp_path, "v1.json", _claude(v1)))
    assert code == 0, out
    v2 = [*v1, ("m3", "human", "I moved to Porto."), ("m4", "human", "I live in Lisbon.")]
    code, out = _ingest(root, _file(tmp_path, "v2.json", _claude(v2)))
    assert code == 0, out
    assert "2 of 4 turn(s) already in the store" in out
    assert {"S1T3", "S1T4"} <= _cited(root)
    # the same ids are the same messages, wherever they stand in the file
    moved = [v2[2], v2[3], v2[0], v2[1]]
    code, out = _ingest(root, _file(tmp_path, "v3.json", _claude(moved)))
    assert code == 1 and "4 of 4 turn(s) already in the store" in out


def test_a_chatgpt_export_gives_each_turn_its_conversation_and_message_ids(tmp_path: Path) -> None:
    def node(parent: str | None, children: list[str], role: str, text: str) -> dict[str, Any]:
        message = {"id": f"msg-{text[:4]}", "author": {"role": role}, "create_time": 1709287200.0,
                   "content": {"content_type": "text", "parts": [text]}}  # fmt: skip
        return {"message": message, "parent": parent, "children": children}

    export = [
        {
            "id": "conv-1",
            "create_time": 1709287200.0,
            "current_node": "n2",
            "mapping": {
                "root": {"message": None, "parent": None, "children": ["n1"]},
                "n1": node("root", ["n2"], "user", "Lisbon is home."),
                "n2": node("n1", [], "assistant", "Noted."),
            },
        }
    ]
    chat = read_chat(_file(tmp_path, "conversations.json", export))
    assert chat.ids == ("chatgpt:conv-1/msg-Lisb", "chatgpt:conv-1/msg-Note")
    root = _init(tmp_path)
    assert _ingest(root, tmp_path / "conversations.json")[0] == 0
    mapping = export[0]["mapping"]
    mapping["n2"]["children"] = ["n3"]
    mapping["n3"] = node("n2", [], "user", "Lisbon is home.")  # the same words, a new message
    mapping["n3"]["message"]["id"] = "msg-again"
    export[0]["current_node"] = "n3"
    code, out = _ingest(root, _file(tmp_path, "conversations.json", export))
    assert code == 0 and "2 of 3 turn(s) already in the store" in out and "S1T3" in _cited(root)


def test_ledger_lines_written_before_the_place_key_keep_their_old_meaning(tmp_path: Path) -> None:
    """A ledger line with no key (memdir before issue 45) still holds its turn by speaker, text
    and date in a batch the store cites, as it did; lines written now hold by place."""
    root = _init(tmp_path)
    (root / "ana.md").write_text("---\nname: ana\ndescription: Ana\n---\n- ana | home: Lisbon [S1T1]\n")
    old = {"locator": "S1T1", "digest": ingest_ledger.digest(Turn("S1T1", "Ana", *ANA[0])), "batch": "old0"}
    (root / ".memdir" / "ingested.jsonl").write_text(json.dumps(old) + "\n")
    code, out = _ingest(root, _file(tmp_path, "a.json", _messages("Ana", ANA)))
    assert code == 0, out
    assert "1 of 3 turn(s) already in the store" in out
    rows = [json.loads(line) for line in (root / ".memdir" / "ingested.jsonl").read_text().splitlines()]
    assert rows[0] == old and all("key" in r for r in rows[1:] if "locator" in r)


# -- 4. two ingests at once --------------------------------------------------------------------


def test_two_ingests_of_one_file_at_once_equal_one_ingest(tmp_path: Path) -> None:
    said = [(f"On day {i} I visited museum number {i} in Lisbon.", "2024-03-01") for i in range(1, 121)]
    chat = _file(tmp_path, "museums.json", _messages("Ana", said))
    alone = _init(tmp_path / "alone")
    code, out = _ingest(alone, chat)
    assert code == 0, out
    root = _init(tmp_path)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = [sys.executable, "-m", "memdir", "ingest", str(root), "--model", "offline", str(chat)]
    procs = [
        subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(2)
    ]
    said = [p.communicate(timeout=600)[0].decode() for p in procs]  # a deadline against a hang only
    outs = [(p.returncode, out) for p, out in zip(procs, said, strict=True)]
    codes = sorted(code for code, _ in outs)
    assert codes == [0, 1], outs
    held = next(out for code, out in outs if code == 1)
    assert "120 of 120 turn(s) already in the store" in held
    assert Counter(locators(_texts(root))) == Counter(locators(_texts(alone)))
    assert all(loc.startswith("S1T") for loc in _cited(root))
