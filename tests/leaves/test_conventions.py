"""The one vocabulary (`memdir.conventions`): locators, fact identity and citations, and that the
parts that read them share the one definition."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from memdir import conventions as cv
from memdir.store import spec
from memdir.stream import Turn, turn_from_dict
from memdir.tools.wiring import open_store
from memdir_study.bench.types import Question
from memdir_study.eval.citations import resolve
from memdir_study.eval.runner import evidence_hit
from memdir_study.skills.serving import cited_files

SRC = Path(__file__).resolve().parents[2] / "src" / "memdir"


def test_the_module_is_a_leaf() -> None:
    """It imports nothing from memdir (errors at most), so every layer may import it."""
    tree = ast.parse((SRC / "conventions.py").read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [m for m in names if m.startswith("memdir") and m != "memdir.errors"]


def test_no_other_module_spells_a_locator() -> None:
    """A locator pattern written anywhere else is a second definition (as `[SB]\\d+[TM]\\d+` in
    the runner was, without episodes)."""
    spelled = re.compile(r"[SBE]\\d\+|\\d\+[TM]\\d|\[SBE?\]|\[SB\]")
    found = [
        f"{p.relative_to(SRC)}:{i}"
        for p in sorted(SRC.rglob("*.py"))
        if p.name != "conventions.py"
        for i, line in enumerate(p.read_text().split("\n"), start=1)
        if spelled.search(line)
    ]
    assert not found, found


@pytest.mark.parametrize("loc", ["S6T5", "B3M12", "E12", "S10T100"])
def test_locators_of_every_kind(loc: str) -> None:
    assert cv.locators(f"- a fact [{loc}]") == (loc,)
    assert cv.BARE.findall(f"cited: {loc}, see") == [loc]


@pytest.mark.parametrize("text", ["[S6M5]", "[B3T2]", "[T1]", "[S6]", "[s6t5]", "[S6T5,]", "S6T5"])
def test_not_locators(text: str) -> None:
    assert cv.locators(f"- words {text}") == ()


def test_locator_groups_are_a_set() -> None:
    assert cv.locators("x [S7T2, S6T5] y [E3] [S6T5]") == ("E3", "S6T5", "S7T2")


def test_turn_locators_and_the_stream() -> None:
    assert cv.turn_numbers("S6T5") == (6, 5) and cv.turn_numbers("B3M12") == (3, 12)
    assert cv.turn_numbers("E4") is None and cv.turn_numbers("S6M5") is None
    assert Turn("B3M12", "u", "hi").session == 3
    with pytest.raises(ValueError, match="must be S<session>T<turn>"):
        turn_from_dict({"locator": "S6M5", "speaker": "a", "text": "b"}, "line 1")


def test_fact_identity_ignores_presentation_and_keeps_content() -> None:
    base = cv.fact_identity("- Alice adopted a beagle [S6T5, S7T2]")
    assert base == (("S6T5", "S7T2"), "alice adopted a beagle")
    for same in (
        "* **Alice** adopted  a beagle [S7T2,S6T5]",
        "## ALICE ADOPTED A BEAGLE [S6T5] [S7T2]",
        "> 1. Alice adopted a `beagle` [S6T5, S7T2]",
        "- [Alice](/memories/people/alice.md) adopted a beagle [S6T5, S7T2]",
    ):
        assert cv.fact_identity(same) == base, same
    for other in ("- Alice adopted a poodle [S6T5, S7T2]", "- Alice adopted a beagle [S6T5]"):
        assert cv.fact_identity(other) != base, other
    assert cv.fact_identity("- Alice adopted a beagle") is None


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("/memories/a.md", cv.CitationTarget("/memories/a.md")),
        ("/memories/a.md:3", cv.CitationTarget("/memories/a.md", 3, 3)),
        ("/memories/a.md:3-5", cv.CitationTarget("/memories/a.md", 3, 5)),
        ("/memories/a.md#L3-L5", cv.CitationTarget("/memories/a.md", 3, 5)),
        ("a.md#L3", cv.CitationTarget("/memories/a.md", 3, 3)),
        ("`/memories/a.md:3`", cv.CitationTarget("/memories/a.md", 3, 3)),
        ("/memories/a.md > # A > ## B", cv.CitationTarget("/memories/a.md", section="# A > ## B")),
        ("/memories/a.md># A", cv.CitationTarget("/memories/a.md", section="# A")),
        ("/memories/people", cv.CitationTarget("/memories/people")),
        ("/memories/a.md:x", cv.CitationTarget("/memories/a.md:x")),
    ],
)
def test_citation_grammar(text: str, want: cv.CitationTarget) -> None:
    assert cv.parse_citation(text) == want


def test_citations_found_in_prose() -> None:
    text = "See /memories/a.md:3-5 and /memories/b.md#L2, also /memories/c.md > # C > ## D\nthat is all."
    assert cv.find_citations(text) == [
        "/memories/a.md:3-5",
        "/memories/b.md#L2",
        "/memories/c.md > # C > ## D",
    ]


ALICE = "---\nname: alice\ndescription: Alice\n---\n# Alice\n## Diet\n- vegan [S6T5]\n## Pets\n- a cat [E2]\n"


@pytest.mark.parametrize(
    "citation",
    [
        "/memories/people/alice.md",
        "people/alice.md:7",
        "`/memories/people/alice.md#L6-L7`",
        "/memories/people/alice.md># Alice > ## Diet",
    ],
)
def test_serving_and_resolving_read_one_grammar(tmp_path: Path, citation: str) -> None:
    """The skill setting serves exactly the file the evaluation resolves a citation to."""
    store = open_store(tmp_path / "m", create=True, index=False, journal=False)
    spec.init(store)
    with store.step("test"):
        store.create("/memories/people/alice.md", ALICE)
    r = resolve(store, citation)
    assert r.ok and r.path == "/memories/people/alice.md"
    assert cited_files([citation], store, 5) == ["/memories/people/alice.md"]


def test_evidence_hits_count_episode_locators(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m", create=True, index=False, journal=False)
    spec.init(store)
    with store.step("test"):
        store.create("/memories/people/alice.md", ALICE)
    q = Question("q", "recall", "?", "a cat", evidence=("E2",))
    assert evidence_hit(store, ["/memories/people/alice.md > # Alice > ## Pets"], q) == 1.0
    assert evidence_hit(store, ["/memories/people/alice.md > # Alice > ## Diet"], q) == 0.0


def test_spoken_dates_write_valid_iso_days_only() -> None:
    assert cv.spoken_dates("on 2023-05-07, then 2023-13-01 and 12023-05-07 and 2023-05-07-2") == (
        "on 7 May 2023, then 2023-13-01 and 12023-05-07 and 2023-05-07-2"
    )
