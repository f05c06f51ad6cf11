"""Exports read as the conversation the user saw (issue 47, item 3), on fixtures written to
match the real formats (the fields docs/ingest.md, "What an export's fields mean", names):
Claude.ai's `parent_message_uuid` branches resolved to the current leaf; attachments kept as
their turn's lines and counted; reasoning, thoughts and tool traffic never stored as speech;
ChatGPT's private-use citation markers stripped; paragraphs kept apart; a malformed
conversation skipped and named while the rest is read; and one day rule (UTC) for every format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memdir.chatlogs import read_chat
from memdir.cli.main import cli
from memdir.stream import MAX_TURN_BYTES, chunk_stream

ROOT = "00000000-0000-4000-8000-000000000000"  # the parent Claude.ai gives a conversation's first message
PLACEHOLDER = "\n```\nThis block is not supported on your current device yet.\n```\n"


def _write(tmp_path: Path, value: Any, name: str = "conversations.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")
    return path


def _said(chat: Any) -> list[tuple[str, str, str]]:
    return [(t.locator, t.speaker, t.text) for t in chat.turns]


# -- Claude.ai ----------------------------------------------------------------------------------


def _cm(
    uuid: str, parent: str | None, sender: str, at: str, blocks: list[Any], **extra: Any
) -> dict[str, Any]:
    """A Claude.ai chat message as its export holds one: `text` is the text blocks run together
    (with a placeholder where a tool ran), `content` the blocks themselves."""
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    if any(b.get("type") in ("tool_use", "tool_result") for b in blocks):
        text += PLACEHOLDER
    message = {
        "uuid": uuid,
        "text": extra.pop("text", text),
        "content": blocks,
        "sender": sender,
        "created_at": at,
        "updated_at": at,
        "attachments": extra.pop("attachments", []),
        "files": extra.pop("files", []),
    }
    if parent is not None:
        message["parent_message_uuid"] = parent
    return message


def _t(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def claude_retried() -> dict[str, Any]:
    """The user asked, got an answer, asked again, then retried the second answer: the export
    holds both answers (6 messages), the user saw 5 (the retry replaced the first answer)."""
    at = "2024-09-02T10:0{}:00.000000Z".format
    return {
        "uuid": "conv-retry",
        "name": "Bread",
        "created_at": at(0),
        "updated_at": at(5),
        "chat_messages": [
            _cm("m1", ROOT, "human", at(0), [_t("I bake sourdough every Sunday.")]),
            _cm("m2", "m1", "assistant", at(1), [_t("Lovely. Which flour?")]),
            _cm("m3", "m2", "human", at(2), [_t("Rye, from the mill in Tartu.")]),
            _cm("m4", "m3", "assistant", at(3), [_t("FIRST TRY: rye is hard to shape.")]),
            _cm("m4b", "m3", "assistant", at(4), [_t("Rye gives a dense, sour crumb.")]),
            _cm("m5", "m4b", "human", at(5), [_t("Yes, I like it dense.")]),
        ],
    }


def test_a_claude_retry_is_read_as_the_chain_ending_at_the_latest_leaf(tmp_path: Path) -> None:
    chat = read_chat(_write(tmp_path, [claude_retried()]))
    assert [t.text for t in chat.turns] == [
        "I bake sourdough every Sunday.",
        "Lovely. Which flour?",
        "Rye, from the mill in Tartu.",
        "Rye gives a dense, sour crumb.",
        "Yes, I like it dense.",
    ]
    assert chat.skipped.get("branch") == 1  # the abandoned first try, counted


def test_a_claude_current_leaf_field_wins_over_the_latest_message(tmp_path: Path) -> None:
    """Where the conversation names its leaf (`current_leaf_message_uuid`, as Claude.ai's own
    conversation API does), that leaf ends the chain, even when a later message exists."""
    conv = {**claude_retried(), "current_leaf_message_uuid": "m4"}
    chat = read_chat(_write(tmp_path, [conv]))
    assert [t.text for t in chat.turns][-1] == "FIRST TRY: rye is hard to shape."
    assert len(chat.turns) == 4 and chat.skipped.get("branch") == 2


def test_claude_thinking_and_tool_blocks_are_never_speech(tmp_path: Path) -> None:
    at = "2024-09-03T08:00:0{}Z".format
    conv = {
        "uuid": "conv-tools",
        "name": "Weather",
        "created_at": at(0),
        "chat_messages": [
            _cm("q", ROOT, "human", at(0), [_t("Will it rain in Riga tomorrow?")]),
            _cm(
                "a",
                "q",
                "assistant",
                at(1),
                [
                    {"type": "thinking", "thinking": "The user wants a forecast; search first."},
                    {"type": "tool_use", "name": "web_search", "input": {"query": "Riga forecast"}},
                    {"type": "tool_result", "name": "web_search", "content": [_t("Rain, 12 mm")]},
                    _t("Yes: about 12 mm of rain is expected."),
                    _t("Take an umbrella."),
                ],
            ),
        ],
    }
    chat = read_chat(_write(tmp_path, [conv]))
    assert _said(chat) == [
        ("S1T1", "user", "Will it rain in Riga tomorrow?"),
        ("S1T2", "assistant", "Yes: about 12 mm of rain is expected.\n\nTake an umbrella."),
    ]
    assert chat.skipped.get("reasoning") == 1 and chat.skipped.get("tool") == 2


def test_attachments_are_kept_as_their_turns_lines_and_counted(tmp_path: Path) -> None:
    at = "2024-09-04T12:00:0{}Z".format
    conv = {
        "uuid": "conv-files",
        "name": "CV",
        "created_at": at(0),
        "chat_messages": [
            _cm(
                "u",
                ROOT,
                "human",
                at(0),
                [_t("Can you shorten my CV?")],
                attachments=[
                    {
                        "file_name": "cv.txt",
                        "file_size": 52,
                        "file_type": "text/plain",
                        "extracted_content": "Maria Ivanova\nNurse at Tartu hospital since 2019",
                    }
                ],
                files=[{"file_name": "photo.jpg", "file_uuid": "f-1"}],
            ),
            _cm("a", "u", "assistant", at(1), [_t("Here is a shorter version.")]),
        ],
    }
    chat = read_chat(_write(tmp_path, [conv]))
    first = chat.turns[0].text
    assert first.startswith("Can you shorten my CV?\n\n")
    assert "[attached file cv.txt]\nMaria Ivanova\nNurse at Tartu hospital since 2019" in first
    assert "[attached file photo.jpg]" in first
    assert chat.attachments == 2
    assert "2 attachment(s) kept as lines of their turns" in chat.summary()


def test_an_attachment_past_a_turns_bound_is_cut_and_said_the_file_still_read(tmp_path: Path) -> None:
    """A 300 KiB document's text would take the turn past the 256 KiB a turn may hold, which
    refuses the whole file: it is cut where the turn would pass, and the cut is said."""
    at = "2024-09-04T13:00:0{}Z".format
    big = "A line of the annual report.\n" * 11_000  # about 320 KB
    conv = {
        "uuid": "conv-big",
        "name": "Report",
        "created_at": at(0),
        "chat_messages": [
            _cm(
                "u",
                ROOT,
                "human",
                at(0),
                [_t("Summarize this.")],
                attachments=[{"file_name": "report.txt", "extracted_content": big}],
            ),
            _cm("a", "u", "assistant", at(1), [_t("It says revenue grew.")]),
        ],
    }
    chat = read_chat(_write(tmp_path, [conv]))
    text = chat.turns[0].text
    assert len(text.encode("utf-8")) <= MAX_TURN_BYTES
    assert text.startswith("Summarize this.\n\n[attached file report.txt]\nA line of the annual report.")
    assert "more characters of report.txt, past a turn's bound]" in text
    assert len(chat.turns) == 2 and chat.attachments == 1


def test_a_claude_message_of_tool_blocks_only_is_counted_once(tmp_path: Path) -> None:
    at = "2024-09-08T10:00:0{}Z".format
    conv = {
        "uuid": "conv-only-tools",
        "name": "Search",
        "created_at": at(0),
        "chat_messages": [
            _cm("q", ROOT, "human", at(0), [_t("Find the ferry times.")]),
            _cm("c", "q", "assistant", at(1), [{"type": "tool_use", "name": "web_search", "input": {}}]),
            _cm("r", "c", "assistant", at(2), [_t("The ferry leaves at 9.")]),
        ],
    }
    chat = read_chat(_write(tmp_path, [conv]))
    assert [t.text for t in chat.turns] == ["Find the ferry times.", "The ferry leaves at 9."]
    assert chat.skipped == {"tool": 1}


def test_claude_parents_that_loop_skip_that_conversation_named(tmp_path: Path) -> None:
    at = "2024-09-09T10:00:0{}Z".format
    loop = {
        "uuid": "conv-loop",
        "name": "Loop",
        "created_at": at(0),
        "chat_messages": [
            _cm("x", "y", "human", at(0), [_t("one")]),
            _cm("y", "x", "assistant", at(1), [_t("two")]),
        ],
    }
    chat = read_chat(_write(tmp_path, [loop, claude_retried()]))
    assert len(chat.turns) == 5
    assert "skipped conversation 1 ('Loop', conv-loop): its messages' parent_message_uuid links loop" in (
        chat.summary()
    )


# -- ChatGPT ------------------------------------------------------------------------------------

T0 = 1725000000.0  # 2024-08-30T06:40:00Z


def _node(parent: str | None, child: str | None, role: str | None = None, **message: Any) -> dict[str, Any]:
    body = None
    if role is not None:
        body = {
            "id": message.pop("id", None),
            "author": {"role": role, "name": message.pop("name", None)},
            "create_time": message.pop("at", T0),
            "content": message.pop("content"),
            "recipient": message.pop("recipient", "all"),
            "metadata": message.pop("metadata", {}),
            "status": "finished_successfully",
        }
    return {"message": body, "parent": parent, "children": [child] if child else []}


def chatgpt_reasoning() -> dict[str, Any]:
    """A reasoning model's answer as the export holds it: thoughts, a search call to
    `browser.search` with its query, the tool's results, the recap ("Thought for 12s"), then the
    answer with a citation marker. The user saw two turns: the question and the answer."""
    chain = [
        ("root", None, {}),
        ("q", "user", {"content": {"content_type": "text", "parts": ["Best time to visit Lisbon?"]}}),
        (
            "th",
            "assistant",
            {
                "content": {
                    "content_type": "thoughts",
                    "thoughts": [{"summary": "Checking seasons", "content": "Spring and autumn are mild."}],
                    "source_analysis_msg_id": "x",
                }
            },
        ),
        (
            "call",
            "assistant",
            {
                "content": {
                    "content_type": "code",
                    "language": "unknown",
                    "text": '{"query": "Lisbon weather by month"}',
                },
                "recipient": "browser.search",
            },
        ),
        (
            "res",
            "tool",
            {
                "name": "browser",
                "content": {"content_type": "tether_browsing_display", "result": "Lisbon: mild"},
            },
        ),
        (
            "quote",
            "tool",
            {"name": "browser", "content": {"content_type": "tether_quote", "text": "May is warm"}},
        ),
        (
            "recap",
            "assistant",
            {"content": {"content_type": "reasoning_recap", "content": "Thought for 12s"}},
        ),
        (
            "ans",
            "assistant",
            {
                "content": {
                    "content_type": "text",
                    "parts": [
                        "April to June is best.\ue200cite\ue202turn0search1\ue201 Crowds peak in August."
                    ],
                }
            },
        ),
    ]
    mapping = {}
    for i, (nid, role, message) in enumerate(chain):
        parent = chain[i - 1][0] if i else None
        child = chain[i + 1][0] if i + 1 < len(chain) else None
        mapping[nid] = _node(parent, child, role, at=T0 + i, **message)
    return {"id": "conv-o", "title": "Lisbon", "create_time": T0, "current_node": "ans", "mapping": mapping}


def test_a_reasoning_models_thoughts_and_tool_calls_are_not_speech(tmp_path: Path) -> None:
    chat = read_chat(_write(tmp_path, [chatgpt_reasoning()]))
    assert _said(chat) == [
        ("S1T1", "user", "Best time to visit Lisbon?"),
        ("S1T2", "assistant", "April to June is best. Crowds peak in August."),
    ]
    assert chat.skipped.get("reasoning") == 2  # the thoughts and the recap
    assert chat.skipped.get("tool") == 3  # the search call, its results, the quote


def test_private_use_markers_are_stripped_whole_and_cited_spans_kept(tmp_path: Path) -> None:
    conv = chatgpt_reasoning()
    conv["mapping"]["ans"]["message"]["content"]["parts"] = [
        "See the file\ue200filecite\ue202turn0file0\ue201. "
        "\ue203Trams run until 23:00\ue204\ue202turn0search3."
    ]
    chat = read_chat(_write(tmp_path, [conv]))
    text = chat.turns[-1].text
    assert text == "See the file. Trams run until 23:00."
    assert not any("\ue000" <= c <= "\uf8ff" for c in text)


def test_a_long_answers_paragraphs_stay_apart_one_locator_per_turn(tmp_path: Path) -> None:
    """A Claude.ai answer whose text blocks a tool call splits: its `text` runs the blocks
    together ("castle.- lunch"); its blocks, a paragraph apart, are what the user saw. The chunk
    a model reads shows the answer's lines under one locator; a ChatGPT answer's lines too."""
    blocks = ["## Day 1\n\nVisit the castle.", "- lunch at noon\n- the tile museum", "## Day 2\n\nThe beach."]
    answer = "\n\n".join(blocks)
    at = "2024-09-07T09:00:0{}Z".format
    tool = {"type": "tool_use", "name": "web_search", "input": {"query": "Lisbon tiles"}}
    conv = {
        "uuid": "conv-plan",
        "name": "Plan",
        "created_at": at(0),
        "chat_messages": [
            _cm("p", ROOT, "human", at(0), [_t("Plan two days in Lisbon.")]),
            _cm("r", "p", "assistant", at(1), [_t(blocks[0]), tool, _t(blocks[1]), _t(blocks[2])]),
        ],
    }
    claude = read_chat(_write(tmp_path, [conv]))
    gpt = chatgpt_reasoning()
    gpt["mapping"]["ans"]["message"]["content"] = {"content_type": "text", "parts": [answer]}
    for chat, day in ((claude, "2024-09-07"), (read_chat(_write(tmp_path, [gpt], "gpt.json")), "2024-08-30")):
        assert chat.turns[-1].text == answer
        rendered = chunk_stream(chat.turns)[0].render().split("\n")
        assert rendered[1] == f"[S1T2] ({day}) assistant: ## Day 1"
        assert rendered[2:] == answer.split("\n")[1:]  # the answer's own lines, none with a locator
        assert sum(line.startswith("[S1T") for line in rendered) == 2


# -- both ---------------------------------------------------------------------------------------


def test_a_malformed_conversation_is_skipped_and_named_the_rest_read(tmp_path: Path) -> None:
    good = claude_retried()
    no_messages = {"uuid": "conv-empty", "name": "Broken", "created_at": "2024-09-01T00:00:00Z"}
    bad_time = {
        "uuid": "conv-time",
        "name": "Clock",
        "created_at": "2024-09-05T00:00:00Z",
        "chat_messages": [_cm("z", ROOT, "human", "yesterday-ish", [_t("When was this?")])],
    }
    chat = read_chat(_write(tmp_path, [no_messages, good, bad_time]))
    assert len(chat.turns) == 5 and chat.turns[0].text == "I bake sourdough every Sunday."
    said = chat.summary()
    assert "conversation 1 ('Broken', conv-empty)" in said and "chat_messages" in said
    assert "conversation 3 ('Clock', conv-time)" in said and "yesterday-ish" in said
    assert chat.skipped.get("malformed conversation") == 2

    gpt_bad = {"id": "conv-x", "title": "No tree", "create_time": T0}  # no mapping
    chat = read_chat(_write(tmp_path, [gpt_bad, chatgpt_reasoning()], "gpt.json"))
    assert chat.format == "chatgpt-export" and len(chat.turns) == 2
    assert "conversation 1 ('No tree', conv-x)" in chat.summary()


def test_one_turn_past_a_turns_bound_skips_its_conversation_only(tmp_path: Path) -> None:
    """A pasted log over the stream's bound on a turn is one bad conversation, not a bad file."""
    from memdir.stream import MAX_TURN_BYTES

    huge = {
        "uuid": "conv-huge",
        "name": "Pasted log",
        "created_at": "2024-09-02T00:00:00Z",
        "chat_messages": [_cm("h", ROOT, "human", "2024-09-02T00:00:00Z", [_t("x" * (MAX_TURN_BYTES + 1))])],
    }
    chat = read_chat(_write(tmp_path, [huge, claude_retried()]))
    assert len(chat.turns) == 5 and chat.turns[0].text == "I bake sourdough every Sunday."
    said = chat.summary()
    assert "conversation 1 ('Pasted log', conv-huge)" in said and "more than a turn holds" in said
    assert chat.skipped.get("malformed conversation") == 1


def test_every_format_dates_a_turn_by_its_utc_day(tmp_path: Path) -> None:
    """Late evening in California is the next day in UTC: a Claude.ai time with its offset and a
    ChatGPT epoch for the same instant give the same day, the UTC one."""
    instant = "2024-09-06T23:30:00-07:00"  # 2024-09-07T06:30:00Z
    claude = {
        "uuid": "conv-late",
        "name": "Late",
        "created_at": instant,
        "chat_messages": [_cm("l", ROOT, "human", instant, [_t("Still awake.")])],
    }
    assert read_chat(_write(tmp_path, [claude])).turns[0].date == "2024-09-07"
    conv = chatgpt_reasoning()
    for node in conv["mapping"].values():
        if node["message"]:
            node["message"]["create_time"] = 1725690600.0  # the same instant
    assert read_chat(_write(tmp_path, [conv], "gpt.json")).turns[0].date == "2024-09-07"
    records = [{"role": "user", "content": "Still awake.", "created_at": instant}]
    assert read_chat(_write(tmp_path, records, "messages.json")).turns[0].date == "2024-09-07"


def test_memdir_ingest_says_what_it_kept_and_skipped(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    res = CliRunner().invoke(
        cli, ["ingest", str(root), "--model", "offline", str(_write(tmp_path, [chatgpt_reasoning()]))]
    )
    assert res.exit_code == 0, res.output
    assert "read 2 turn(s) (chatgpt-export, 1 session(s))" in res.output
    assert "2 reasoning part(s)" in res.output and "3 tool message(s)" in res.output
