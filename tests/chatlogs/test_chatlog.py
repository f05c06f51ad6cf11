"""Ingesting what users have (`memdir.chatlogs`): OpenAI messages, speaker/text records,
LoCoMo and REALTALK files, read from real files and through `memdir ingest`, with locators
derived as S<session>T<turn>, sessions from a field or a gap in time, and errors that name the
line and the shapes read."""

from __future__ import annotations

import json
import os
import tracemalloc
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.chatlogs import (
    LeftOutWarning,
    chat_from_records,
    load_any,
    parse_gap,
    read_chat,
    turns_from_records,
)
from memdir.cli.main import cli
from memdir.conventions import turn_numbers
from memdir.stream import MAX_TURN_BYTES, RepairedTurnWarning, Turn, dump_turns, load_turns
from memdir_study.bench import locomo, realtalk

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("MEMDIR_DATA") or REPO.parent / "shared" / "data")
LOCOMO = DATA / "locomo" / "locomo10.json"
REALTALK = DATA / "realtalk" / "Chat_10_Fahim_Muhhamed.json"
needs_locomo = pytest.mark.skipif(
    not LOCOMO.is_file(), reason=f"LoCoMo not found at {LOCOMO}; set MEMDIR_DATA to the shared data folder"
)
needs_realtalk = pytest.mark.skipif(
    not REALTALK.is_file(),
    reason=f"REALTALK not found at {REALTALK}; set MEMDIR_DATA to the shared data folder",
)

CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I went vegan last month.", "timestamp": "2024-01-05T10:00:00Z"},
    {"role": "assistant", "content": [{"type": "text", "text": "Noted: vegan."}], "timestamp": 1704449100},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function"}]},
    {"role": "tool", "content": "42", "tool_call_id": "1"},
    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
    {"role": "user", "name": "Alice", "content": "I moved to Seattle.", "timestamp": "2024-01-07 09:30"},
]
TURNS = [
    Turn("S1T1", "user", "I went vegan last month.", "2024-01-05"),
    Turn("S1T2", "assistant", "Noted: vegan.", "2024-01-05"),
    Turn("S1T3", "Alice", "I moved to Seattle.", "2024-01-07"),
]
SKIPPED = {"system": 1, "tool": 2, "no text": 1}


def write(path: Path, value: Any, *, jsonl: bool = False) -> Path:
    text = "".join(json.dumps(v) + "\n" for v in value) if jsonl else json.dumps(value, indent=2)
    path.write_text(text, encoding="utf-8")
    return path


def ingest(*args: str, init: bool = True) -> Any:
    if init:  # ingest writes into a memory, never makes one
        CliRunner().invoke(cli, ["init", args[args.index("--root") + 1]])
    return CliRunner().invoke(cli, ["ingest", "--model", "offline", *args])


def stored(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md")))


# -- OpenAI messages ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["list", "jsonl", "object"])
def test_openai_messages_in_each_encoding_give_the_same_turns(tmp_path: Path, shape: str) -> None:
    f = tmp_path / f"chat.{'jsonl' if shape == 'jsonl' else 'json'}"
    write(f, {"messages": CHAT} if shape == "object" else CHAT, jsonl=shape == "jsonl")
    chat = read_chat(f)
    assert chat.turns == TURNS and chat.format == "openai-messages" and chat.skipped == SKIPPED
    assert chat.summary() == (
        "read 3 turn(s) (openai-messages, 1 session(s)); skipped 1 system message(s) (instructions, "
        "not conversation), 2 tool message(s) (tool traffic, not conversation), 1 message(s) with no text"
    )


def test_ingest_reads_a_plain_chat_log_and_says_what_it_read(tmp_path: Path) -> None:
    """The issue's case: a chat log without locators was refused ("missing ['locator']")."""
    f = write(tmp_path / "chat.json", CHAT)
    root = tmp_path / "mem"
    res = ingest("--root", str(root), str(f))
    assert res.exit_code == 0, res.output
    assert "read 3 turn(s) (openai-messages, 1 session(s)); skipped 1 system message(s)" in res.output
    assert f"from {f}" in res.output and "integrated 3 turn(s) in 1 chunk(s)" in res.output
    text = stored(root)
    assert "Seattle" in text and "[S1T3]" in text  # the derived locator, cited by the fact


def test_ingest_splits_sessions_by_a_gap_in_time(tmp_path: Path) -> None:
    times = ["2024-01-05T10:00:00+01:00", "2024-01-05T09:30:00Z", "2024-01-05T12:00:00Z", "2024-01-06"]
    records = [{"role": "user", "content": f"message {i}", "time": t} for i, t in enumerate(times)]
    f = write(tmp_path / "chat.jsonl", records, jsonl=True)
    # 10:00+01:00 is 09:00Z: 30 minutes to the next, then 2.5 h, then 12 h
    assert [t.locator for t in load_any(f, session_gap=parse_gap("2h"))] == ["S1T1", "S1T2", "S2T1", "S3T1"]
    assert [t.locator for t in load_any(f, session_gap=parse_gap("1d"))] == ["S1T1", "S1T2", "S1T3", "S1T4"]
    assert [t.date for t in load_any(f)] == ["2024-01-05", "2024-01-05", "2024-01-05", "2024-01-06"]
    res = ingest("--root", str(tmp_path / "mem"), "--session-gap", "30m", str(f))
    assert res.exit_code == 0, res.output
    assert "read 4 turn(s) (openai-messages, 3 session(s))" in res.output
    res = ingest("--root", str(tmp_path / "mem"), "--session-gap", "5 fortnights", str(f))
    assert res.exit_code == 2 and "'5 fortnights' is not a duration" in res.output
    assert "90s, 30m, 2h, 1d" in res.output


def test_parse_gap() -> None:
    assert [parse_gap(g) for g in ("90s", "30m", "2h", "1d", "1.5h")] == [
        timedelta(seconds=90), timedelta(minutes=30), timedelta(hours=2), timedelta(days=1),
        timedelta(minutes=90),
    ]  # fmt: skip
    for bad in ("", "0m", "-1h", "2", "h", "1w"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_gap(bad)


def test_a_lone_surrogate_in_a_message_is_repaired_and_named(tmp_path: Path) -> None:
    f = tmp_path / "chat.jsonl"
    f.write_text(json.dumps({"role": "user", "content": "vegan \ud800 now"}) + "\n")
    with pytest.warns(RepairedTurnWarning, match=r"chat\.jsonl:1: text held 1 lone surrogate"):
        assert load_any(f)[0].text == "vegan \ufffd now"


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    f = tmp_path / "chat.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(CHAT[1]).encode() + b"\n")
    assert read_chat(f).turns == TURNS[:1]


# -- speaker/text records and sessions ---------------------------------------------------------


def test_speaker_text_records_with_sessions_as_numbers_and_names(tmp_path: Path) -> None:
    numbered = [
        {"speaker": "Ann", "text": "a", "session": 2, "date": "2024-03-01"},
        {"speaker": "Bob", "text": "b", "session": "2"},
        {"speaker": "Ann", "text": "c", "session": "session_5"},
    ]
    chat = read_chat(write(tmp_path / "n.jsonl", numbered, jsonl=True))
    assert chat.format == "speaker-text"
    assert chat.turns == [
        Turn("S2T1", "Ann", "a", "2024-03-01"), Turn("S2T2", "Bob", "b"), Turn("S5T1", "Ann", "c")
    ]  # fmt: skip
    named = [{"speaker": "A", "text": str(i), "session": s} for i, s in enumerate(["mon", "tue", "mon", "3"])]
    turns = load_any(write(tmp_path / "s.json", named))
    assert [t.locator for t in turns] == ["S1T1", "S2T1", "S1T2", "S3T1"]  # first appearance, 1..n
    assert all(turn_numbers(t.locator) for t in turns)
    plain = [{"speaker": "A", "text": "x"}, {"speaker": "B", "text": "y"}]
    assert [t.locator for t in load_any(write(tmp_path / "p.json", plain))] == ["S1T1", "S1T2"]
    with pytest.warns(LeftOutWarning, match="session gap not used: the messages name their sessions"):
        load_any(tmp_path / "n.jsonl", session_gap=timedelta(hours=1))


def test_records_in_memory_convert_as_files_do(tmp_path: Path) -> None:
    with pytest.warns(LeftOutWarning, match=r"^messages: skipped 1 system message\(s\)"):
        assert turns_from_records(CHAT) == TURNS
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left out: nothing said
        assert turns_from_records(CHAT[1:3]) == TURNS[:2]
    given = [json.loads(line) for line in dump_turns(TURNS)]
    assert chat_from_records(given).format == "memdir-turns" and turns_from_records(given) == TURNS
    with pytest.raises(ValueError, match=r"^history item 2: a record needs a speaker"):
        turns_from_records([CHAT[1], {"body": "x"}], where="history")
    with pytest.raises(ValueError, match="records are a list of objects, not str"):
        turns_from_records("hello")  # type: ignore[arg-type]


def test_memdir_turns_read_as_before(tmp_path: Path) -> None:
    f = tmp_path / "turns.jsonl"
    f.write_text("".join(line + "\n" for line in dump_turns(TURNS)))
    chat = read_chat(f)
    assert chat.format == "memdir-turns" and chat.turns == load_turns(f) == TURNS
    assert read_chat(write(tmp_path / "empty.json", [])).summary() == "read 0 turn(s) (empty, 0 session(s))"


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "said"),
    [
        (
            [{"speaker": "A", "text": "x"}, {"locator": "S1T2", "speaker": "B", "text": "y"}],
            "bad.jsonl:2: this record has a locator and bad.jsonl:1 has none; give every record a "
            "locator, or none",
        ),
        (
            [{"locator": "S1T1", "speaker": "A", "text": "x"}, {"speaker": "B", "text": "y"}],
            "bad.jsonl:2: this record has no locator and bad.jsonl:1 has one",
        ),
        (
            [{"speaker": "A", "text": "x"}, {"author": "B", "body": "y"}],
            "bad.jsonl:2: a record needs a speaker (speaker/text) or a role (OpenAI messages); found keys "
            "[author, body]; expected one of: memdir turns {locator, speaker, text, date}; OpenAI messages",
        ),
        ([{"speaker": "A"}], "bad.jsonl:1: a speaker/text record needs a text; found keys [speaker]"),
        ([{"speaker": 7, "text": "x"}], "bad.jsonl:1: speaker is a non-empty string, not int 7"),
        ([{"role": "user", "content": 5}], "bad.jsonl:1: content is a string or a list of parts"),
        (
            [{"role": "user", "content": "x", "date": "last Tuesday"}],
            "bad.jsonl:1: date str 'last Tuesday' is",
        ),
        ([{"role": "user", "content": "x", "timestamp": 1704449100000}], "divide by 1000"),
        (
            [{"speaker": "A", "text": "x", "session": 1}, {"speaker": "B", "text": "y"}],
            "bad.jsonl:2: this message has no session and bad.jsonl:1 has one",
        ),
        ([{"speaker": "A", "text": "x", "session": [1]}], "bad.jsonl:1: session is a number or a name"),
    ],
    ids=[
        "locator-later",
        "locator-missing",
        "no-shape",
        "no-text",
        "speaker-type",
        "content-type",
        "bad-date",
        "epoch-ms",
        "session-missing",
        "session-type",
    ],
)
def test_bad_records_are_refused_naming_the_line(tmp_path: Path, records: list[Any], said: str) -> None:
    f = write(tmp_path / "bad.jsonl", records, jsonl=True)
    with pytest.raises(ValueError) as caught:
        read_chat(f)
    assert said in str(caught.value).replace(str(tmp_path) + "/", "")


def test_a_session_gap_needs_every_time(tmp_path: Path) -> None:
    f = write(tmp_path / "chat.jsonl", [CHAT[1], {"role": "user", "content": "when?"}], jsonl=True)
    with pytest.raises(ValueError, match=r"chat\.jsonl:2: a session gap needs the time of every message"):
        read_chat(f, session_gap=timedelta(hours=1))
    assert [t.locator for t in load_any(f)] == ["S1T1", "S1T2"]  # without a gap, times are optional


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        (
            "odd.json",
            {"title": "notes", "body": []},
            "odd.json: a JSON object with keys [body, title] is none",
        ),
        ("num.json", 5, "num.json:1: a turn is a JSON object, not int"),  # not [ or {: JSONL
        ("msgs.json", {"messages": "hi"}, "msgs.json: messages is a list of message objects, not str"),
        ("list.json", [1, 2], "list.json item 1: a turn is a JSON object, not int"),
    ],
)
def test_bad_documents_are_refused_naming_the_shapes(tmp_path: Path, name: str, data: Any, said: str) -> None:
    f = write(tmp_path / name, data)
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "mem")]).exit_code == 0
    before = stored(tmp_path / "mem")
    res = ingest("--root", str(tmp_path / "mem"), str(f), init=False)
    assert res.exit_code == 1 and said in res.output, res.output
    assert "REALTALK" in res.output and "Traceback" not in res.output
    assert stored(tmp_path / "mem") == before  # refused before the store was written


def test_one_conversation_per_line_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path / "train.jsonl", [{"messages": CHAT[1:3]}, {"messages": CHAT[6:]}], jsonl=True)
    with pytest.raises(ValueError, match=r"train\.jsonl: line 1 holds a whole conversation and more"):
        read_chat(f)
    f.write_text(json.dumps({"messages": CHAT}) + "\n\n")  # one line and blank ones: one conversation
    assert read_chat(f).turns == TURNS


def test_a_long_message_is_refused_at_the_turn_bound(tmp_path: Path) -> None:
    long = {"role": "user", "content": "x" * (MAX_TURN_BYTES + 1)}
    with pytest.raises(ValueError, match=r"chat\.json item 2: a turn may be at most 256 KiB"):
        read_chat(write(tmp_path / "chat.json", [CHAT[1], long]))
    with pytest.raises(ValueError, match=r"chat\.json messages item 1: a turn may be at most"):
        read_chat(write(tmp_path / "chat.json", {"messages": [long]}))


def test_a_huge_first_message_line_is_refused_without_reading_it(tmp_path: Path) -> None:
    f = tmp_path / "chat.jsonl"
    with open(f, "w") as fh:
        fh.write('{"role": "user", "content": "')
        for _ in range(40):
            fh.write("y" * 2**20)  # 40 MB of one message
        fh.write('"}\n')
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"chat\.jsonl:1: a turn may be at most"):
            read_chat(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_TURN_BYTES  # the bound, read once; never the 40 MB line


def test_a_minified_conversation_longer_than_a_line_is_one_document(tmp_path: Path) -> None:
    many = [{"role": "user", "content": f"message {i} " + "z" * 1000} for i in range(400)]  # ~400 KB
    f = tmp_path / "chat.json"
    f.write_text(json.dumps({"messages": many}))  # one line, past the line bound
    assert len(f.read_bytes()) > MAX_TURN_BYTES
    assert len(read_chat(f).turns) == 400


# -- LoCoMo and REALTALK -----------------------------------------------------------------------


@needs_locomo
def test_a_locomo_file_at_a_users_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"a LoCoMo file of 10 conversations \(conv-26, .*conv-50\)"):
        read_chat(LOCOMO)
    want = locomo.from_raw(json.loads(LOCOMO.read_text())[-1]).turns
    chat = read_chat(LOCOMO, sample="conv-50")
    assert chat.format == "locomo" and chat.turns == want and chat.sessions == 30
    with pytest.raises(ValueError, match=r"no LoCoMo conversation 'conv-1'; this file holds conv-26"):
        read_chat(LOCOMO, sample="conv-1")
    one = tmp_path / "mine.json"  # one sample, and its conversation alone, outside the data folder
    sample = json.loads(LOCOMO.read_text())[-1]
    one.write_text(json.dumps(sample))
    assert read_chat(one).turns == want
    one.write_text(json.dumps(sample["conversation"]))
    assert read_chat(one).turns == want


@needs_locomo
def test_ingest_a_locomo_conversation_by_sample(tmp_path: Path) -> None:
    sample = json.loads(LOCOMO.read_text())[-1]
    conv = {k: v for k, v in sample["conversation"].items() if k in ("speaker_a", "speaker_b")}
    conv |= {k: v for k, v in sample["conversation"].items() if k.startswith("session_1")}  # 1, 10..19
    f = tmp_path / "locomo-part.json"
    f.write_text(json.dumps([{"sample_id": "conv-50", "conversation": conv}]))
    res = ingest("--root", str(tmp_path / "mem"), "--sample", "conv-50", str(f))
    assert res.exit_code == 0, res.output
    assert "turn(s) (locomo, 11 session(s))" in res.output
    res = ingest(
        "--root", str(tmp_path / "mem"), "--sample", "conv-50", str(write(tmp_path / "c.json", CHAT))
    )
    assert res.exit_code == 1 and "names one conversation of a LoCoMo file" in res.output


@needs_realtalk
def test_a_realtalk_file_at_a_users_path(tmp_path: Path) -> None:
    mine = tmp_path / "our-chat.json"
    mine.write_bytes(REALTALK.read_bytes())
    want = realtalk.from_raw(REALTALK.stem, json.loads(REALTALK.read_text())).turns
    for path in (REALTALK, mine):
        chat = read_chat(path)
        assert chat.format == "realtalk" and chat.turns == want
        assert (len(chat.turns), chat.sessions) == (662, 20)  # the counts in bench/realtalk.py
    mine.write_text(json.dumps(json.loads(REALTALK.read_text())))  # minified: one line of 280 KB
    assert read_chat(mine).turns == want


def test_a_broken_realtalk_file_names_what_is_missing(tmp_path: Path) -> None:
    f = write(tmp_path / "chat.json", {"name": {"speaker_1": "A"}, "session_1": [{"speaker": "A"}]})
    with pytest.raises(ValueError, match=r"chat\.json: a REALTALK chat .*a field is missing \('dia_id'\)"):
        read_chat(f)
