"""Superseded values never come back first (issue 45, item 4): a move is an update of the
speaker's home offline; `ask` answers the live value and still the previous one when asked;
search (`memdir search`, `Memory.search`, the MCP search tools) ranks a key's live line above
its struck-through past lines whatever BM25 says, and marks past lines in the hit; the
stale-first rate counts the keys whose first hit is a past value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from memdir.agents.offline import keyed_facts
from memdir.api.memory import Memory
from memdir.cli.main import cli
from memdir.conventions import parse_keyed
from memdir.mcp.server import build_server
from memdir.search.embed import embedder_missing
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store
from memdir_study.eval.stale_first import stale_first

LISBON_DAY, PORTO_DAY = "2024-03-01", "2024-04-05"


def _ingest(runner: CliRunner, root: Path, path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps(records), encoding="utf-8")
    res = runner.invoke(cli, ["ingest", str(root), "--model", "offline", str(path)])
    assert res.exit_code == 0, res.output


def _ask(runner: CliRunner, root: Path, question: str) -> dict[str, Any]:
    res = runner.invoke(cli, ["ask", str(root), "--model", "offline", "--json", question])
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.output)
    return out


def _cited_line(root: Path, citation: str) -> str:
    path, _, line = citation.rpartition(":")
    return (root / path.removeprefix("/memories/")).read_text(encoding="utf-8").split("\n")[int(line) - 1]


@pytest.fixture
def moved(tmp_path: Path) -> Path:
    """Ana's two moves, a month apart, ingested offline from two chat logs."""
    root = tmp_path / "mem"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(root)]).exit_code == 0
    first = [
        {"speaker": "Ana", "text": "I moved to Lisbon last week.", "date": LISBON_DAY},
        {"speaker": "Bo", "text": "How do you like it there?", "date": LISBON_DAY},
    ]
    _ingest(runner, root, tmp_path / "march.json", first)
    later = [
        {"speaker": "Ana", "text": "We moved to Porto this month.", "date": PORTO_DAY},
        {"speaker": "Bo", "text": "Another move already!", "date": PORTO_DAY},
    ]
    _ingest(runner, root, tmp_path / "april.json", later)
    return root


# -- offline: a move is an update -----------------------------------------------------------------


def test_a_later_move_supersedes_the_home_and_ask_answers_now_and_before(moved: Path) -> None:
    facts = (moved / "people" / "ana" / "facts.md").read_text(encoding="utf-8")
    keyed = [k for n, ln in enumerate(facts.split("\n")) if (k := parse_keyed("f", n, ln))]
    home = [k for k in keyed if k.attribute == "home"]
    assert [(k.value, k.live) for k in home] == [("Porto", True), ("Lisbon", False)]
    assert (home[1].since, home[1].until) == (LISBON_DAY, PORTO_DAY)  # struck through with its dates
    runner = CliRunner()
    now = _ask(runner, moved, "Where does Ana live now?")
    assert now["answer"] == "Porto"
    live = parse_keyed("f", 0, _cited_line(moved, now["citations"][0]))
    assert live is not None and live.live and live.value == "Porto"  # the live keyed line
    for question in (
        "Where did Ana live before Porto?",
        "Where did Ana live previously?",
        "Where did Ana use to live?",
    ):
        before = _ask(runner, moved, question)
        assert "Lisbon" in before["answer"] and "Porto" not in before["answer"], question
        past = parse_keyed("f", 0, _cited_line(moved, before["citations"][0]))
        assert past is not None and not past.live and past.value == "Lisbon", question


def test_moves_said_as_a_household_or_a_new_flat_update_the_speakers_home() -> None:
    for said in (
        "We moved to Porto this month.",
        "We've just moved to Porto!",
        "We're settling into the new flat in Porto.",
        "I relocated to Porto in May.",
        "We relocated to Porto last year.",
    ):
        assert ("home", "Porto") in keyed_facts(said), said
    for said in (
        "My sister moved to Rome.",  # the sister's home, not the speaker's
        "My parents moved to Rome last year.",
        "We didn't move to Porto.",
        "We never moved to Porto in the end.",
        "We haven't moved to Porto yet.",
        "Should we move to Porto?",
        "If we moved to Porto, we'd be near the sea.",
        "Did we move to Porto in May?",
    ):
        assert not [v for a, v in keyed_facts(said) if a == "home"], said


# -- search: the live line first, past lines marked -----------------------------------------------

HISTORY = """---
name: history
description: Ana's home history
---
# Moves
- ~~ana | home: Lisbon~~ (2024-03-01 until 2024-04-05) [S1T1]
"""
FACTS = """---
name: facts
description: Ana's keyed facts
---
# Ana
## Current
- ana | home: Porto (since 2024-04-05) [S2T1]
- ana | job: ceramicist at a small studio by the river (since 2024-01-10) [S1T4]
- ana | diet: vegetarian, mostly, with fish on Sundays (since 2023-11-02) [S1T6]
- ana | study: evening classes in Portuguese literature (since 2024-02-01) [S1T8]
- ana | preference: green tea over coffee in the mornings (since 2023-12-01) [S1T9]
"""


def _two_files(tmp_path: Path) -> Path:
    """Ana's live home in a long section of one file, her past home alone in a short one: BM25
    scores the past line's file and section higher for "ana home"."""
    root = tmp_path / "two"
    open_store(root, create=True, init=True)
    (root / "people").mkdir()
    (root / "people" / "history.md").write_text(HISTORY, encoding="utf-8")
    (root / "people" / "facts.md").write_text(FACTS, encoding="utf-8")
    return root


def test_memory_search_ranks_the_live_line_first_and_marks_the_past(tmp_path: Path) -> None:
    mem = Memory(_two_files(tmp_path))
    hits = mem.search("ana home", mode="bm25")
    assert hits[0].path == "/memories/people/facts.md" and not hits[0].superseded
    past = next(h for h in hits if h.path == "/memories/people/history.md")
    assert past.superseded and past.past_lines == (6,)
    assert hits[0].past_lines == ()


def test_cli_search_ranks_the_live_file_first_and_marks_the_past(tmp_path: Path) -> None:
    root = _two_files(tmp_path)
    runner = CliRunner()
    for mode in ([], ["--mode", "bm25"]):
        res = runner.invoke(cli, ["search", str(root), "ana home", "--json", *mode])
        assert res.exit_code == 0, res.output
        rows = json.loads(res.output)["results"]
        assert rows[0]["path"] == "/memories/people/facts.md" and rows[0]["superseded"] is False, mode
        past = next(r for r in rows if r["path"] == "/memories/people/history.md")
        assert past["superseded"] is True and past["past_lines"] == [6], mode
        plain = runner.invoke(cli, ["search", str(root), "ana home", *mode])
        first, _, rest = plain.output.partition("history.md")
        assert "facts.md" in first and "(superseded)" in rest and "(superseded)" not in first, mode


def test_a_past_line_shown_brings_its_live_line_above_it(tmp_path: Path) -> None:
    """One section, the past value written above the live one (an agent's layout): a query that
    matches only the past value shows the live line of its key first."""
    root = tmp_path / "mem"
    open_store(root, create=True, init=True)
    (root / "ana.md").write_text(
        "---\nname: ana\ndescription: Ana\n---\n# Ana\n## home\n"
        "- ~~ana | home: Lisbon~~ (2024-03-01 until 2024-04-05) [S1T1]\n"
        "- ana | home: Porto (since 2024-04-05) [S2T1]\n",
        encoding="utf-8",
    )
    (hit,) = Memory(root).search("lisbon", mode="bm25")
    assert [n for n, _ in hit.snippet] == [8, 7] and hit.past_lines == (7,) and not hit.superseded
    res = CliRunner().invoke(cli, ["search", str(root), "lisbon"])
    assert res.exit_code == 0, res.output
    assert res.output.index("Porto") < res.output.index("Lisbon")
    assert "Lisbon~~ (2024-03-01 until 2024-04-05) [S1T1]  (superseded)" in res.output


async def test_mcp_bm25_full_search_ranks_the_live_file_first(tmp_path: Path) -> None:
    harness = Harness(open_store(_two_files(tmp_path)), "search-bm25")
    async with Client(build_server(harness)) as client:  # type: ignore[arg-type]
        r = await client.call_tool("bm25_full_search", {"query": "ana home"})
    assert not r.is_error
    results = r.structured_content["results"]
    assert results[0]["path"] == "/memories/people/facts.md" and results[0]["superseded"] is False
    past = next(x for x in results if x["path"] == "/memories/people/history.md")
    assert past["superseded"] is True and [ln["past"] for ln in past["lines"]] == [True]
    text = "".join(c.text for c in r.content)
    assert text.index("facts.md") < text.index("history.md") and "(superseded)" in text


@pytest.mark.skipif(embedder_missing() is not None, reason=str(embedder_missing()))
async def test_mcp_section_search_ranks_the_live_section_first(tmp_path: Path) -> None:
    harness = Harness(open_store(_two_files(tmp_path)), "search-hybrid")
    async with Client(build_server(harness)) as client:  # type: ignore[arg-type]
        for mode in ("bm25", "hybrid"):
            r = await client.call_tool("section_search", {"query": "ana home", "mode": mode})
            assert not r.is_error
            results = r.structured_content["results"]
            assert results[0]["path"] == "/memories/people/facts.md", mode
            past = next(x for x in results if x["path"] == "/memories/people/history.md")
            assert past["superseded"] is True and past["lines"][0]["past"] is True, mode


# -- the stale-first rate -----------------------------------------------------------------------------


def test_stale_first_counts_keys_whose_first_hit_is_a_past_value(tmp_path: Path, moved: Path) -> None:
    keys = [("Ana", "home")]
    on_curated = stale_first(open_store(moved), keys)
    assert (on_curated.keys, on_curated.stale, on_curated.rate) == (1, 0, 0.0)
    assert on_curated.live == 1 and on_curated.rows[0].value == "Porto"
    on_two = stale_first(open_store(_two_files(tmp_path)), [*keys, ("ana", "pet")])
    assert (on_two.keys, on_two.stale, on_two.live, on_two.missed, on_two.rate) == (2, 0, 1, 1, 0.0)
    (tmp_path / "two" / "people" / "facts.md").unlink()  # the past value alone: it comes first
    only_past = stale_first(open_store(tmp_path / "two"), keys)
    assert (only_past.stale, only_past.rate, only_past.rows[0].value) == (1, 1.0, "Lisbon")
    with pytest.raises(ValueError, match="no keys"):
        stale_first(open_store(moved), [])
