"""The memory_20250818 adapter: same effect on Claude's text as the SDK's own helper, minus its
bugs, and driven end to end by the SDK's own tool runner against a recorded Messages API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
from anthropic.lib.tools._beta_functions import ToolError as AnthropicToolError
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool

from memdir import Guards, Memory
from memdir.integrations.anthropic_memory import MemdirMemoryTool, synthesize_frontmatter
from memdir.store import frontmatter, spec
from serve_helpers import run_llm

# One session of the kinds of calls Claude makes, in the tool's wire format.
SESSION: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {
        "command": "create",
        "path": "/memories/user-prefs.md",
        "file_text": "# User preferences\n- likes coffee\n- vegan\n",
    },
    {
        "command": "str_replace",
        "path": "/memories/user-prefs.md",
        "old_str": "- vegan",
        "new_str": "- vegetarian",
    },
    {
        "command": "insert",
        "path": "/memories/user-prefs.md",
        "insert_line": 0,
        "insert_text": "Updated weekly",
    },
    {"command": "insert", "path": "/memories/user-prefs.md", "insert_line": 3, "insert_text": "- tea too\n"},
    {"command": "view", "path": "/memories/user-prefs.md", "view_range": [2, 3]},
    {"command": "insert", "path": "/memories/user-prefs.md", "insert_line": 5, "insert_text": "- end\n\n\n"},
    {"command": "insert", "path": "/memories/user-prefs.md", "insert_line": 1, "insert_text": "\n"},
    {"command": "create", "path": "/memories/rule.md", "file_text": "---\nA note under a rule\n"},
    {
        "command": "create",
        "path": "/memories/projects/alpha.md",
        "file_text": "Alpha project\nstatus: active\n",
    },
    {"command": "create", "path": "/memories/projects/beta.md", "file_text": "Beta project\n"},
    {
        "command": "rename",
        "old_path": "/memories/projects/alpha.md",
        "new_path": "/memories/archive/alpha-2024.md",
    },
    {
        "command": "str_replace",
        "path": "/memories/archive/alpha-2024.md",
        "old_str": "active",
        "new_str": "done",
    },
    {"command": "delete", "path": "/memories/projects/beta.md"},
    {"command": "create", "path": "/memories/user-prefs.md", "file_text": "again"},  # exists: both refuse
    {
        "command": "str_replace",
        "path": "/memories/user-prefs.md",
        "old_str": "nope",
        "new_str": "x",
    },  # both refuse
]


def run(tool: Any, calls: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    for c in calls:
        try:
            out.append((False, tool.call(c)))
        except AnthropicToolError as exc:
            out.append((True, str(exc)))
    return out


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


def body(text: str) -> str:
    return "".join(ln + "\n" for ln in text.split("\n")[frontmatter.split(text)[1] :]).removesuffix("\n")


def test_same_effect_as_sdk_helper(tmp_path: Path) -> None:
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    ours = MemdirMemoryTool(tmp_path / "ours")
    sdk_results, our_results = run(sdk, SESSION), run(ours, SESSION)
    # The same calls fail on both sides.
    assert [e for e, _ in sdk_results] == [e for e, _ in our_results]
    assert our_results[5][1].endswith("     2\t# User preferences\n     3\t- likes coffee")
    theirs, mine = tree(tmp_path / "sdk" / "memories"), tree(tmp_path / "ours")
    # Documented differences: our store has its root MEMORY.md, each folder its index (kept by
    # the harness: projects/ went with its last file), and every file we created got
    # frontmatter; below it, Claude's text is byte-identical to what the SDK wrote.
    assert mine.pop("MEMORY.md") == spec.INIT_INDEX
    assert "- [alpha-2024.md](alpha-2024.md): Alpha project" in mine.pop("archive/MEMORY.md").splitlines()
    assert set(mine) == set(theirs) == {"user-prefs.md", "archive/alpha-2024.md", "rule.md"}
    for rel, text in theirs.items():
        assert body(mine[rel]) == text, rel
    assert (
        theirs["user-prefs.md"]
        == "Updated weekly\n\n# User preferences\n- likes coffee\n- tea too\n- vegetarian\n- end\n"
    )
    assert frontmatter.parse(mine["rule.md"]).description == "A note under a rule"
    fm = frontmatter.parse(mine["archive/alpha-2024.md"])
    assert (fm.name, fm.description) == ("alpha-2024", "Alpha project")  # renamed along with the file
    assert frontmatter.validate(mine["user-prefs.md"], "user-prefs.md") == []
    # No convention gap is left: the folder Claude's rename made got its MEMORY.md.
    assert spec.validate(ours.store).violations == []
    # Our side kept history: every write was a journaled, metered harness call.
    assert ours.harness.meter.calls == len(SESSION)


def test_sdk_prefix_bug_is_refused(tmp_path: Path) -> None:
    """The SDK checks `startswith('/memories')`, so /memoriesX/... is accepted; we refuse it."""
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    ours = MemdirMemoryTool(tmp_path / "ours")
    bad = {"command": "create", "path": "/memoriesX/a.md", "file_text": "x"}
    assert run(sdk, [bad]) == [(False, "File created successfully at: /memoriesX/a.md")]
    assert (tmp_path / "sdk" / "memories" / "X" / "a.md").exists()
    before = tree(tmp_path / "ours")
    for path in ("/memoriesX/a.md", "/memories_old/a.md", "/memories/../a.md", "/Memories/a.md"):
        err, text = run(ours, [{**bad, "path": path}])[0]
        assert err and "/memories" in text, path
        err, text = run(ours, [{"command": "view", "path": path}])[0]
        assert err
    assert tree(tmp_path / "ours") == before


def test_names_that_are_not_memory_files_get_a_suggestion(tmp_path: Path) -> None:
    strict = MemdirMemoryTool(tmp_path / "s", lenient=False)  # lenient: mapped (test_memory_names.py)
    err, text = run(strict, [{"command": "create", "path": "/memories/User Notes.txt", "file_text": "x"}])[0]
    assert err and "/memories/user-notes.md" in text
    assert not (tmp_path / "s" / "User Notes.txt").exists()
    ours = MemdirMemoryTool(tmp_path / "m")
    err, _ = run(ours, [{"command": "create", "path": "/memories/user-notes.md", "file_text": "x"}])[0]
    assert not err


def test_out_of_range_lines_are_refused_in_claudes_numbering(tmp_path: Path) -> None:
    ours = MemdirMemoryTool(tmp_path / "m")
    run(ours, [{"command": "create", "path": "/memories/a.md", "file_text": "one\ntwo\n"}])
    before = (tmp_path / "m" / "a.md").read_bytes()
    err, text = run(
        ours, [{"command": "insert", "path": "/memories/a.md", "insert_line": 3, "insert_text": "x"}]
    )[0]
    assert err and "has 2 lines, use 0-2" in text
    err, text = run(ours, [{"command": "view", "path": "/memories/a.md", "view_range": [2, 5]}])[0]
    assert err and "[1, 3]" in text  # as the SDK numbers it: the empty line after the last newline
    assert (tmp_path / "m" / "a.md").read_bytes() == before


def test_guards_reach_the_adapter(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m", guards=Guards(core_budget=400))
    tool = mem.anthropic_memory_tool()
    err, text = run(tool, [{"command": "create", "path": "/memories/diary.md", "file_text": "word " * 600}])[
        0
    ]
    assert err and "subfolder" in text and not (tmp_path / "m" / "diary.md").exists()
    err, _ = run(
        tool, [{"command": "create", "path": "/memories/life/diary.md", "file_text": "word " * 600}]
    )[0]
    assert not err


def test_synthesized_frontmatter_is_valid() -> None:
    text = synthesize_frontmatter("/memories/a/b-c.md", "\n\n## Alice: likes 'tea' and \"coffee\"\nmore\n")
    assert frontmatter.validate(text, "b-c.md") == []
    assert frontmatter.parse(text).description == "Alice: likes 'tea' and \"coffee\""
    assert frontmatter.parse(synthesize_frontmatter("/memories/x-y.md", "")).description == "Notes: x y"


def _message(n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    """A Messages API response body as the API sends it."""
    return {
        "id": f"msg_01Stand{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1200 + n,
            "output_tokens": 40,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _use(i: int, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_01Mem{i:04d}", "name": "memory", "input": inp}


RECORDED = [
    _message(
        1,
        [
            {"type": "text", "text": "Let me check my memory first."},
            _use(1, command="view", path="/memories"),
        ],
        "tool_use",
    ),
    _message(
        2,
        [
            _use(
                2,
                command="create",
                path="/memories/user-prefs.md",
                file_text="# Preferences\n- drinks oat milk [S1T2]\n",
            ),
            _use(3, command="create", path="/memoriesX/leak.md", file_text="outside"),
        ],
        "tool_use",
    ),
    _message(
        3,
        [_use(4, command="str_replace", path="/memories/user-prefs.md", old_str="oat", new_str="soy")],
        "tool_use",
    ),
    _message(4, [{"type": "text", "text": "Noted: you drink soy milk."}], "end_turn"),
]


def test_sdk_tool_runner_drives_our_store(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m")
    with run_llm(list(RECORDED), "/v1/messages") as (url, llm):
        client = anthropic.Anthropic(base_url=url, api_key="test-key", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-5",
            max_tokens=1024,
            messages=[{"role": "user", "content": "I switched from oat to soy milk."}],
            tools=[mem.anthropic_memory_tool()],
        )
        final = runner.until_done()
    assert final.content[0].type == "text" and "soy" in final.content[0].text
    assert len(llm.requests) == len(RECORDED)
    assert llm.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    # The tool results the SDK sent back carry our texts and error flags.
    results = [
        b
        for req in llm.requests
        for m in req["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    by_id = {r["tool_use_id"]: r for r in results}
    assert "MEMORY.md" in str(by_id["toolu_01Mem0001"]["content"])
    assert not by_id["toolu_01Mem0002"].get("is_error")
    assert by_id["toolu_01Mem0003"]["is_error"] is True and "outside memory" in str(
        by_id["toolu_01Mem0003"]["content"]
    )
    text = (tmp_path / "m" / "user-prefs.md").read_text()
    assert (
        text
        == "---\nname: user-prefs\ndescription: Preferences\n---\n# Preferences\n- drinks soy milk [S1T2]\n"
    )
    assert not (tmp_path / "m" / "X").exists() and not (tmp_path / "memoriesX").exists()


async def test_async_adapter_matches_sync(tmp_path: Path) -> None:
    from memdir.integrations.anthropic_memory import MemdirAsyncMemoryTool

    sync_tool = MemdirMemoryTool(tmp_path / "s")
    async_tool = MemdirAsyncMemoryTool(tmp_path / "a")
    sync_out = run(sync_tool, SESSION)
    async_out: list[tuple[bool, str]] = []
    for c in SESSION:
        try:
            async_out.append((False, await async_tool.call(c)))  # type: ignore[arg-type]
        except AnthropicToolError as exc:
            async_out.append((True, str(exc)))
    assert async_out == sync_out
    assert tree(tmp_path / "a") == tree(tmp_path / "s")


def test_store_errors_reach_claude_as_error_results(tmp_path: Path) -> None:
    ours = MemdirMemoryTool(tmp_path / "m")
    run(ours, [{"command": "create", "path": "/memories/bin.md", "file_text": "x\n"}])
    (tmp_path / "m" / "bin.md").write_bytes(b"\xff\xfe not utf-8")
    for cmd in (
        {"command": "view", "path": "/memories/bin.md"},
        {"command": "insert", "path": "/memories/bin.md", "insert_line": 0, "insert_text": "y"},
        {"command": "str_replace", "path": "/memories/bin.md", "old_str": "not", "new_str": "is"},
    ):
        err, text = run(ours, [cmd])[0]
        assert err and "not UTF-8" in text, cmd
    assert (tmp_path / "m" / "bin.md").read_bytes() == b"\xff\xfe not utf-8"
