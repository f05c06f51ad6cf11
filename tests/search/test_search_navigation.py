"""Search ranks content above navigation (issue 34, item 6): for "what does Alice eat" the four
index lines that name Alice outranked the diet fact. A folder index's sections come after every
content section in the one ranking every surface shares (`search/hybrid.search_sections`): the
`section_search` tool in each mode, `Memory.search` and the UI's search page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memdir.api.memory import Memory
from memdir.search.embed import embedder_missing
from memdir.ui.app import build_app
from memdir.ui.sources import Source, Sources

QUERY = "what does Alice eat"
FACT = "/memories/people/alice.md"
ROOT_INDEX = """---
description: Root index. Alice eats here; what Alice eats is under people.
---
# Memory

- people/: Alice, what Alice eats, Alice's diet and food; see /memories/people/MEMORY.md
"""
PEOPLE_INDEX = """---
description: People. Alice and what Alice eats.
---
# People

- [alice.md](alice.md): Alice: what Alice eats, Alice's food, Alice's diet
- Alice eats: see alice.md
- Ask about Alice eating: alice.md
"""
ALICE = """---
name: alice
description: Alice Park
---
# Alice

## Diet
- alice | diet: vegan, she eats no meat (since 2023-05-02) [S6T5]
"""
MODES = ["bm25"] + ([] if embedder_missing() else ["hybrid", "dense"])


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("nav") / "mem"
    where.mkdir()
    (where / "MEMORY.md").write_text(ROOT_INDEX)  # the user's own root index
    mem = Memory(where)
    for name, args in [
        ("create", {"path": "/memories/people/MEMORY.md", "file_text": PEOPLE_INDEX}),
        ("create", {"path": FACT, "file_text": ALICE}),
    ]:
        result = mem.call(name, args)
        assert not result.is_error, result.text
    return where


@pytest.mark.parametrize("mode", MODES)
def test_the_section_search_tool_ranks_the_fact_first_and_sets_indexes_apart(root: Path, mode: str) -> None:
    result = Memory(root).call("section_search", {"query": QUERY, "mode": mode}, profile="search-hybrid")
    assert not result.is_error, result.text
    assert result.data is not None
    hits = result.data["results"]
    assert hits[0]["path"] == FACT and not hits[0]["navigation"]
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    navigation = [h for h in hits if h["navigation"]]
    assert navigation and all(h["path"].endswith("/MEMORY.md") for h in navigation)
    assert hits.index(navigation[0]) == len(hits) - len(navigation)  # all after the content
    lines = result.text.splitlines()
    assert lines[1].startswith(f"1. {FACT} ")
    apart = lines.index("Folder indexes (MEMORY.md: navigation, ranked after the content above):")
    assert all("MEMORY.md" in ln for ln in lines[apart + 1 :] if re.match(r"\d+\. ", ln))


@pytest.mark.parametrize("mode", MODES)
def test_memory_search_puts_the_fact_first(root: Path, mode: str) -> None:
    hits = Memory(root).search(QUERY, k=3, mode=mode)  # type: ignore[arg-type]
    assert hits[0].path == FACT and not hits[0].navigation
    assert [h.navigation for h in hits] == sorted(h.navigation for h in hits)


def test_the_ui_search_page_shows_the_fact_first(root: Path, tmp_path: Path) -> None:
    app = build_app(Sources([Source("store", "mem", root)]), runs=tmp_path / "runs", scratch=tmp_path / "s")
    html = (
        TestClient(app, base_url="http://127.0.0.1")
        .get("/s/store/search", params={"q": QUERY, "mode": "bm25"})
        .text
    )
    shown = re.findall(r'<li><a href="[^"]*">([^<]+)</a>', html)
    assert shown[0] == FACT, shown
    assert "folder index: navigation" in html
