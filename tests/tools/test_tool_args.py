"""The tool contract under any arguments: every value of any JSON type, for every parameter of
every tool in every profile, ends in a valid call or a tool error naming the parameter, never
an exception; and a call that fails leaves the store byte-identical."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import fm, snapshot
from tests.hostile import paths

from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.base import INT_LIMIT, ToolResult
from memdir.tools.profiles import PROFILES, Harness, profile_specs
from memdir.tools.wiring import open_store

SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
# Strings that once escaped the contract, and their relatives.
TRICKY = [
    "--5", "²", "٣", "9" * 5000, "-" + "9" * 20, " 7 ", "+3", "0x10", "1e3", "5.0", "", " ", "true",
    "\ud800", "a\udcffb.md", "/memories/\ud83d.md", "\x00", "-1", "NaN", "Infinity",
]  # fmt: skip
TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(TRICKY),
    st.lists(st.one_of(st.characters(), SURROGATE), max_size=6).map("".join),
    st.just(fm("made", body="# A\n## B\nbody\n")),
    paths(),
)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.integers(),
    st.sampled_from([INT_LIMIT, INT_LIMIT + 1, -INT_LIMIT - 1]),
    st.just(5000).map(lambda digits: 10**digits),  # drawn, not listed: its repr cannot be printed
    st.floats(),
    TEXT,
)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
)
NAMED = [(profile, s.name) for profile in PROFILES for s in profile_specs(profile)]

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    spec.init(open_store(root, create=True))
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text(fm("alice", body="# Alice\n## Diet\nvegan\n"))
    (root / "chunks").mkdir()
    (root / "chunks" / "c1.md").write_text(fm("c1", body="[S1T1] alice likes tea\n"))
    return root


@pytest.mark.parametrize(("profile", "tool"), NAMED, ids=[f"{p}-{t}" for p, t in NAMED])
def test_any_arguments_end_in_a_result(tmp_path: Path, profile: str, tool: str) -> None:
    root = _store(tmp_path)
    harness = Harness(open_store(root), profile, role="test")
    params = [p.name for p in harness.specs[tool].params]
    value = st.one_of(st.sampled_from(TRICKY), SURROGATE, SCALAR, JSON)  # the tricky ones, often
    args_strategy = st.one_of(
        st.fixed_dictionaries({name: value for name in params}),
        st.fixed_dictionaries({}, optional={name: value for name in params}),
        st.dictionaries(st.sampled_from([*params, "extra", "\ud800"]), value, max_size=4),
    )
    if tool == "bash":  # a command that runs may write before it fails: only the contract is checked
        args_strategy = st.fixed_dictionaries(
            {
                "command": st.one_of(
                    SCALAR.filter(lambda v: not isinstance(v, str)), st.sampled_from(["\ud800", "\x00"])
                )
            }
        )

    schema = harness.specs[tool].output_schema
    validator = None if schema is None else jsonschema.Draft202012Validator(schema)

    @SETTINGS
    @given(args=args_strategy)
    def run(args: dict[str, Any]) -> None:
        before = snapshot(root)
        result = harness.call(tool, args)
        assert isinstance(result, ToolResult)
        result.text.encode("utf-8")  # valid Unicode, so it can travel as JSON
        if result.is_error:
            assert result.text.startswith("Error: ")
            assert result.data is None
            assert snapshot(root) == before, (tool, args, result.text)
        elif validator is not None:  # a success of a tool with an output schema follows it
            assert result.data is not None, (tool, args)
            validator.validate(result.data)
            json.dumps(result.data, ensure_ascii=False).encode("utf-8")

    run()


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("--5", "'start_line' must be an integer, e.g. 5; got the string '--5'"),
        ("²", "'start_line' must be an integer"),
        ("9" * 5000, "'start_line' is out of range"),
        (10**5000, "'start_line' is out of range"),
        (1e300, "'start_line' is out of range"),
        (float("nan"), "got the number nan"),
        ([3], "got an array of 1 item(s)"),
        ({"line": 3}, "got an object with 1 key(s)"),
        (True, "got true"),
    ],
    ids=["dashes", "superscript", "5000-digits", "huge-int", "huge-float", "nan", "array", "object", "bool"],
)
def test_malformed_integers_are_tool_errors(manage: Harness, value: Any, needle: str) -> None:
    res = manage.call("view", {"path": "/memories/MEMORY.md", "start_line": value})
    assert res.is_error and needle in res.text, res.text
    assert len(res.text) < 300


def test_integer_forms_models_send_still_work(manage: Harness) -> None:
    for value in (" 2 ", "+2", 2.0, "2"):
        res = manage.call("view", {"path": "/memories/MEMORY.md", "start_line": value, "end_line": 2})
        assert not res.is_error and "(lines 2-2 of" in res.text, (value, res.text)


@pytest.mark.parametrize(
    ("tool", "args", "name"),
    [
        ("view", {"path": "/memories/\ud800.md"}, "path"),
        ("create", {"path": "/memories/a\udcff.md", "file_text": fm("a")}, "path"),
        ("create", {"path": "/memories/a.md", "file_text": fm("a", body="emoji half \ud83d\n")}, "file_text"),
        ("str_replace", {"path": "/memories/MEMORY.md", "old_str": "Memory", "new_str": "\udfff"}, "new_str"),
        ("grep", {"pattern": "\ud800"}, "pattern"),
        ("rename", {"old_path": "/memories/MEMORY.md", "new_path": "/memories/\ud800.md"}, "new_path"),
    ],
)
def test_lone_surrogates_are_refused_and_nothing_changes(
    manage: Harness, root: Path, tool: str, args: dict[str, Any], name: str
) -> None:
    before = snapshot(root)
    res = manage.call(tool, args)
    assert res.is_error and f"'{name}' has a lone UTF-16 surrogate" in res.text, res.text
    assert "send it again as valid Unicode" in res.text
    assert snapshot(root) == before


def test_surrogate_in_a_query_is_refused(store: Store) -> None:
    h = Harness(store, "search-bm25")
    res = h.call("bm25_full_search", {"query": "alice \ud800"})
    assert res.is_error and "'query' has a lone UTF-16 surrogate (U+D800) at character 6" in res.text


def test_parse_refuses_a_surrogate_path_with_a_reason() -> None:
    from memdir.errors import PathError
    from memdir.store.paths import parse_memory_path

    with pytest.raises(PathError, match="lone UTF-16 surrogate"):
        parse_memory_path("/memories/\ud800/a.md")


def test_a_file_name_that_is_not_utf8_is_reported_not_crashed_on(manage: Harness, root: Path) -> None:
    with open(os.fsencode(root) + b"/\xff.md", "wb") as fh:
        fh.write(fm("x", body="zyzzyva\n").encode())
    res = manage.call("view", {"path": "/memories"})
    assert not res.is_error
    assert "not read: /memories/\\xff.md: the name is not UTF-8 text" in res.text
    res.text.encode("utf-8")
    report = spec.validate(manage.store)
    assert any(v.rule == "unread" and v.path == "/memories/\\xff.md" for v in report.violations)
    h = Harness(manage.store, "search-bm25")
    res = h.call("bm25_full_search", {"query": "zyzzyva"})
    assert not res.is_error and res.text.startswith("No files under /memories match")
