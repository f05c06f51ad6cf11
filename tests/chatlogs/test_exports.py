"""ChatGPT and Claude.ai exports read as they are (issue 34, item 1): one session per
conversation, oldest first, dates from the timestamps, the user and the assistant kept apart,
and of a branching ChatGPT conversation only the branch the user last saw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.api.memory import Memory
from memdir.chatlogs import read_chat
from memdir.cli.main import cli
from memdir.conventions import locators

MAR_1 = 1709287200.0  # 2024-03-01T10:00:00Z
JUN_2 = 1717322400.0  # 2024-06-02T10:00:00Z


def _node(
    parent: str | None, children: list[str], role: str | None = None, text: str = "", **extra: Any
) -> Any:
    message = None
    if role is not None:
        message = {
            "author": {"role": role},
            "content": extra.pop("content", {"content_type": "text", "parts": [text]}),
            "create_time": extra.pop("at", MAR_1),
            "metadata": extra.pop("metadata", {}),
        }
    return {"message": message, "parent": parent, "children": children}


def chatgpt_export() -> list[dict[str, Any]]:
    """Two conversations, newest first as ChatGPT writes them. In the older one the first reply
    was regenerated: the abandoned reply is the root's first child, the kept one its second, and
    `current_node` ends the kept branch."""
    lisbon = {
        "title": "Moving",
        "create_time": MAR_1,
        "current_node": "u2",
        "mapping": {
            "root": _node(None, ["sys"]),
            "sys": _node("root", ["ctx"], "system", "You are ChatGPT."),
            "ctx": _node(
                "sys",
                ["u1"],
                "user",
                content={"content_type": "user_editable_context", "user_profile": "I like maps"},
            ),
            "u1": _node("ctx", ["a_old", "a_new"], "user", "I moved to Lisbon last week."),
            "a_old": _node("u1", [], "assistant", "Abandoned reply about Madrid."),
            "a_new": _node("u1", ["tool", "u2"], "assistant", "Lisbon is lovely in spring."),
            "tool": _node("a_new", [], "tool", "search results"),
            "u2": _node("a_new", [], "user", "My sister Ana lives in Porto.", at=MAR_1 + 60),
        },
    }
    vegan = {
        "title": "Food",
        "create_time": JUN_2,
        "current_node": "b2",
        "mapping": {
            "b0": _node(None, ["b1"]),
            "b1": _node("b0", ["b2"], "user", "I have been vegan since May.", at=JUN_2),
            "b2": _node("b1", [], "assistant", "Noted: vegan since May.", at=JUN_2 + 5),
        },
    }
    return [vegan, lisbon]


def claude_export() -> list[dict[str, Any]]:
    return [
        {
            "uuid": "c1",
            "name": "Guitar",
            "created_at": "2024-07-10T09:00:00.000000Z",
            "chat_messages": [
                {
                    "sender": "human",
                    "text": "I started learning the guitar.",
                    "created_at": "2024-07-10T09:00:00Z",
                },
                {"sender": "assistant", "text": "Great, which songs?", "created_at": "2024-07-10T09:00:04Z"},
            ],
        },
        {
            "uuid": "c2",
            "name": "Dog",
            "created_at": "2024-08-01T18:30:00.000000Z",
            "chat_messages": [
                {
                    "sender": "human",
                    "text": "",
                    "content": [{"type": "text", "text": "Our dog Rex turned five."}],
                    "created_at": "2024-08-01T18:30:00Z",
                },
                {"sender": "assistant", "text": "Happy birthday, Rex!", "created_at": "2024-08-01T18:30:03Z"},
            ],
        },
    ]


def _write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def test_a_chatgpt_export_follows_the_current_branch_one_session_per_conversation(tmp_path: Path) -> None:
    chat = read_chat(_write(tmp_path, "conversations.json", chatgpt_export()))
    assert chat.format == "chatgpt-export"
    got = [(t.locator, t.speaker, t.text, t.date) for t in chat.turns]
    assert got == [
        ("S1T1", "user", "I moved to Lisbon last week.", "2024-03-01"),
        ("S1T2", "assistant", "Lisbon is lovely in spring.", "2024-03-01"),
        ("S1T3", "user", "My sister Ana lives in Porto.", "2024-03-01"),
        ("S2T1", "user", "I have been vegan since May.", "2024-06-02"),
        ("S2T2", "assistant", "Noted: vegan since May.", "2024-06-02"),
    ]
    # the abandoned reply and the tool node are off the current branch: counted, not read
    assert chat.skipped == {"hidden": 1, "system": 1, "branch": 2}
    assert "Madrid" not in json.dumps([t.text for t in chat.turns])


def test_a_claude_export_reads_text_or_content_parts(tmp_path: Path) -> None:
    chat = read_chat(_write(tmp_path, "claude.json", claude_export()))
    assert chat.format == "claude-export"
    got = [(t.locator, t.speaker, t.text, t.date) for t in chat.turns]
    assert got == [
        ("S1T1", "user", "I started learning the guitar.", "2024-07-10"),
        ("S1T2", "assistant", "Great, which songs?", "2024-07-10"),
        ("S2T1", "user", "Our dog Rex turned five.", "2024-08-01"),
        ("S2T2", "assistant", "Happy birthday, Rex!", "2024-08-01"),
    ]


def test_memdir_ingest_reads_both_exports_into_one_store(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    for name, value, said in (
        ("conversations.json", chatgpt_export(), "read 5 turn(s) (chatgpt-export, 2 session(s))"),
        ("claude.json", claude_export(), "read 4 turn(s) (claude-export, 2 session(s))"),
    ):
        res = CliRunner().invoke(
            cli, ["ingest", str(root), "--model", "offline", str(_write(tmp_path, name, value))]
        )
        assert res.exit_code == 0, res.output
        assert said in res.output
    assert "sessions numbered from S3" in res.output  # the Claude export continues after ChatGPT's
    text = "".join(p.read_text() for p in root.rglob("*.md") if ".memdir" not in p.parts)
    cited = set(locators(text))
    assert {"S1T1", "S2T1"} & cited and {"S3T1", "S4T1"} & cited


def test_memory_add_reads_an_export_file(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "mem")
    result = memory.add(_write(tmp_path, "claude.json", claude_export()))
    assert result.source == "claude-export" and result.turns == 4


def _chain(n: int, ids: list[str] | None = None) -> dict[str, Any]:
    """One ChatGPT conversation whose `n` messages form a single chain (no branch), ids given or
    `m0`..., the user and the assistant taking turns, `current_node` its last message."""
    ids = ids or [f"m{i}" for i in range(n)]
    mapping = {
        ids[i]: _node(
            ids[i - 1] if i else None,
            [ids[i + 1]] if i + 1 < n else [],
            "user" if i % 2 == 0 else "assistant",
            f"message {i}",
            at=MAR_1 + i,
        )
        for i in range(n)
    }
    return {"id": "long", "title": "Long", "create_time": MAR_1, "current_node": ids[-1], "mapping": mapping}


@pytest.mark.slow
def test_a_100000_message_chain_is_read_whole_and_in_order(tmp_path: Path) -> None:
    """Issue 46 item 6: the branch walk's cycle guard scanned a list, so a 100,000-node chain took
    minutes. Its speed is measured in benchmarks/export_branch_walk.py and its order of growth is
    held by the next test; this one checks what a chain that long reads as."""
    n = 100_000
    chat = read_chat(_write(tmp_path, "conversations.json", [_chain(n)]))
    assert [t.text for t in chat.turns] == [f"message {i}" for i in range(n)]
    assert [t.locator for t in chat.turns[:2]] == ["S1T1", "S1T2"] and chat.turns[-1].locator == f"S1T{n}"
    assert chat.turns[0].speaker == "user" and chat.turns[1].speaker == "assistant"


class _CountedId(str):
    """A node id that counts how often it is compared for equality (a hash lookup of distinct ids
    compares none; a scan of a list compares one against each id before it)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountedId.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_the_branch_walk_compares_ids_a_bounded_number_of_times() -> None:
    """The walk is linear in the chain's length, whatever the machine's speed: walking 3,000
    nodes, up from `current_node` and down the first children, compares ids far fewer than
    3,000 times (the list's scan compared each id with every one before it: 4.5 million)."""
    from memdir.chatlogs.exports import CHATGPT, read_export

    n = 3_000
    ids = [_CountedId(f"m{i}") for i in range(n)]
    up = _chain(n, ids)
    down = {**_chain(n, ids), "id": "down", "current_node": None}
    _CountedId.compared = 0
    chat = read_export([up, down], CHATGPT, "export", None)
    assert _CountedId.compared < n, _CountedId.compared
    assert [t.text for t in chat.turns] == [f"message {i}" for i in range(n)] * 2


def test_a_cycle_in_a_chatgpt_tree_ends_the_walk(tmp_path: Path) -> None:
    """A damaged export whose parent links (or first children) loop is read once round the loop,
    in order, not walked forever."""
    up = {  # c's parent is b, b's a, a's c: from current_node c the walk meets c again
        "id": "up",
        "create_time": MAR_1,
        "current_node": "c",
        "mapping": {
            "a": _node("c", ["b"], "user", "first", at=MAR_1),
            "b": _node("a", ["c"], "assistant", "second", at=MAR_1 + 1),
            "c": _node("b", ["a"], "user", "third", at=MAR_1 + 2),
        },
    }
    down = {  # no current_node: from the root down first children, y's first child is x again
        "id": "down",
        "create_time": JUN_2,
        "mapping": {
            "r": _node(None, ["x"]),
            "x": _node("r", ["y"], "user", "fourth", at=JUN_2),
            "y": _node("x", ["x"], "assistant", "fifth", at=JUN_2 + 1),
        },
    }
    chat = read_chat(_write(tmp_path, "conversations.json", [down, up]))
    got = [(t.locator, t.text) for t in chat.turns]
    assert got == [
        ("S1T1", "first"),
        ("S1T2", "second"),
        ("S1T3", "third"),
        ("S2T1", "fourth"),
        ("S2T2", "fifth"),
    ]
