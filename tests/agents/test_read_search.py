"""The read search (issue 32, item 4): the top sections by search, shown with paths and line
numbers, then one schema-constrained call; citations to lines the model was not shown are
dropped and counted. Real store and index; the scripted model at the LLM boundary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent_helpers import new_store
from memdir import Memory
from memdir.agents import RunRecord
from memdir.agents.read_search import READ_SCHEMA, Shown, read_search, resolve_search, within_shown
from memdir.agents.record import effort
from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.models import Model, get_model
from memdir.models.base import ChatMessage
from memdir.models.scripted import ScriptedAPI
from memdir.tools.profiles import Harness

ALICE = (
    "---\nname: alice\ndescription: Alice, her diet and her pets\n---\n"
    "# Alice\n"
    "## Diet\n"
    "- alice | diet: vegan (since 2024-05-02) [S2T3]\n"  # line 7
    "## Pets\n"
    "- Alice has a beagle named Rex [S1T1]\n"  # line 9
)
QUESTION = "What does Alice eat now, on her vegan diet?"


def _store(tmp_path: Path) -> Any:
    store = new_store(tmp_path / "m")
    Harness(store, "manage").call_or_raise(
        "create", {"path": "/memories/people/alice.md", "file_text": ALICE}
    )
    return store


def _reply(messages: list[ChatMessage]) -> str:
    """What a model shown the notes would write: the diet line, and two citations it was not shown."""
    assert "7: - alice | diet: vegan (since 2024-05-02) [S2T3]" in messages[-1].content
    cites = ["/memories/people/alice.md:7", "/memories/people/alice.md:40-41", "/memories/people/bob.md:2"]
    return json.dumps({"answer": "vegan", "citations": cites})


def test_the_request_carries_the_schema_and_the_numbered_sections(tmp_path: Path) -> None:
    store = _store(tmp_path)
    model = get_model("scripted", script=[_reply])
    record = RunRecord(None)
    out = asyncio.run(read_search(model, store, QUESTION, question_id="q1", record=record))
    (messages, tools, config) = model.api.requests[0]  # type: ignore[attr-defined]
    assert tools == [] and config.answer_schema == READ_SCHEMA and config.require_schema is True
    user = messages[-1].content
    assert "/memories/people/alice.md lines " in user and user.rstrip().endswith(f"Question: {QUESTION}")
    assert out.answer == "vegan" and out.citations == ["/memories/people/alice.md:7"]
    assert out.extra["dropped_citations"] == 2
    assert out.episode is not None and out.episode.usage.calls == 1 and out.episode.rounds == 1
    (call,) = [e for e in record.entries if e["kind"] == "model_call"]
    assert call["role"] == "read_search" and call["reply"] == out.text
    (line,) = [e for e in record.entries if e["kind"] == "episode"]
    assert line["question"] == "q1" and line["dropped_citations"] == 2 and line["search"] == "read"
    assert line["citations"] == ["/memories/people/alice.md:7"] and line["harness"]["bytes_read"] > 0
    assert effort(record.entries).usage.calls == 1  # a question's search effort counts it
    assert any(s.startswith("/memories/people/alice.md:") for s in line["sections"])
    assert out.extra["files_opened"] == len({s.split(":")[0] for s in line["sections"]})


def test_memory_ask_read_resolves_its_citations(tmp_path: Path) -> None:
    _store(tmp_path)
    memory = Memory(tmp_path / "m")
    answer = memory.ask(QUESTION, model=get_model("scripted", script=[_reply]), search="read")
    assert answer.answer == "vegan" and not answer.baseline
    (cite,) = answer.citations
    assert (cite.path, cite.start_line, cite.end_line, cite.found) == (
        "/memories/people/alice.md",
        7,
        7,
        True,
    )
    assert answer.usage.calls == 1 and answer.files_opened >= 1 and answer.tool_calls == 0


def test_the_local_model_reads_by_default_and_others_search_agentically(tmp_path: Path) -> None:
    _store(tmp_path)
    memory = Memory(tmp_path / "m")
    local = Model(ScriptedAPI([_reply]), "local/qwen2.5-coder-1.5b")
    assert memory.ask(QUESTION, model=local).answer == "vegan"  # one call, no tools: the read search
    scripted = get_model("scripted")
    assert resolve_search("auto", scripted) == "agentic"
    assert resolve_search("auto", local, profile="search-bm25") == "agentic"  # tools named: agentic
    assert resolve_search("read", scripted) == "read"


def test_offline_read_is_refused_and_offline_auto_stays_lexical(tmp_path: Path) -> None:
    _store(tmp_path)
    memory = Memory(tmp_path / "m")
    with pytest.raises(MemdirError, match="offline model makes none"):
        memory.ask(QUESTION, model="offline", search="read")
    assert memory.ask(QUESTION, model="offline").baseline  # the lexical searcher
    res = CliRunner().invoke(
        cli, ["ask", str(tmp_path / "m"), "--model", "offline", "--search", "read", QUESTION]
    )
    assert res.exit_code != 0 and "drop --search read" in res.output


def test_ask_search_read_on_the_cli(tmp_path: Path) -> None:
    _store(tmp_path)
    script = tmp_path / "script.json"
    reply = {"answer": "vegan", "citations": ["/memories/people/alice.md:7", "/memories/nowhere.md:1"]}
    script.write_text(json.dumps([json.dumps(reply)]))
    res = CliRunner().invoke(
        cli,
        ["ask", str(tmp_path / "m"), "--model", "scripted", "--script", str(script),
         "--search", "read", "--json", QUESTION],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.output[res.output.index("{") : res.output.rindex("}") + 1])
    assert data["answer"] == "vegan" and data["citations"] == ["/memories/people/alice.md:7"]
    assert data["dropped_citations"] == 1 and data["search"] == "read"


def test_a_citation_counts_only_inside_what_was_shown(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    text = "---\nname: a\ndescription: a\n---\n# A\n- one\n- two\n- three\n- four\n"  # 5-9
    Harness(store, "manage").call_or_raise("create", {"path": "/memories/a.md", "file_text": text})
    other = text.replace("name: a", "name: b")
    Harness(store, "manage").call_or_raise("create", {"path": "/memories/b.md", "file_text": other})
    shown = [Shown("/memories/a.md", "# A", 5, 9, tuple(text.split("\n")[4:9]))]
    assert within_shown("/memories/a.md:6-8", shown, store) == "/memories/a.md:6-8"
    assert within_shown("a.md#L5-L9", shown, store) == "/memories/a.md:5-9"  # the grammar's other forms
    assert within_shown("/memories/a.md > # A", shown, store) == "/memories/a.md > # A"
    assert within_shown("/memories/a.md", shown, store) == "/memories/a.md"  # its body shown whole
    assert within_shown("/memories/a.md:4-6", shown, store) is None  # line 4 was not shown
    assert within_shown("/memories/b.md:5", shown, store) is None
    assert within_shown("/memories/a.md > ## Nowhere", shown, store) is None  # names nothing
    part = [Shown("/memories/a.md", "# A", 5, 7, tuple(text.split("\n")[4:7]))]  # cut by the budget
    assert within_shown("/memories/a.md > # A", part, store) is None
    assert within_shown("/memories/a.md", part, store) is None
    assert within_shown("/memories/a.md:6-7", part, store) == "/memories/a.md:6-7"


def test_the_sections_shown_keep_to_the_byte_budget(tmp_path: Path) -> None:
    from memdir.agents.read_search import top_sections

    store = new_store(tmp_path / "m")
    long_line = "- Rex the beagle " + "chases balls in the park " * 40 + "[S1T1]"  # about 1 KB
    body = "".join(f"{long_line}\n" for _ in range(4))
    text = f"---\nname: rex\ndescription: Rex the beagle\n---\n# Rex\n{body}"
    Harness(store, "manage").call_or_raise("create", {"path": "/memories/rex.md", "file_text": text})
    shown = top_sections(store, "Where does Rex the beagle chase balls?", budget=2_500)
    assert len(shown) == 2 and sum(s.size for s in shown) <= 2_500  # a third would not fit
    assert all(s.lines == (long_line,) and s.end == s.start for s in shown)  # whole lines
    (tiny,) = top_sections(store, "Where does Rex the beagle chase balls?", budget=100)
    assert tiny.size == 100 and long_line.startswith(tiny.lines[0])  # a first line cut to the budget


def test_an_answer_gives_days_as_people_write_them(tmp_path: Path) -> None:
    """A 1.5B model copies the notes' ISO days into its answer; the answer says `2 May 2024`
    (the form a person reads and LoCoMo's golds are written in), an impossible day is left."""
    store = _store(tmp_path)

    def since(messages: list[ChatMessage]) -> str:
        answer = "vegan since 2024-05-02 (not 2024-02-30)"
        return json.dumps({"answer": answer, "citations": ["/memories/people/alice.md:7"]})

    out = asyncio.run(read_search(get_model("scripted", script=[since]), store, "Since when is Alice vegan?"))
    assert out.answer == "vegan since 2 May 2024 (not 2024-02-30)"
    assert out.citations == ["/memories/people/alice.md:7"]


def test_a_section_or_file_cited_but_not_shown_whole_is_dropped(tmp_path: Path) -> None:
    """Issue 46 item 8: a section citation to a section outside the lines shown, and a whole-file
    citation of a file shown in part, were kept (and `found`); citations to lines shown are kept,
    and so are a section and a file the model was shown whole."""
    store = new_store(tmp_path / "m")
    secret = ALICE + "## Secrets\n- The safe code is 4711 [S3T1]\n"  # lines 10-11
    diet = (
        "---\nname: diet\ndescription: what Alice eats\n---\n# Diet\n- Alice eats a vegan diet now [S2T3]\n"
    )
    harness = Harness(store, "manage")
    harness.call_or_raise("create", {"path": "/memories/alice.md", "file_text": secret})
    harness.call_or_raise("create", {"path": "/memories/diet.md", "file_text": diet})
    cites = [
        "alice.md > ## Secrets",  # never shown
        "/memories/alice.md",  # shown in part: its secret never was
        "/memories/alice.md:7",  # a shown line
        "/memories/alice.md > # Alice > ## Diet",  # a section shown whole
        "/memories/diet.md",  # a file shown whole (its body: the frontmatter is no section)
    ]

    def reply(messages: list[ChatMessage]) -> str:
        user = messages[-1].content
        assert "7: - alice | diet: vegan" in user and "6: - Alice eats a vegan diet" in user
        assert "4711" not in user and "Secrets" not in user  # what the test's premise needs
        return json.dumps({"answer": "vegan", "citations": cites})

    record = RunRecord(None)
    model = get_model("scripted", script=[reply])
    # BM25 ranks the secret, which shares no word with the question, last of five sections
    out = asyncio.run(read_search(model, store, QUESTION, record=record, mode="bm25", k=4))
    assert out.citations == cites[2:] and out.extra["dropped_citations"] == 2
    (line,) = [e for e in record.entries if e["kind"] == "episode"]
    assert line["citations"] == cites[2:] and line["dropped_citations"] == 2
