"""The examples run end to end against local stand-ins of each provider's HTTP API, replaying
recorded responses in the real wire format (the LLM boundary is the only stand-in)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import anthropic
import openai

from memdir import Memory
from serve_helpers import run_llm

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALICE = "---\nname: alice\ndescription: Alice, the user: where she lives and what she eats\n---\n"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _chat(n: int, content: str | None, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A Chat Completions response body as the API sends it."""
    tool_calls = [
        {"id": f"call_{n}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": f"chatcmpl-Stand{n}",
        "object": "chat.completion",
        "created": 1764500000 + n,
        "model": "gpt-5-mini-2025-08-07",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 900 + n, "completion_tokens": 30, "total_tokens": 930 + n},
        "service_tier": "default",
        "system_fingerprint": None,
    }


def test_openai_agent(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m")
    recorded = [
        _chat(1, None, [("grep", {"pattern": "Lisbon", "path": "/memories"})]),
        _chat(
            2,
            None,
            [
                (
                    "create",
                    {
                        "path": "/memories/people/alice.md",
                        "file_text": ALICE + "- alice | home: Lisbon (since 2026-05-01) [S1T1]\n",
                    },
                ),
                ("create", {"path": "/memories/bad.txt", "file_text": "x"}),
            ],
        ),
        _chat(3, "Noted: you live in Lisbon since May.", []),
    ]
    with run_llm(recorded, "/chat/completions") as (url, llm):
        client = openai.OpenAI(base_url=url + "/v1", api_key="test-key", max_retries=0)
        answer = load("openai_agent").run(client, mem, "I moved to Lisbon in May.", model="gpt-5-mini")
    assert answer == "Noted: you live in Lisbon since May."
    assert "Lisbon (since 2026-05-01) [S1T1]" in (tmp_path / "m" / "people" / "alice.md").read_text()
    assert not (tmp_path / "m" / "bad.txt").exists()
    first = llm.requests[0]
    assert first["messages"][0]["role"] == "system" and "<core_memory>" in first["messages"][0]["content"]
    assert {t["function"]["name"] for t in first["tools"]} == {
        "view",
        "create",
        "str_replace",
        "insert",
        "delete",
        "rename",
        "grep",
        "forget",  # an agent builder's model may honour "forget that" (docs/forget.md)
    }
    tool_msgs = {m["tool_call_id"]: m["content"] for m in llm.requests[2]["messages"] if m["role"] == "tool"}
    assert tool_msgs["call_2_0"].startswith("Created /memories/people/alice.md")
    assert tool_msgs["call_2_1"].startswith("Error:") and ".md" in tool_msgs["call_2_1"]


def _msg(n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_01Stand{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1500 + n,
            "output_tokens": 50,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def test_anthropic_agent(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m")
    mem.call(
        "create",
        {
            "path": "/memories/people/alice.md",
            "file_text": ALICE + "- alice | diet: vegetarian (since 2024-01-02) [S1T4]\n",
        },
    )
    recorded = [
        _msg(
            1,
            [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "view",
                    "input": {"path": "/memories/people/alice.md"},
                },
            ],
            "tool_use",
        ),
        _msg(
            2,
            [
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "str_replace",
                    "input": {
                        "path": "/memories/people/alice.md",
                        "old_str": "- alice | diet: vegetarian (since 2024-01-02) [S1T4]",
                        "new_str": "- alice | diet: vegan (since 2026-05-02) [S2T1]\n"
                        "- ~~alice | diet: vegetarian~~ (2024-01-02 until 2026-05-02) [S1T4]",
                    },
                }
            ],
            "tool_use",
        ),
        _msg(3, [{"type": "text", "text": "Updated: you are vegan now."}], "end_turn"),
    ]
    with run_llm(recorded, "/v1/messages") as (url, llm):
        client = anthropic.Anthropic(base_url=url, api_key="test-key", max_retries=0)
        answer = load("anthropic_agent").run(client, mem, "I went vegan.", model="claude-sonnet-5")
    assert answer == "Updated: you are vegan now."
    text = (tmp_path / "m" / "people" / "alice.md").read_text()
    assert "- alice | diet: vegan (since 2026-05-02) [S2T1]\n- ~~alice | diet: vegetarian~~" in text
    assert "<core_memory>" in llm.requests[0]["system"]
    assert {t["name"] for t in llm.requests[0]["tools"]} >= {"view", "str_replace", "grep"}
    view_result = llm.requests[1]["messages"][-1]["content"][0]
    assert view_result["tool_use_id"] == "toolu_01A" and "diet: vegetarian" in view_result["content"]
    assert view_result["is_error"] is False


# -- the add / search / ask examples, one per provider, with the scripted model in its place --

NOTE = "---\nname: {stem}\ndescription: what the user said about {stem}\n---\n- {fact} [S1T1]\n"


def _script(stem: str, fact: str, answer_text: str) -> Any:
    """A management episode that files `fact`, then a search episode that reads and cites it."""
    from memdir.models import get_model
    from memdir.models.scripted import answer, call

    path = f"/memories/{stem}.md"
    return get_model(
        "scripted",
        script=[
            call("create", path=path, file_text=NOTE.format(stem=stem, fact=fact)),
            answer("filed"),
            call("view", path=path),
            answer(json.dumps({"answer": answer_text, "citations": [f"{path}:5"]})),
        ],
    )


def test_memory_offline_example_runs_with_no_model(tmp_path: Path, capsys: Any) -> None:
    got = load("memory_offline").main(str(tmp_path / "m"))
    assert "Lisbon" in got and "/memories/" in capsys.readouterr().out


def test_memory_local_example(tmp_path: Path) -> None:
    model = _script("ana", "Ana works as a nurse in Porto", "in Porto, as a nurse")
    assert load("memory_local").main(str(tmp_path / "m"), model=model) == "in Porto, as a nurse"
    assert "nurse in Porto" in (tmp_path / "m" / "ana.md").read_text()


def test_memory_openai_example(tmp_path: Path) -> None:
    model = _script("diet", "user | diet: vegan (since 2024-05-01)", "vegan")
    assert load("memory_openai").main(str(tmp_path / "m"), model=model) == "vegan"


def test_memory_anthropic_example_is_async(tmp_path: Path, capsys: Any) -> None:
    import asyncio

    model = _script("standup", "the team standup is at 9:30 on Tuesdays", "9:30 on Tuesdays")
    got = asyncio.run(load("memory_anthropic").main(str(tmp_path / "m"), model=model))
    assert got == "9:30 on Tuesdays" and "/memories/standup.md" in capsys.readouterr().out
