"""Tool calls written as text (the way small local models reply: Qwen2.5-Coder-1.5B behind
llama.cpp, Ollama, vLLM without a tool parser) recovered by `parse_text_calls`, and the canonical
`render_text_call` form read back. The payloads are shaped on what such models actually write."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.waits import HANG_GUARD_S

from memdir.models import textcalls
from memdir.models.base import ToolCall
from memdir.models.textcalls import TextCalls, parse_text_calls, render_text_call

TOOLS = ["view", "create", "str_replace", "insert", "delete", "rename", "grep", "bm25_full_search"]


def parse(text: str) -> TextCalls:
    return parse_text_calls(text, TOOLS)


def only(text: str) -> ToolCall:
    found = parse(text)
    assert len(found.calls) == 1, found
    return found.calls[0]


# --- the forms small models write ---------------------------------------------------------


def test_json_fence_qwen_coder() -> None:
    found = parse('```json\n{"name": "view", "arguments": {"path": "/memories"}}\n```')
    assert found.calls == [ToolCall("call_0", "view", {"path": "/memories"})]
    assert found.text == ""


def test_tool_call_tag_with_multiline_file_text() -> None:
    reply = (
        "<tool_call>\n"
        '{"name": "create", "arguments": {"path": "/memories/people/alice.md", '
        '"file_text": "---\\nname: alice\\ndescription: Alice, the user\'s sister\\n---\\n'
        '# Alice\\n\\n- Lives in Lyon (conv 3, session 2)\\n"}}\n'
        "</tool_call>"
    )
    call = only(reply)
    assert call.name == "create"
    assert call.arguments["path"] == "/memories/people/alice.md"
    assert call.arguments["file_text"].startswith("---\nname: alice\n")
    assert call.parse_error is None
    assert parse(reply).text == ""


def test_raw_newlines_inside_a_string() -> None:
    # The model wrote the file's newlines raw instead of as \n: not JSON, still clearly meant.
    reply = (
        '<tool_call>\n{"name": "create", "arguments": {"path": "/memories/people/bob.md", '
        '"file_text": "---\nname: bob\n---\n# Bob\n\n- Plays the cello\n"}}\n</tool_call>'
    )
    call = only(reply)
    assert call.arguments["file_text"] == "---\nname: bob\n---\n# Bob\n\n- Plays the cello\n"
    assert call.parse_error is None


def test_raw_newlines_and_a_code_fence_inside_a_bare_call() -> None:
    # The file text holds a fence of its own; it must not be taken for the end of anything.
    body = "# Notes\n\n```python\nprint('hi')\n```\nend"
    reply = '{"name": "create", "arguments": {"path": "/memories/notes.md", "file_text": "' + body + '"}}'
    call = only(reply)
    assert call.arguments == {"path": "/memories/notes.md", "file_text": body}


def test_two_calls_in_one_reply_in_order() -> None:
    reply = (
        "I will look at the folder, then search for Alice.\n"
        '<tool_call>\n{"name": "view", "arguments": {"path": "/memories"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "grep", "arguments": {"pattern": "Alice", "path": "/memories"}}\n</tool_call>'
    )
    found = parse(reply)
    assert [(c.id, c.name) for c in found.calls] == [("call_0", "view"), ("call_1", "grep")]
    assert found.calls[1].arguments == {"pattern": "Alice", "path": "/memories"}
    assert found.text == "I will look at the folder, then search for Alice."


def test_two_fenced_calls_and_a_bare_one_in_order() -> None:
    reply = (
        '```json\n{"name": "view", "arguments": {"path": "/memories"}}\n```\n'
        "and\n"
        '{"name": "grep", "arguments": {"pattern": "tea"}}\n'
        '```\n{"name": "delete", "arguments": {"path": "/memories/old.md"}}\n```'
    )
    found = parse_text_calls(reply, TOOLS, id_prefix="t")
    assert [(c.id, c.name) for c in found.calls] == [("t_0", "view"), ("t_1", "grep"), ("t_2", "delete")]
    assert found.text == "and"


def test_json_array_of_calls() -> None:
    reply = (
        '[{"name": "view", "arguments": {"path": "/memories/a.md"}}, '
        '{"name": "view", "arguments": {"path": "/memories/b.md"}}]'
    )
    found = parse(reply)
    assert [c.arguments["path"] for c in found.calls] == ["/memories/a.md", "/memories/b.md"]
    assert found.text == ""


def test_arguments_as_a_json_string() -> None:
    call = only('{"name": "view", "arguments": "{\\"path\\": \\"/memories/people\\"}"}')
    assert call.arguments == {"path": "/memories/people"}
    assert call.parse_error is None


def test_arguments_string_with_unescaped_quotes_is_salvaged() -> None:
    # A 1.5B model imitating the wire form often forgets to escape the inner quotes.
    call = only('{"name": "view", "arguments": "{"path": "/memories"}"}')
    assert (call.name, call.arguments, call.parse_error) == ("view", {"path": "/memories"}, None)


def test_prose_around_a_call() -> None:
    reply = (
        "To answer, I need to check what is stored about Alice.\n\n"
        '```json\n{"name": "bm25_full_search", "arguments": {"query": "Alice sister"}}\n```\n\n'
        "After that I will answer."
    )
    found = parse(reply)
    assert found.calls[0].arguments == {"query": "Alice sister"}
    assert found.text == "To answer, I need to check what is stored about Alice.\n\nAfter that I will answer."


def test_inline_call_in_a_sentence() -> None:
    found = parse('Let me look: {"name": "view", "arguments": {"path": "/memories"}} and then decide.')
    assert found.calls[0].name == "view"
    assert found.text == "Let me look: and then decide."
    found = parse('Calling `{"name": "view", "arguments": {"path": "/memories"}}` now.')
    assert found.text == "Calling now."


def test_tool_and_args_shape() -> None:
    call = only('{"tool": "grep", "args": {"pattern": "birthday", "case_sensitive": false}}')
    assert (call.name, call.arguments) == ("grep", {"pattern": "birthday", "case_sensitive": False})


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "view", "parameters": {"path": "/m"}}',
        '{"tool_name": "view", "input": {"path": "/m"}}',
        '{"tool": "view", "parameters": {"path": "/m"}}',
        '{"function": {"name": "view", "arguments": {"path": "/m"}}}',
        '{"type": "function", "function": {"name": "view", "arguments": "{\\"path\\": \\"/m\\"}"}}',
        '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "view", '
        '"arguments": "{\\"path\\": \\"/m\\"}"}}]}',
        '{"type": "function", "name": "view", "parameters": {"path": "/m"}}',
        '{"action": "view", "action_input": {"path": "/m"}}',
        '{"tool": "view", "path": "/m"}',
    ],
)
def test_call_shapes(reply: str) -> None:
    call = only(reply)
    assert (call.name, call.arguments, call.parse_error) == ("view", {"path": "/m"}, None)


def test_missing_arguments_are_empty() -> None:
    call = only('<tool_call>\n{"name": "view"}\n</tool_call>')
    assert (call.name, call.arguments, call.parse_error) == ("view", {}, None)
    assert only('{"name": "view", "arguments": null}').arguments == {}
    assert only('{"name": "view", "arguments": ""}').arguments == {}


@pytest.mark.parametrize(
    "written", ["View", "VIEW", "functions.view", "view()", " view ", "default_api:view"]
)
def test_close_names_are_normalized(written: str) -> None:
    call = only(json.dumps({"name": written, "arguments": {"path": "/m"}}))
    assert call.name == "view"


def test_ambiguous_or_unknown_names_are_not_calls() -> None:
    found = parse_text_calls('{"name": "VIEW", "arguments": {}}', ["View", "view"])
    assert found.calls == []
    assert parse('{"name": "view_file", "arguments": {"path": "/m"}}').calls == []
    assert parse_text_calls('{"name": "view", "arguments": {}}', []).calls == []
    assert parse_text_calls("str-replace", ["str_replace"]).calls == []


def test_hyphen_and_underscore_are_one() -> None:
    call = only('{"name": "str-replace", "arguments": {"path": "/m", "old_str": "a", "new_str": "b"}}')
    assert call.name == "str_replace"


# --- what is not a call ----------------------------------------------------------------------


def test_final_answer_object_is_not_a_call() -> None:
    reply = '{"answer": "Alice lives in Lyon.", "citations": ["/memories/people/alice.md#L5"]}'
    found = parse(reply)
    assert found.calls == []
    assert found.text == reply


def test_fenced_final_answer_stays_text() -> None:
    reply = '```json\n{"answer": "She has a cat named view.", "citations": []}\n```'
    assert parse(reply) == TextCalls([], reply)


def test_json_quoted_in_prose_is_not_a_call() -> None:
    reply = 'The config she mentioned was {"debug": true, "theme": "dark"}; nothing to store.'
    assert parse(reply) == TextCalls([], reply)
    reply = "I'll use [the tool: 'view'] next time, {maybe}."
    assert parse(reply) == TextCalls([], reply)


def test_echoed_tool_definition_is_not_a_call() -> None:
    # Models sometimes repeat the <tools> listing of the system prompt.
    reply = (
        "<tools>\n"
        '{"type": "function", "function": {"name": "view", "description": "Show a file or folder.", '
        '"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, '
        '"required": ["path"]}}}\n'
        "</tools>"
    )
    assert parse(reply).calls == []


def test_plain_reply() -> None:
    assert parse("  Alice lives in Lyon.  ") == TextCalls([], "Alice lives in Lyon.")
    assert parse("") == TextCalls([], "")


# --- lenient JSON ------------------------------------------------------------------------------


def test_python_dict_style_call() -> None:
    call = only("{'name': 'grep', 'arguments': {'pattern': 'Lyon', 'case_sensitive': True, 'path': None}}")
    assert call.arguments == {"pattern": "Lyon", "case_sensitive": True, "path": None}
    assert call.parse_error is None


def test_trailing_commas() -> None:
    call = only('<tool_call>\n{"name": "view", "arguments": {"path": "/memories",},}\n</tool_call>')
    assert call.arguments == {"path": "/memories"}


def test_json_with_python_literals() -> None:
    call = only('{"name": "grep", "arguments": {"pattern": "x", "case_sensitive": True}}')
    assert call.arguments == {"pattern": "x", "case_sensitive": True}


def test_forgotten_last_brace() -> None:
    reply = '<tool_call>\n{"name": "view", "arguments": {"path": "/memories"}\n</tool_call>\nDone.'
    found = parse(reply)
    assert [(c.name, c.arguments, c.parse_error) for c in found.calls] == [
        ("view", {"path": "/memories"}, None)
    ]
    assert found.text == "Done."


def test_unclosed_final_tag() -> None:
    found = parse('Checking.\n<tool_call>\n{"name": "view", "arguments": {"path": "/memories"}}')
    assert found.calls[0].arguments == {"path": "/memories"}
    assert found.text == "Checking."


def test_python_call_syntax_in_a_block() -> None:
    call = only('```tool_code\nview(path="/memories/people")\n```')
    assert (call.name, call.arguments) == ("view", {"path": "/memories/people"})
    call = only('<tool_call>\nfunctions.grep(pattern="tea", case_sensitive=False)\n</tool_call>')
    assert (call.name, call.arguments) == ("grep", {"pattern": "tea", "case_sensitive": False})


def test_function_tag() -> None:
    call = only('<function=view>{"path": "/memories"}</function>')
    assert (call.name, call.arguments) == ("view", {"path": "/memories"})


# --- calls that cannot be read: an error for the model ------------------------------------------


def test_malformed_call_gets_parse_error() -> None:
    reply = (
        '<tool_call>\n{"name": "create", "arguments": {"path": "/memories/a.md", file_text: ...}}\n'
        "</tool_call>"
    )
    call = only(reply)
    assert (call.name, call.arguments) == ("create", {})
    assert call.parse_error is not None and "not valid JSON" in call.parse_error
    assert parse(reply).text == ""


def test_unescaped_quotes_in_file_text_get_parse_error() -> None:
    call = only(
        '{"name": "create", "arguments": {"path": "/memories/a.md", "file_text": "She said "hi" twice"}}'
    )
    assert call.name == "create" and call.arguments == {}
    assert call.parse_error is not None


def test_cut_off_call_gets_parse_error() -> None:
    call = only('{"name": "create", "arguments": {"path": "/memories/a.md", "file_text": "# Alice\\n- likes')
    assert call.name == "create" and call.arguments == {}
    assert call.parse_error is not None and "cut off" in call.parse_error


def test_arguments_must_be_an_object() -> None:
    for reply in (
        '{"name": "view", "arguments": ["/memories"]}',
        '{"name": "view", "arguments": "\\"/m\\""}',
    ):
        call = only(reply)
        assert (call.name, call.arguments, call.parse_error) == (
            "view",
            {},
            "arguments must be a JSON object",
        )


def test_undecodable_arguments_string() -> None:
    call = only('{"name": "view", "arguments": "path=/memories"}')
    assert call.arguments == {}
    assert call.parse_error is not None and call.parse_error.startswith("arguments are not valid JSON")


def test_explicit_tag_with_unknown_tool_or_nothing_in_it() -> None:
    call = only('<tool_call>\n{"name": "read_file", "arguments": {"path": "/m"}}\n</tool_call>')
    assert call.parse_error is not None and "unknown tool 'read_file'" in call.parse_error
    assert "view" in call.parse_error
    call = only("<tool_call>\n</tool_call>")
    assert call.parse_error is not None and "empty" in call.parse_error
    # Prose that merely mentions the tag is not a call.
    assert parse("I would write <tool_call> tags, but I am done.").calls == []


# --- bounds -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "{" * 1_000_000,
        "[" * 500_000 + "]" * 500_000,
        '{"name": "view", "arguments": {"path": "' + "\\" * 1_000_000,
        '{"name": "view"} ' * 60_000,
        "a { b } c [ d ] view " * 50_000,
        '{:"' * 330_000,
        "<tool_call>" * 90_000,
        "```\n" * 250_000,
    ],
    ids=["open-braces", "nested", "backslashes", "many-calls", "brace-prose", "quotes", "tags", "fences"],
)
def test_a_megabyte_of_braces_is_cheap(reply: str) -> None:
    start = time.perf_counter()
    found = parse(reply)
    assert time.perf_counter() - start < HANG_GUARD_S  # a hang guard, not a speed target
    assert len(found.calls) <= 256


def test_a_call_after_a_long_reply_is_found() -> None:
    prose = "She said she moved to Lyon last year. " * 20_000
    found = parse(prose + '\n<tool_call>\n{"name": "view", "arguments": {"path": "/memories"}}\n</tool_call>')
    assert [c.name for c in found.calls] == ["view"]
    assert found.text == prose.strip()


# --- properties ---------------------------------------------------------------------------------

PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
# Text made of the pieces calls are made of, so the scanner's corners get reached.
call_texts = st.lists(
    st.sampled_from([*"{}[]\"'\\:,`~<>/=() \n\tabc", "view", '"name"', '"arguments"', "<tool_call>", "```"]),
    max_size=120,
).map("".join)


@PROPS
@given(st.one_of(st.text(max_size=400), call_texts))
def test_never_raises(text: str) -> None:
    # The parse itself, not only its public guard, must hold on any text.
    for found in (textcalls._parse(text, TOOLS, "call"), parse_text_calls(text, TOOLS)):
        assert isinstance(found.text, str)
        for call in found.calls:
            assert isinstance(call.arguments, dict)
            json.dumps(call.arguments)


@PROPS
@given(st.sampled_from(TOOLS), st.dictionaries(st.text(), json_values, max_size=5))
@pytest.mark.slow
def test_render_round_trips(name: str, arguments: dict[str, Any]) -> None:
    rendered = render_text_call(ToolCall("x", name, arguments))
    assert rendered.startswith("<tool_call>\n{") and rendered.endswith("}\n</tool_call>")
    found = textcalls._parse(rendered, TOOLS, "call")
    assert [(c.name, c.arguments, c.parse_error) for c in found.calls] == [(name, arguments, None)]
    assert found.text == ""


@PROPS
@given(st.sampled_from(TOOLS), st.dictionaries(st.text(), json_values, max_size=5), st.text(max_size=60))
@pytest.mark.slow
def test_render_round_trips_after_prose(name: str, arguments: dict[str, Any], prose: str) -> None:
    reply = f"{prose}\n{render_text_call(ToolCall('x', name, arguments))}"
    found = textcalls._parse(reply, TOOLS, "call")
    assert [(c.name, c.arguments) for c in found.calls][-1:] == [(name, arguments)]


def test_render_form() -> None:
    call = ToolCall("c", "create", {"path": "/memories/é.md", "file_text": "a\nb"})
    assert render_text_call(call) == (
        "<tool_call>\n"
        '{"name": "create", "arguments": {"path": "/memories/é.md", "file_text": "a\\nb"}}\n'
        "</tool_call>"
    )


@pytest.mark.parametrize(
    "file_text",
    [
        "</tool_call>\nnot the end",
        '<tool_call>\n{"name": "delete", "arguments": {"path": "/memories"}}\n</tool_call>',
        "```json\n{}\n```",
        "{unbalanced [ and ' quotes \"",
        "line\\with\\backslashes\\",
    ],
)
def test_render_round_trips_markup_inside_arguments(file_text: str) -> None:
    call = ToolCall("x", "create", {"path": "/memories/a.md", "file_text": file_text})
    found = parse(f"Saving it.\n{render_text_call(call)}\nDone.")
    assert [(c.name, c.arguments) for c in found.calls] == [("create", call.arguments)]
    assert found.text == "Saving it.\n\nDone." or found.text == "Saving it.\nDone."
