"""The offline policies end to end on a small conversation, the stream chunking rule, the
answer parser, and the ingest/ask commands."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from click.testing import CliRunner

from agent_helpers import new_store, snapshot
from memdir.agents import RunRecord, choose_option, manage_chunk, parse_answer, search
from memdir.agents.offline import keyed_facts
from memdir.cli.main import cli
from memdir.models import get_model
from memdir.store import spec
from memdir.stream import Turn, chunk_stream, load_turns

CONVERSATION = [
    Turn("S1T1", "Alice", "Hi Bob! I prefer coffee in the morning, it keeps me going.", "2023-05-01"),
    Turn("S1T2", "Bob", "Good to hear. I work as a carpenter in Portland these days.", "2023-05-01"),
    Turn("S1T3", "Alice", "I adopted a dog named Rex last week, a little terrier.", "2023-05-01"),
    Turn("S1T4", "Bob", "My sister Dana is visiting Lisbon in July for a conference.", "2023-05-01"),
    Turn("S2T1", "Alice", "Guess what, I now prefer tea over coffee. Green tea mostly.", "2023-06-10"),
    Turn("S2T2", "Bob", "I moved to Seattle for a new job at a boat yard.", "2023-06-10"),
    Turn("S2T3", "Alice", "Rex learned to fetch the newspaper, which is hilarious.", "2023-06-10"),
]


def _build(tmp_path: Path) -> tuple[object, RunRecord]:
    store = new_store(tmp_path / "mem")
    record = RunRecord(tmp_path / "calls.jsonl")
    model = get_model("offline")

    async def go() -> None:
        for chunk in chunk_stream(CONVERSATION, max_turns=4):
            out = await manage_chunk(model, store, chunk, record=record)
            assert out.baseline and out.model == "offline"

    asyncio.run(go())
    return store, record


def _line(store: object, path: str, n: int) -> str:
    return snapshot(store)[path].split("\n")[n - 1]  # type: ignore[arg-type]


def test_curator_keeps_every_fact_and_supersedes_by_key(tmp_path: Path) -> None:
    store, record = _build(tmp_path)
    files = snapshot(store)
    assert set(files) == {"/memories/MEMORY.md", "/memories/people/MEMORY.md", "/memories/people/alice.md",
                          "/memories/people/bob.md"}  # fmt: skip
    assert spec.validate(store).valid  # type: ignore[arg-type]
    text = "\n".join(files.values())
    for turn in CONVERSATION:  # every turn is kept, verbatim, with its locator
        assert f"{turn.speaker}: {turn.text} [{turn.locator}]" in text
    alice = files["/memories/people/alice.md"]
    live = [ln for ln in alice.splitlines() if ln.startswith("- alice | preference:")]
    assert live == ["- alice | preference: tea (since 2023-06-10) [S2T1]"]
    assert "- ~~alice | preference: coffee in the morning~~ (2023-05-01 until 2023-06-10) [S1T1]" in alice
    assert alice.index("preference: tea") < alice.index("~~alice | preference: coffee")  # live line above
    bob = files["/memories/people/bob.md"]
    assert "- bob | home: Seattle (since 2023-06-10) [S2T2]" in bob
    assert "- bob | job: carpenter in Portland these days (since 2023-05-01) [S1T2]" in bob
    assert "### 2023-06-10" in alice and "## Pets" in alice
    steps = [e for e in record.entries if e["kind"] == "offline_step"]
    assert len(steps) == 2 and all(e["baseline"] is True and e["model"] == "offline" for e in steps)
    assert all(e["harness"]["calls"] > 0 and e["harness"]["bytes_read"] > 0 for e in steps)
    assert {c["name"] for e in steps for c in e["calls"]} <= {"view", "create", "insert", "str_replace"}


def test_searcher_answers_the_current_value_and_cites_its_line(tmp_path: Path) -> None:
    store, _ = _build(tmp_path)
    record = RunRecord(None)
    out = asyncio.run(
        search(get_model("offline"), store, "What does Alice prefer to drink now?", record=record)
    )
    assert out.baseline and out.answer == "tea"
    path, n = out.citations[0].rsplit(":", 1)
    assert _line(store, path, int(n)) == "- alice | preference: tea (since 2023-06-10) [S2T1]"
    past = asyncio.run(search(get_model("offline"), store, "What did Alice prefer before?"))
    p2, n2 = past.citations[0].rsplit(":", 1)
    assert "~~alice | preference: coffee" in _line(store, p2, int(n2))
    assert past.answer == "coffee in the morning (2023-05-01 until 2023-06-10)"
    dog = asyncio.run(search(get_model("offline"), store, "What is the name of Alice's dog?"))
    assert "Rex" in dog.answer and dog.citations
    when = asyncio.run(search(get_model("offline"), store, "When did Rex learn to fetch the newspaper?"))
    assert when.answer == "10 June 2023"
    step = record.entries[-1]
    assert step["baseline"] is True and step["answer"] == "tea" and step["citations"] == out.citations
    assert [c["name"] for c in step["calls"]][:2] == ["grep", "toc"] and "section_read" in str(step["calls"])


def test_option_chooser_picks_the_supported_option(tmp_path: Path) -> None:
    store, _ = _build(tmp_path)
    model = get_model("offline")
    out = asyncio.run(
        choose_option(model, store, "What does Alice drink these days?", ["coffee", "tea", "orange juice"])
    )
    assert out.extra["choice"] == 1 and out.answer == "tea" and out.baseline
    city = asyncio.run(
        choose_option(model, store, "Where does Bob live now?", ["Portland", "Lisbon", "Seattle"])
    )
    assert city.answer == "Seattle"


def test_keyed_fact_patterns() -> None:
    assert keyed_facts("I now prefer tea over coffee.") == [("preference", "tea")]
    assert keyed_facts("I live in Boston, near the river.") == [("home", "Boston")]
    assert keyed_facts("I'm working as a nurse at St. Mary's") == [("job", "nurse at St")]
    assert keyed_facts("My favorite movie is Alien and I love it") == [
        ("favorite movie", "Alien"),
        ("preference", "it"),
    ]
    assert keyed_facts("We went hiking.") == []


def test_chunking_rule() -> None:
    turns = [Turn(f"S1T{i}", "A", "x" * 10) for i in range(1, 20)]
    assert [len(c.turns) for c in chunk_stream(turns)] == [8, 8, 3]
    long = [Turn("S1T1", "A", "y" * 1000), Turn("S1T2", "B", "y" * 1999), Turn("S1T3", "A", "y" * 2),
            Turn("S1T4", "B", "z")]  # fmt: skip
    chunks = chunk_stream(long)
    # closed before a turn would take the chunk past 3,000 characters (see memdir.stream)
    assert [c.locators for c in chunks] == [["S1T1", "S1T2"], ["S1T3", "S1T4"]] and chunks[0].chars == 2999
    assert [c.id for c in chunks] == [1, 2]


def test_answer_parser_tolerates_variations() -> None:
    fenced = parse_answer('Found it.\n```json\n{"answer": "tea", "citations": ["/memories/a.md:3-4"]}\n```')
    assert (fenced.answer, fenced.citations, fenced.parsed) == ("tea", ["/memories/a.md:3-4"], "json")
    single = parse_answer("{'Answer': 'tea', 'citations': '/memories/a.md:3; /memories/b.md > # B > ## C'}")
    assert single.answer == "tea" and single.citations == ["/memories/a.md:3", "/memories/b.md > # B > ## C"]
    lines = parse_answer("**Answer:** tea\nCitations: /memories/a.md:3-4, /memories/b.md > # X > ## Y")
    assert lines.parsed == "lines" and lines.citations == [
        "/memories/a.md:3-4",
        "/memories/b.md > # X > ## Y",
    ]
    loose = parse_answer("She drinks tea (see /memories/people/alice.md:7).")
    assert loose.parsed == "fallback" and loose.citations == ["/memories/people/alice.md:7"]
    nested = parse_answer('{"answer": "tea", "citations": [{"path": "/memories/a.md", "lines": "3-4"}]}')
    assert nested.citations == ["/memories/a.md:3-4"]


def test_ingest_and_ask_commands(tmp_path: Path) -> None:
    stream = tmp_path / "turns.jsonl"
    stream.write_text("\n".join(json.dumps(t.__dict__) for t in CONVERSATION) + "\n")
    assert load_turns(stream) == CONVERSATION
    root = tmp_path / "mem"
    runner = CliRunner()
    res = runner.invoke(cli, ["ingest", "--root", str(root), "--model", "offline", str(stream)])
    assert res.exit_code == 0, res.output
    assert "7 turn(s) in 2 chunk(s)" in res.output and "offline" in res.output
    log = root / ".memdir" / "calls.jsonl"
    assert log.exists() and json.loads(log.read_text().splitlines()[0])["command"] == "ingest"
    res = runner.invoke(
        cli, ["ask", "--root", str(root), "--model", "offline", "--json", "Where does Bob live now?"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["answer"] == "Seattle" and out["baseline"] is True and out["model"] == "offline"
    assert re.fullmatch(r"/memories/people/bob\.md:\d+", out["citations"][0])
    plain = runner.invoke(cli, ["ask", "--root", str(root), "--model", "offline", "What does Alice prefer?"])
    assert (
        "answer (offline baseline): tea" in plain.output
        and "cite: /memories/people/alice.md:" in plain.output
    )
    script = tmp_path / "script.json"
    replies = [
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "Rex"}}]},
        '{"answer": "Rex", "citations": ["/memories/people/alice.md:9"]}',
    ]
    script.write_text(json.dumps(replies))
    res = runner.invoke(
        cli, ["ask", "--root", str(root), "--model", "scripted", "--script", str(script), "--json", "Dog?"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["answer"] == "Rex" and json.loads(res.output)["rounds"] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"speaker": "A"}\n')
    res = runner.invoke(cli, ["ingest", "--root", str(root), "--model", "offline", str(bad)])
    assert res.exit_code != 0 and "locator" in res.output


def test_the_offline_model_plays_only_the_roles_with_a_baseline(tmp_path: Path) -> None:
    """One place chooses who plays a role (agents/baselines.py): the baselines for management,
    search, choice and closed-book; a stated refusal for every other role."""
    import pytest

    from memdir.agents import closed_book, folder, reorganize
    from memdir.agents.baselines import NO_BASELINE, has_baseline
    from memdir.errors import MemdirError

    offline = get_model("offline")
    out = asyncio.run(closed_book(offline, "What does Alice eat?"))
    assert (out.answer, out.baseline, out.model) == ("unknown", True, "offline")
    assert all(has_baseline(r) for r in ("management", "search", "choice", "closed_book"))
    store = new_store(tmp_path / "m")
    with pytest.raises(MemdirError, match=NO_BASELINE["folder"]):
        asyncio.run(folder(offline, store))
    with pytest.raises(MemdirError, match=NO_BASELINE["reorganize"]):
        asyncio.run(reorganize(offline, store))
    assert not any(has_baseline(r) for r in NO_BASELINE)
