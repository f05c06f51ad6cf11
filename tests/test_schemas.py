"""One definition per tool: every rendering agrees with it and with the profiles."""

from __future__ import annotations

import pytest

from memdir.errors import MemdirError
from memdir.tools.profiles import PROFILES, load_tools, profile_specs
from memdir.tools.schemas import render

PARAMS = {
    "view": (["path"], ["path", "start_line", "end_line"]),
    "create": (["path", "file_text"], ["path", "file_text"]),
    "str_replace": (["path", "old_str", "new_str"], ["path", "old_str", "new_str"]),
    "insert": (["path", "insert_line", "insert_text"], ["path", "insert_line", "insert_text"]),
    "delete": (["path"], ["path"]),
    "rename": (["old_path", "new_path"], ["old_path", "new_path"]),
    "grep": (["pattern"], ["pattern", "path", "case_sensitive", "max_results"]),
    "toc": (["path"], ["path"]),
    "section_read": (["path", "section_path"], ["path", "section_path"]),
}


@pytest.mark.parametrize("name", list(PARAMS))
def test_parameter_names_match_the_reference(name: str) -> None:
    spec = load_tools()[name]
    schema = spec.input_schema()
    required, allowed = PARAMS[name]
    assert schema["required"] == required
    assert list(schema["properties"]) == allowed
    assert schema["additionalProperties"] is False


def test_three_renderings_agree() -> None:
    specs = profile_specs("manage")
    oa, an, mc = (render(specs, f) for f in ("openai", "anthropic", "mcp"))
    for o, a, m, s in zip(oa, an, mc, specs, strict=True):
        assert o["type"] == "function"
        assert o["function"]["name"] == a["name"] == m["name"] == s.name
        assert o["function"]["parameters"] == a["input_schema"] == m["inputSchema"] == s.input_schema()
        assert m["annotations"]["readOnlyHint"] is s.read_only


def test_profiles() -> None:
    assert [s.name for s in profile_specs("manage")] == [
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
        "grep",
    ]
    assert [s.name for s in profile_specs("search")] == ["view", "grep", "toc", "section_read"]
    assert [s.name for s in profile_specs("folder")] == ["view", "grep", "rename"]
    assert all(s.read_only for s in profile_specs("search"))
    assert set(PROFILES) == {
        "manage",
        "search",
        "manage-bm25",
        "search-bm25",
        "manage-hybrid",
        "search-hybrid",
        "shell",
        "chunk-retrieval",
        "chunk-retrieval-hybrid",
        "folder",
    }
    # the hybrid profiles are the study's profiles plus memdir's `search`, nothing else
    assert PROFILES["manage-hybrid"] == (*PROFILES["manage"], "search")
    assert PROFILES["search-hybrid"] == (*PROFILES["search"], "search")
    with pytest.raises(MemdirError, match="unknown profile"):
        profile_specs("root")
