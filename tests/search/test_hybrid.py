"""Search by section (BM25, dense, hybrid): units, the `search` tool, freshness, MCP and CLI.

The dense parts use the real embedding model; they skip, saying how to install it, where it is
absent (`make embed-model`)."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from tests.tools.test_search_tools import STREAM, note

from memdir.agents.offline.searcher import LexicalSearcher
from memdir.cli.main import cli
from memdir.search.chunks import build_chunk_store
from memdir.search.embed import configured, embedder_missing
from memdir.search.hybrid import search_sections
from memdir.search.index import SearchIndex
from memdir.search.units import MAX_UNIT_CHARS, split_units
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness, profile_specs
from memdir.tools.wiring import open_store
from memdir_study.eval.runner import RunConfig, run_eval
from memdir_study.skills.retrieve import retrieval

needs_embedder = pytest.mark.skipif(embedder_missing() is not None, reason=str(embedder_missing()))


ALICE = note(
    "alice",
    "Alice Park, Calvin's sister",
    "# Alice\nAlice adopted a beagle puppy last spring [S2T4].\n"
    "## Work\nAlice is a nurse at St. Mary's [S3T1].",
)
BOB = note("bob", "Bob, a colleague", "# Bob\n## Work\nBob bakes bread at the corner bakery [S1T2].")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "mem", create=True)
    h = Harness(s, "manage")
    h.call_or_raise("create", {"path": "/memories/people/alice.md", "file_text": ALICE})
    h.call_or_raise("create", {"path": "/memories/people/bob.md", "file_text": BOB})
    return s


def top(s: Store, query: str, mode: str, scope: str = "/memories") -> list[tuple[str, str]]:
    return [(h.path, h.heading) for h in search_sections(SearchIndex.for_store(s), query, mode, scope, 5)]


def test_units_follow_headings_with_line_ranges() -> None:
    units = split_units("/memories/people/alice.md", ALICE)
    assert [(u.heading, u.start, u.end) for u in units] == [("# Alice", 5, 6), ("# Alice > ## Work", 7, 8)]
    assert units[0].context == "alice: Alice Park, Calvin's sister"
    (window,) = units[0].embed_texts
    assert "beagle puppy" in window and window.startswith("alice\n# Alice\n")
    text = "preamble line\n# Head\nbody\n"
    assert [(u.heading, u.start, u.end) for u in split_units("/memories/x.md", text)] == [
        ("", 1, 1),
        ("# Head", 2, 3),
    ]


def test_an_over_long_section_is_cut_into_windows_at_line_boundaries() -> None:
    lines = [f"line {i}: " + "word " * 40 for i in range(60)]
    text = note("long", "a long one", "# Long\n" + "\n".join(lines))
    units = split_units("/memories/long.md", text)
    assert len(units) > 1
    assert all(len(u.text) <= MAX_UNIT_CHARS for u in units)
    assert all(u.heading == "# Long" for u in units)
    body = text.split("\n")
    assert units[0].start == 5 and units[-1].end == len(body) - 1
    for a, b in itertools.pairwise(units):
        assert b.start == a.end + 1  # every line in exactly one window
    for u in units:
        assert u.text == "\n".join(body[u.start - 1 : u.end])


def test_bm25_by_section_ranks_the_section_not_the_file(store: Store) -> None:
    assert top(store, "nurse hospital", "bm25")[0] == ("/memories/people/alice.md", "# Alice > ## Work")
    assert top(store, "bread", "bm25", "/memories/people/alice.md") == []


@needs_embedder
@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_paraphrase_is_found_by_meaning(store: Store, mode: str) -> None:
    # no word of the question but "Alice" is in the answer's line; "pet" is not in the file
    assert "pet" not in ALICE.lower()
    assert top(store, "what pet does Alice have", mode)[0] == ("/memories/people/alice.md", "# Alice")


@needs_embedder
def test_the_section_search_tool_shows_path_heading_lines_snippet_and_score(store: Store) -> None:
    h = Harness(store, "search-hybrid")
    res = h.call("section_search", {"query": "what pet does Alice have", "top_k": 2})
    assert not res.is_error, res.text
    first = res.text.split("\n")[1:3]
    shape = (
        r"1\. /memories/people/alice\.md lines 5-6 \[# Alice\] \(score (\d+\.\d{4}); (bm25 #\d+, )?dense #1\)"
    )
    m = re.fullmatch(shape, first[0])
    assert m, res.text
    assert first[1] == "   6: Alice adopted a beagle puppy last spring [S2T4]."
    assert res.text.startswith("2 section(s) under /memories for 'what pet does Alice have' (hybrid)")
    assert h.meter.bytes_read == 0  # snippets only: nothing counted as read
    view = h.call("view", {"path": "/memories/people/alice.md", "start_line": 5, "end_line": 6}).text
    assert "adopted a beagle puppy" in view


def test_section_search_tool_errors_say_what_to_do(store: Store) -> None:
    h = Harness(store, "manage-hybrid") if embedder_missing() is None else None
    if h is None:
        with pytest.raises(Exception, match="make embed-model"):
            profile_specs("search-hybrid")
        return
    assert (
        "mode must be one of bm25, dense, hybrid"
        in h.call("section_search", {"query": "x", "mode": "fuzzy"}).text
    )
    assert "top_k must be at least 1" in h.call("section_search", {"query": "x", "top_k": 0}).text
    assert "does not exist" in h.call("section_search", {"query": "x", "path": "/memories/nope"}).text
    assert "no searchable words" in h.call("section_search", {"query": "   "}).text


@pytest.mark.parametrize("watch", ["1", "0"], ids=["notices", "walk"])
def test_an_edit_outside_the_tools_is_seen_by_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watch: str
) -> None:
    monkeypatch.setenv("MEMDIR_WATCH", watch)
    root = tmp_path / "mem"
    root.mkdir()
    (root / "a.md").write_text(note("a", "a note", "# A\nthe kettle is blue"))
    s = Store(root)
    index = SearchIndex.for_store(s)
    try:
        assert top(s, "kettle", "bm25") == [("/memories/a.md", "# A")]
        assert (index._watcher is not None) is (watch == "1" and sys.platform == "linux")
        # at once, no sleep: an edit, a new file in a new folder, a removal
        (root / "a.md").write_text(note("a", "a note", "# A\nthe teapot is green"))
        (root / "deep" / "er").mkdir(parents=True)
        (root / "deep" / "er" / "b.md").write_text(note("b", "b note", "# B\nthe kettle went missing"))
        assert top(s, "teapot", "bm25") == [("/memories/a.md", "# A")]
        assert top(s, "kettle", "bm25") == [("/memories/deep/er/b.md", "# B")]
        shutil.rmtree(root / "deep")
        os.unlink(root / "a.md")
        assert top(s, "kettle teapot", "bm25") == []
        assert index.search("kettle teapot") == []
    finally:
        index.close()


def test_freshness_costs_no_walk_when_nothing_changed(tmp_path: Path) -> None:
    if sys.platform != "linux":
        pytest.skip("change notices are Linux's inotify")
    root = tmp_path / "mem"
    root.mkdir()
    for i in range(200):
        (root / f"n{i}.md").write_text(note(f"n{i}", "a note", f"# N\nnote number {i}"))
    index = SearchIndex.for_store(Store(root))
    try:
        first = index.sync()
        assert (first.files, first.walked) == (200, True)  # the first sync of a process walks
        again = index.sync()
        assert (again.added, again.modified, again.removed, again.walked) == (0, 0, 0, False)
        (root / "n7.md").write_text(note("n7", "a note", "# N\nchanged"))
        changed = index.sync()
        assert (changed.modified, changed.files, changed.walked) == (1, 200, False)
        (root / "sub").mkdir()
        (root / "sub" / "m.md").write_text(note("m", "m note", "# M\nnew"))
        added = index.sync()
        assert (added.added, added.files, added.walked) == (1, 201, False)
    finally:
        index.close()


def test_tool_writes_update_units_and_old_text_is_gone(store: Store) -> None:
    index = SearchIndex.for_store(store)
    assert top(store, "bakery", "bm25")[0][0] == "/memories/people/bob.md"
    h = Harness(store, "manage")
    h.call_or_raise(
        "str_replace",
        {
            "path": "/memories/people/bob.md",
            "old_str": "bakes bread at the corner bakery",
            "new_str": "repairs bikes",
        },
    )
    assert top(store, "bakery bread", "bm25") == []
    assert top(store, "bikes", "bm25")[0] == ("/memories/people/bob.md", "# Bob > ## Work")
    h.call_or_raise("delete", {"path": "/memories/people/bob.md"})
    assert top(store, "bikes", "bm25") == []
    assert index.units is not None


def test_deleted_index_is_rebuilt_with_its_units(store: Store) -> None:
    assert top(store, "nurse", "bm25")
    shutil.rmtree(store.root / ".memdir" / "index")
    assert top(store, "nurse", "bm25")[0] == ("/memories/people/alice.md", "# Alice > ## Work")


@needs_embedder
def test_reindex_rebuilds_units_and_vectors(store: Store) -> None:
    assert top(store, "what pet does Alice have", "dense")
    out = CliRunner().invoke(cli, ["reindex", str(store.root)])
    assert out.exit_code == 0, out.output
    assert f"section index: with vectors ({configured()})" in out.output
    assert top(store, "what pet does Alice have", "dense")[0][0] == "/memories/people/alice.md"


@needs_embedder
def test_cli_search_by_section_as_json(store: Store) -> None:
    out = CliRunner().invoke(
        cli, ["search", str(store.root), "what pet does Alice have", "--mode", "hybrid", "--json"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    first = data["results"][0]
    assert (first["path"], first["heading"], first["lines"]) == (
        "/memories/people/alice.md",
        "# Alice",
        [5, 6],
    )
    assert first["snippet"] == [[6, "Alice adopted a beagle puppy last spring [S2T4]."]]
    assert set(first["ranks"]) <= {"bm25", "dense"} and first["ranks"]


def test_cli_file_search_is_unchanged_by_default(store: Store) -> None:
    out = CliRunner().invoke(cli, ["search", str(store.root), "nurse", "--json"])
    data = json.loads(out.output)
    assert [r["path"] for r in data["results"]] == ["/memories/people/alice.md"]
    assert "heading" not in data["results"][0]


@needs_embedder
async def test_mcp_serves_the_section_search_tool(store: Store) -> None:
    spec.init(store)  # serve serves a memory only
    env = dict(os.environ)
    env["PYTHONPATH"] = (
        str(Path(__file__).resolve().parents[2] / "src") + os.pathsep + env.get("PYTHONPATH", "")
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve", str(store.root), "--profile", "search-hybrid"],
        env=env,
    )
    async with Client(params) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["view", "grep", "toc", "section_read", "section_search"]
        r = await client.call_tool("section_search", {"query": "what pet does Alice have", "top_k": 1})
        body = "".join(c.text for c in r.content)
        assert not r.is_error and "/memories/people/alice.md lines 5-6 [# Alice]" in body


@needs_embedder
def test_hybrid_chunk_retrieve_finds_a_paraphrased_chunk_in_full(tmp_path: Path) -> None:
    s = build_chunk_store(
        open_store(tmp_path / "chunks", create=True), [STREAM[0:3], STREAM[3:6], STREAM[6:8]]
    )
    h = Harness(s, "chunk-retrieval-hybrid")
    assert h.specs.keys() == {"hybrid_chunk_retrieve"}
    res = h.call("hybrid_chunk_retrieve", {"query": "What went wrong with Dave's vehicle?"})
    assert not res.is_error, res.text
    assert res.text.startswith("=== /memories/chunks/chunk-0002.md (rank 1")
    assert s.read_text("/memories/chunks/chunk-0002.md").rstrip() in res.text
    shown = re.findall(r"^=== (/memories/\S+) \(rank", res.text, flags=re.M)
    assert len(shown) == 3 and len(set(shown)) == 3  # three distinct chunks, never MEMORY.md
    assert res.meter.bytes_read == sum(len(s.read_text(p).encode()) for p in shown)


@needs_embedder
def test_the_offline_searcher_reads_the_sections_section_search_ranks(store: Store) -> None:
    h = Harness(store, "search-hybrid")
    searcher = LexicalSearcher(h)
    lines = searcher.retrieve("What kind of puppy did Alice adopt?")
    names = [c["name"] for c in searcher.calls]
    assert "section_search" in names
    views = [c["args"] for c in searcher.calls if c["name"] == "view" and "start_line" in c["args"]]
    assert {"path": "/memories/people/alice.md", "start_line": 5, "end_line": 6} in views
    assert lines and "beagle puppy" in lines[0].text


@needs_embedder
def test_eval_runs_the_hybrid_chunk_variant_offline(tmp_path: Path) -> None:
    config = RunConfig(
        benchmark="generated",
        conversations=["gen-s3-p2-n4-t3-a2-c1"],
        variants=["chunk-retrieval", "chunk-retrieval-hybrid"],
        builder_model="offline",
        search_model="offline",
    )
    summary = run_eval(config, tmp_path / "run", progress=False)
    rows = [json.loads(x) for x in (tmp_path / "run" / "answers.jsonl").read_text().splitlines()]
    hybrid = [r for r in rows if r["variant"] == "chunk-retrieval-hybrid"]
    assert hybrid and len(hybrid) == len([r for r in rows if r["variant"] == "chunk-retrieval"])
    assert all(r["search"]["tool_calls"] == 1 for r in hybrid) and any(r["citations"] for r in hybrid)
    calls = [json.loads(x) for x in (tmp_path / "run" / "calls.jsonl").read_text().splitlines()]
    used = {
        c["name"]
        for row in calls
        if row.get("variant") == "chunk-retrieval-hybrid"
        for c in row.get("calls", [])
    }
    assert used == {"hybrid_chunk_retrieve"}
    assert {c.variant for c in summary.cells} == {"chunk-retrieval", "chunk-retrieval-hybrid"}


@needs_embedder
def test_the_skill_settings_hybrid_retrieval_reads_whole_entries(tmp_path: Path) -> None:
    s = open_store(tmp_path / "skills", create=True)
    h = Harness(s, "manage")
    h.call_or_raise(
        "create",
        {
            "path": "/memories/procedures/heat.md",
            "file_text": note(
                "heat", "How to heat an object", "# Heat\n1. take it\n2. go to the microwave\n3. heat it"
            ),
        },
    )
    h.call_or_raise(
        "create",
        {
            "path": "/memories/procedures/clean.md",
            "file_text": note(
                "clean", "How to clean an object", "# Clean\n1. take it\n2. go to the sinkbasin\n3. clean it"
            ),
        },
    )
    chosen = retrieval("center-hybrid").fn(
        Harness(s, "search-hybrid"), "heat some egg and put it in the fridge", 5
    )
    assert [d.path for d in chosen] == ["/memories/procedures/heat.md"]
    assert chosen[0].text.rstrip() == s.read_text("/memories/procedures/heat.md").rstrip()  # read whole


@needs_embedder
def test_a_long_section_scores_by_its_best_window(tmp_path: Path) -> None:
    filler = [f"- meeting {i}: the quarterly budget review went on as planned [S1T{i}]" for i in range(40)]
    body = "# Log\n" + "\n".join([*filler[:20], "- Alice adopted a beagle puppy [S9T1]", *filler[20:]])
    s = open_store(tmp_path / "mem", create=True)
    Harness(s, "manage").call_or_raise(
        "create", {"path": "/memories/log.md", "file_text": note("log", "a log", body)}
    )
    other = note("minutes", "more minutes", "# Minutes\n" + "\n".join(filler))
    Harness(s, "manage").call_or_raise("create", {"path": "/memories/minutes.md", "file_text": other})
    (hit,) = search_sections(SearchIndex.for_store(s), "what pet does Alice have", "dense", top_k=1)
    text = s.read_text("/memories/log.md").split("\n")
    assert hit.path == "/memories/log.md" and "beagle puppy" in "\n".join(text[hit.start - 1 : hit.end])


@needs_embedder
def test_vectors_in_memory_follow_every_write_and_compaction(store: Store) -> None:
    index = SearchIndex.for_store(store)
    assert top(store, "what pet does Alice have", "dense")[0][0] == "/memories/people/alice.md"  # loaded
    h = Harness(store, "manage")
    for i in range(40):  # rewrites leave dead rows behind until the matrix is compacted
        body = f"# Bob\n## Work {i}\nBob repairs bicycles, job number {i}.\n## Home\nBob lives by the river."
        h.call_or_raise(
            "create", {"path": f"/memories/people/bob{i}.md", "file_text": note(f"bob{i}", "Bob", body)}
        )
        if i:
            h.call_or_raise("delete", {"path": f"/memories/people/bob{i - 1}.md"})
    assert index.units is not None and index.units._alive.size < 3 * 40  # compacted at least once
    h.call_or_raise(
        "str_replace",
        {
            "path": "/memories/people/alice.md",
            "old_str": "adopted a beagle puppy",
            "new_str": "bought a red kayak",
        },
    )
    hits = search_sections(index, "what boat does Alice own", "dense", top_k=10)
    kayak = [x for x in hits if x.path == "/memories/people/alice.md" and x.heading == "# Alice"]
    assert kayak and hits.index(kayak[0]) == 0
    paths = {x.path for x in search_sections(index, "bicycles", "dense", top_k=50)}
    assert paths & {f"/memories/people/bob{i}.md" for i in range(40)} == {"/memories/people/bob39.md"}
    fresh = SearchIndex(store)  # another reader loads the same vectors from the table
    try:
        again = search_sections(fresh, "what boat does Alice own", "dense", top_k=1)
        assert (again[0].path, again[0].heading) == ("/memories/people/alice.md", "# Alice")
    finally:
        fresh.close()


def test_text_before_the_first_heading_is_a_unit_too(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "a.md").write_text(note("a", "a note", "the kettle is in the preamble\n# H\nbody about tea"))
    s = Store(root)
    hits = search_sections(SearchIndex.for_store(s), "kettle", "bm25")
    assert [(h.heading, h.start, h.end) for h in hits] == [("", 5, 5)]
