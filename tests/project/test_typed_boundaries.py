"""The typed records that cross rooms keep the JSON they always wrote, key for key, and a
record missing a field fails where it is built, naming the field."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import get_type_hints

import pytest

from memdir.models.usage import Bounds, BoundsRecord, Usage, UsageRecord, spent
from memdir.tools.wiring import open_store


def test_usage_record_is_the_usage_fields_and_reads_back() -> None:
    u = Usage(
        input_uncached=10, input_cached=4, output=7, reasoning=2, cache_write=1, calls=3, seconds=1.23456789
    )
    record = u.as_dict()
    assert list(record) == list(get_type_hints(UsageRecord)) and record["seconds"] == 1.234568
    assert Usage.from_dict(json.loads(json.dumps(record))) == Usage(10, 4, 7, 2, 1, 3, 1.234568)
    assert Usage.from_dict({"output": 5}) == Usage(output=5)  # an older record's missing field counts 0
    assert spent(Usage(output=2, seconds=0.5), u) == Usage(10, 4, 5, 2, 1, 3, 1.234568 - 0.5)


def test_bounds_record_carries_the_caching_efficiency() -> None:
    record = Bounds(100, 60, 40).as_dict()
    assert list(record) == list(get_type_hints(BoundsRecord))
    assert record == {"no_cache": 100, "measured": 60, "perfect": 40, "caching_efficiency": 2 / 3}


def test_judge_scores_name_what_the_answer_row_takes(tmp_path: Path) -> None:
    from memdir_study.bench.types import Question
    from memdir_study.eval import judges

    q = Question("q", "current", "What is Alice's diet?", "vegan", ("S1T1",))
    store = open_store(tmp_path / "mem", create=True)
    offline = asyncio.run(judges.judge_item(None, store, q, "vegan", ["/memories/none.md"]))
    # no judge: the row takes the offline score and, with a store, the lexical support
    assert offline.correctness == offline.offline_correctness == 1.0
    assert offline.attribution == offline.lexical_support and offline.citations_not_found == [
        "/memories/none.md"
    ]
    with pytest.raises(TypeError, match="correctness"):
        judges.Scores(
            attribution=None,
            offline_correctness=0.0,
            lexical_support=0.0,
            citations_resolved=0,
            citations_not_found=[],
        )  # type: ignore[call-arg]


def test_a_verdict_record_keeps_its_keys() -> None:
    from memdir_study.eval import judges

    v = judges.Verdict(
        "correctness",
        "correct",
        1.0,
        "reply",
        "prompt",
        usage=judges.JudgeUsage(**Usage(output=3).as_dict(), model="m"),
    )
    record = v.record()
    assert list(record) == ["judge", "prompt_id", "label", "score", "scales", "reply", "usage"]
    assert (
        record["usage"] is not None
        and record["usage"]["model"] == "m"
        and record["prompt_id"] == judges.PROMPT_IDS["correctness"]
    )


def test_a_role_output_prints_as_it_did_with_its_extra_last() -> None:
    from memdir.agents.loop import Episode
    from memdir.agents.output import RoleExtra, RoleOutput

    ep = Episode("done", [], rounds=2, tool_calls=3, usage=Usage(output=4))
    out = RoleOutput(
        "search", "m", "done", "vegan", ["/memories/a.md:1"], ep, extra=RoleExtra(files_opened=1)
    )
    d = out.as_dict()
    assert list(d) == [
        "role",
        "model",
        "baseline",
        "answer",
        "citations",
        "rounds",
        "tool_calls",
        "stop",
        "usage",
        "files_opened",
    ]
    assert d["usage"] == Usage(output=4).as_dict() and d["files_opened"] == 1
    split = RoleOutput("management", "m", "summary", extra=RoleExtra(curation="split", tool_calls=5))
    assert split.as_dict() == {
        "role": "management",
        "model": "m",
        "baseline": False,
        "text": "summary",
        "curation": "split",
        "tool_calls": 5,
    }


def test_a_cell_marker_and_a_build_cost_are_their_declared_keys() -> None:
    from memdir_study.eval.folder import CellMarker
    from memdir_study.eval.runner import ConversationCell
    from memdir_study.variants import BuildCost, build_cost

    cell = ConversationCell("locomo", "conv-1", "verbatim-dump")
    assert list(cell.marker()) == list(get_type_hints(CellMarker))  # the marker is the cell, field for field
    assert ConversationCell(**json.loads(json.dumps(cell.marker()))) == cell
    cost = build_cost([{"kind": "episode", "usage": Usage(output=3, calls=1).as_dict()}], None, 1.23456)
    assert list(cost) == list(get_type_hints(BuildCost))
    assert (cost["output_tokens"], cost["model_calls"], cost["cost_usd"], cost["seconds"]) == (
        3,
        1,
        0.0,
        1.235,
    )


async def test_every_line_of_an_episode_carries_its_record_ids(tmp_path: Path) -> None:
    from memdir.agents.loop import run_loop
    from memdir.agents.record import RunRecord, read_record
    from memdir.agents.roles import get_role
    from memdir.models import get_model
    from memdir.models.scripted import answer

    record = RunRecord(tmp_path / "calls.jsonl")
    role = get_role("management")
    await run_loop(
        get_model("scripted", script=[answer("done")]),
        None,
        role,
        "",
        "hi",
        record=record,
        variant="v",
        chunk=3,
        feedback=True,
    )
    lines = read_record(tmp_path / "calls.jsonl")
    assert lines and all((e["variant"], e["chunk"], e["feedback"]) == ("v", 3, True) for e in lines)


def test_the_mcp_server_serves_each_tool_as_its_rendering_says(tmp_path: Path) -> None:
    from memdir.mcp.server import mcp_tools
    from memdir.tools.profiles import Harness
    from memdir.tools.schemas import mcp_tool

    harness = Harness(open_store(tmp_path / "mem", create=True), "manage")
    for spec, served in zip(harness.specs.values(), mcp_tools(harness), strict=True):
        rendered = json.loads(json.dumps(mcp_tool(spec)))  # the schemas are JSON through and through
        assert (served.name, served.title, served.description) == (
            rendered["name"],
            rendered["title"],
            rendered["description"],
        )
        assert served.input_schema == rendered["inputSchema"] and served.output_schema == rendered.get(
            "outputSchema"
        )
        assert served.annotations is not None
        assert served.annotations.model_dump(by_alias=True) == rendered["annotations"]


def test_a_logged_call_keeps_its_parse_error_only_when_it_has_one() -> None:
    from memdir.models.base import ToolCall, call_dicts

    calls = [ToolCall("1", "view", {"path": "/memories"}), ToolCall("2", "grep", {}, parse_error="not JSON")]
    assert json.loads(json.dumps(call_dicts(calls))) == [
        {"name": "view", "args": {"path": "/memories"}},
        {"name": "grep", "args": {}, "parse_error": "not JSON"},
    ]


def test_a_cost_cap_and_an_answer_say_themselves_in_their_record_keys() -> None:
    from memdir.agents.answer import AnswerRecord, parse_answer
    from memdir.agents.cost_cap import CostCap, CostCapRecord

    cap = CostCap(max_tokens=1000).as_dict()
    assert (
        list(cap) == list(get_type_hints(CostCapRecord))
        and cap["max_tokens"] == 1000
        and cap["price_card"] is None
    )
    parsed = parse_answer('{"answer": "vegan", "citations": ["/memories/a.md:1"]}').as_dict()
    assert list(parsed) == list(get_type_hints(AnswerRecord)) and parsed["citations"] == ["/memories/a.md:1"]
