"""One definition per tool: every rendering agrees with it and with the profiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.agents.loop import tool_infos
from memdir.errors import MemdirError
from memdir.tools.profiles import MANAGE, PROFILES, Harness, load_tools, profile_specs
from memdir.tools.schemas import render
from memdir.tools.wiring import open_store

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
    "forget": ([], ["text", "path", "reason"]),
}


# memdir's extension parameters (docs/tools.md): shown to agent builders, not in the study's schemas.
EXTENSIONS = {
    "view": ["show_sha256"],
    "str_replace": ["expected_sha256"],
    "insert": ["expected_sha256"],
    "delete": ["expected_sha256"],
    "rename": ["expected_sha256"],
}


@pytest.mark.parametrize("name", list(PARAMS))
def test_parameter_names_match_the_reference(name: str) -> None:
    spec = load_tools()[name]
    schema = spec.input_schema(extensions=False)
    required, allowed = PARAMS[name]
    assert schema["required"] == required
    assert list(schema["properties"]) == allowed
    assert schema["additionalProperties"] is False
    full = spec.input_schema()
    assert full["required"] == required  # an extension is never required
    assert list(full["properties"]) == allowed + EXTENSIONS.get(name, [])


def test_roles_get_the_studys_schemas_and_builders_get_the_extensions(tmp_path: Path) -> None:
    harness = Harness(open_store(tmp_path / "m", create=True), "manage")
    infos = tool_infos(harness)
    assert [i.name for i in infos] == list(MANAGE)  # a role is shown the paper's tools, not `forget`
    for info in infos:
        assert list(info.parameters["properties"]) == PARAMS[info.name][1], info.name
        assert info.description == harness.specs[info.name].description, info.name  # no notes
    for fmt, key in (("openai", "parameters"), ("anthropic", "input_schema"), ("mcp", "inputSchema")):
        for t in render(list(harness.specs.values()), fmt):
            name = t["function"]["name"] if fmt == "openai" else t["name"]
            schema = t["function"][key] if fmt == "openai" else t[key]
            assert list(schema["properties"]) == PARAMS[name][1] + EXTENSIONS.get(name, []), (fmt, name)


def test_every_tool_has_a_short_title_and_mcp_carries_it() -> None:
    specs = list(load_tools().values())
    titles = [s.title for s in specs]
    assert all(t and len(t) <= 60 and t[0].isupper() and not t.endswith(".") for t in titles), titles
    assert len(set(titles)) == len(titles)
    for s, m in zip(specs, render(specs, "mcp"), strict=True):
        assert m["title"] == m["annotations"]["title"] == s.title
        assert m.get("outputSchema") == s.output_schema


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
        "forget",  # for agent builders only (BUILDERS_ONLY): no role's model is shown it
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
        "manage-health",
        "shell",
        "chunk-retrieval",
        "chunk-retrieval-hybrid",
        "folder",
    }
    # the hybrid profiles are the study's profiles plus memdir's `section_search`, nothing else
    assert PROFILES["manage"] == (*MANAGE, "forget")
    assert [p for p, names in PROFILES.items() if "forget" in names] == ["manage"]
    assert PROFILES["manage-hybrid"] == (*MANAGE, "section_search")
    assert PROFILES["search-hybrid"] == (*PROFILES["search"], "section_search")
    # one name, one thing (issue 35): no tool takes the name of a profile, a role or a method
    assert not set(load_tools()) & {*PROFILES, "search"}
    assert PROFILES["manage-health"] == (*MANAGE, "health")  # opt-in; no other profile has it
    assert [p for p, names in PROFILES.items() if "health" in names] == ["manage-health"]
    with pytest.raises(MemdirError, match="unknown profile"):
        profile_specs("root")


# The first sentence of each writer's contract (docs/study.md, Tool contracts), which stays first.
CONTRACT_OPENINGS = {
    "create": "Create a new memory file. Fails if it exists",
    "str_replace": "Replace one exact occurrence of old_str with new_str in a file.",
    "insert": "Insert text after line insert_line of a file (0 = at the very start).",
    "delete": "Delete a file, or a folder with everything in it. The root cannot be deleted.",
    "rename": "Rename or move a file or folder.",
}


def test_writer_descriptions_keep_the_contract_first_and_teach_the_conventions() -> None:
    tools = load_tools()
    for name, opening in CONTRACT_OPENINGS.items():
        assert tools[name].describe().startswith(opening), name
        # memdir's roles (the study's runs) read the contract alone, as the study wrote it
        assert tools[name].describe(extensions=False) == tools[name].description, name
        assert tools[name].notes and tools[name].notes not in tools[name].description, name
    teaches = {n: tools[n].describe() for n in ("create", "str_replace", "insert")}
    for name in ("create", "insert"):
        assert "[S6T5]" in teaches[name] and "see /memories/" in teaches[name], name
    assert "~~alice | diet: vegetarian~~ (2022-01-10 until 2023-05-02) [S1T4]" in teaches["str_replace"]
    assert "supersedes" in teaches["insert"] and "superseded" in tools["delete"].describe()
    assert "not rewritten" in tools["rename"].describe()
    rendered = {t["name"]: t["description"] for t in render(list(tools.values()), "anthropic")}
    assert rendered["create"] == teaches["create"]  # agent builders get the notes
    for s in tools.values():  # a role is never taught a parameter its schema leaves out
        assert "sha256" not in s.describe(), s.name
