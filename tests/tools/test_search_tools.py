"""bm25_full_search and bm25_chunk_retrieve through the harness, the chunk store, and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.search.chunks import build_chunk_store, render_chunk
from memdir.store import spec
from memdir.store.store import Store
from memdir.stream import Turn, chunk_stream
from memdir.tools.grep import MAX_REPLY_BYTES
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def note(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "mem", create=True)
    h = Harness(s, "manage-bm25")
    h.call(
        "create",
        {
            "path": "/memories/people/alice.md",
            "file_text": note(
                "alice",
                "Alice Park, Calvin's sister",
                "# Alice\n## Work\n- Nurse at St. Mary's [S2T7]\n## Hobbies\n- Keeps bees on the roof [S4T2]",
            ),
        },
    )
    h.call(
        "create",
        {
            "path": "/memories/people/calvin.md",
            "file_text": note("calvin", "Calvin, musician", "# Calvin\n- Plays bass in a jazz trio [S1T3]"),
        },
    )
    h.call("create", {"path": "/memories/trips/japan.md", "file_text": note("japan", "Trip to Japan",
           "# Japan\n- Calvin books a ryokan in Kyoto [S6T9]")})  # fmt: skip
    return s


def search(s: Store, **args: object) -> tuple[str, bool]:
    res = Harness(s, "search-bm25").call("bm25_full_search", dict(args))
    return res.text, res.is_error


def test_full_search_shows_path_description_and_matching_line(store: Store) -> None:
    text, err = search(store, query="who keeps bees")
    assert not err
    first = text.splitlines()[1]
    assert first.startswith("1. /memories/people/alice.md (score ")
    assert "[description: Alice Park, Calvin's sister]" in first
    assert "   9: - Keeps bees on the roof [S4T2]" in text  # line numbers as view numbers them
    assert "matched: Keeps, bees" in text
    assert "calvin.md" not in text


def test_full_search_carries_its_results_as_data(store: Store) -> None:
    res = Harness(store, "search-bm25").call("bm25_full_search", {"query": "who keeps bees"})
    assert res.data is not None and (res.data["query"], res.data["path"]) == ("who keeps bees", "/memories")
    (hit,) = res.data["results"]
    assert hit["rank"] == 1 and hit["path"] == "/memories/people/alice.md" and hit["score"] > 0
    assert hit["description"] == "Alice Park, Calvin's sister"
    assert hit["lines"] == [{"line": 9, "text": "- Keeps bees on the roof [S4T2]", "past": False}]
    assert hit["matched"] == ["Keeps", "bees"]
    assert f"(score {hit['score']:.2f})" in res.text  # the text shows the same figures
    empty = Harness(store, "search-bm25").call("bm25_full_search", {"query": "!!"}).data
    assert empty == {"query": "!!", "path": "/memories", "results": []}


def test_section_search_carries_heading_paths_and_line_ranges(store: Store) -> None:
    try:
        h = Harness(store, "search-hybrid")
    except MemdirError as exc:  # the embedding extra is not installed
        pytest.skip(str(exc))
    r = h.call("section_search", {"query": "bees roof", "mode": "bm25"})
    assert not r.is_error and r.data is not None, r.text
    assert (r.data["query"], r.data["mode"]) == ("bees roof", "bm25")
    first = r.data["results"][0]
    assert first["rank"] == 1 and first["path"] == "/memories/people/alice.md"
    assert first["heading_path"] == "# Alice > ## Hobbies" and (first["start_line"], first["end_line"]) == (
        8,
        9,
    )
    assert first["ranks"] == {"bm25": 1} and f"(score {first['score']:.4f}; bm25 #1)" in r.text
    assert {"line": 9, "text": "- Keeps bees on the roof [S4T2]", "past": False} in first["lines"]


def test_full_search_scope_and_top_k(store: Store) -> None:
    text, err = search(store, query="calvin", path="/memories/trips")
    assert not err and "japan.md" in text and "people/" not in text
    text, _ = search(store, query="calvin", top_k=1)
    assert text.startswith("1 file(s)") and "1. /memories/people/calvin.md" in text and "\n2. " not in text


def test_full_search_sees_edits_made_through_the_tools(store: Store) -> None:
    search(store, query="bass")
    manage = Harness(store, "manage-bm25")
    manage.call("rename", {"old_path": "/memories/people/calvin.md", "new_path": "/memories/band/calvin.md"})
    res = manage.call("bm25_full_search", {"query": "bass jazz"})
    assert "/memories/band/calvin.md" in res.text and "/memories/people/calvin.md" not in res.text
    manage.call("delete", {"path": "/memories/band"})
    text, err = search(store, query="bass jazz")
    assert not err and text.startswith("No files under /memories match")


def test_full_search_sees_plain_file_io(store: Store) -> None:
    search(store, query="x")
    with open(store.root / "trips" / "japan.md", "a", encoding="utf-8") as fh:
        fh.write("- Onsen at Hakone on day 3 [S6T12]\n")
    text, _ = search(store, query="hakone onsen")
    assert "1. /memories/trips/japan.md" in text and "Onsen at Hakone" in text


@pytest.mark.parametrize("query", ['"', "AND", "*", ":", "-", "a:b -c +d (e", "東京", "🐝", "", "x" * 10_000])
def test_hostile_queries_are_answers_not_errors(store: Store, query: str) -> None:
    text, err = search(store, query=query)
    assert not err, text
    assert len(text) < 1000


def test_full_search_rejects_bad_arguments_with_instructions(store: Store) -> None:
    text, err = search(store, query="bees", path="/memories/nowhere")
    assert err and "does not exist" in text
    text, err = search(store, query="bees", path="/memories/.memdir")
    assert err and "hidden" in text
    text, err = search(store, query="bees", top_k=0)
    assert err and "top_k" in text


def test_full_search_never_shows_the_index_itself(store: Store) -> None:
    search(store, query="bees")
    assert (store.root / ".memdir" / "index").is_dir()
    text, _ = search(store, query="manifest sqlite tantivy meta json")
    assert ".memdir" not in text
    res = Harness(store, "search").call("view", {"path": "/memories"})
    assert ".memdir" not in res.text and "index" not in res.text


def test_full_search_meters_snippets_as_returned_not_read(store: Store) -> None:
    h = Harness(store, "search-bm25")
    res = h.call("bm25_full_search", {"query": "bees calvin"})
    assert res.meter.bytes_read == 0
    assert res.meter.bytes_returned == len(res.text.encode("utf-8"))
    assert res.meter.files_touched == {"/memories/people/alice.md", "/memories/people/calvin.md",
                                       "/memories/trips/japan.md"}  # fmt: skip


STREAM = [
    Turn("S1T1", "Calvin", "I finally bought tickets for the Tokyo concert!", "8 May 2023"),
    Turn("S1T2", "Dave", "Nice, which band?", "8 May 2023"),
    Turn("S1T3", "Calvin", "The jazz trio from Osaka, front row.", "8 May 2023"),
    Turn("S2T1", "Dave", "My car broke down again on the highway.", "20 May 2023"),
    Turn("S2T2", "Calvin", "Take it to the garage near the lake.", "20 May 2023"),
    Turn("S2T3", "Dave", "Good idea, I will call the mechanic.", "20 May 2023"),
    Turn("S3T1", "Calvin", "Started pottery classes on Tuesdays.", "2 June 2023"),
    Turn("S3T2", "Dave", "Pottery sounds relaxing.", "2 June 2023"),
]


def chunk_store(tmp_path: Path) -> Store:
    return build_chunk_store(
        open_store(tmp_path / "chunks", create=True), [STREAM[0:3], STREAM[3:6], STREAM[6:8]]
    )


def test_chunk_files_carry_locators_inline_and_valid_frontmatter(tmp_path: Path) -> None:
    s = chunk_store(tmp_path)
    text = s.read_text("/memories/chunks/chunk-0002.md")
    assert "[S2T1] Dave: My car broke down again on the highway." in text
    assert "## 20 May 2023" in text
    assert "description: 'Conversation chunk 2 of 3: turns S2T1-S2T3 (20 May 2023), Dave and Calvin'" in text
    assert spec.validate(s).valid, spec.validate(s).violations


def test_chunk_retrieve_returns_top_three_chunks_in_full(tmp_path: Path) -> None:
    s = chunk_store(tmp_path)
    h = Harness(s, "chunk-retrieval")
    res = h.call("bm25_chunk_retrieve", {"query": "where should Dave take his broken car?"})
    assert not res.is_error
    blocks = res.text.split("\n\n=== ")
    assert blocks[0].startswith("=== /memories/chunks/chunk-0002.md (rank 1")
    assert s.read_text("/memories/chunks/chunk-0002.md").rstrip() in res.text
    assert len(blocks) <= 3 and "MEMORY.md" not in res.text
    shown = re.findall(r"^=== (/memories/\S+) \(rank", res.text, flags=re.M)
    assert len(shown) == len(blocks) and shown[0] == "/memories/chunks/chunk-0002.md"
    assert res.meter.bytes_read == sum(len(s.read_text(p).encode()) for p in shown)
    assert h.specs.keys() == {"bm25_chunk_retrieve"}  # the only way in


def test_chunk_retrieve_on_a_store_without_chunks_says_so(store: Store) -> None:
    res = Harness(store, "chunk-retrieval").call("bm25_chunk_retrieve", {"query": "bees"})
    assert res.is_error and "not a chunk-retrieval store" in res.text


def test_chunk_retrieve_reply_is_capped_with_a_note(tmp_path: Path) -> None:
    """Chunk files written outside the tools may be any size: one query once returned 45 MB.
    The reply now stops at grep's cap, cut at a line, with a note saying what was cut."""
    s = chunk_store(tmp_path)
    line = "- Dave took the broken car to the garage in Tokyo [S9T1]\n"
    for n in (4, 5, 6):
        body = line * (400_000 // len(line))
        (s.root / f"chunks/chunk-000{n}.md").write_text(note(f"chunk-000{n}", "big", body))
    h = Harness(s, "chunk-retrieval")
    res = h.call("bm25_chunk_retrieve", {"query": "broken car garage Tokyo"})
    assert not res.is_error
    assert len(res.text.encode()) <= MAX_REPLY_BYTES + 1024  # the cap, plus the note
    assert "chunk cut" in res.text and "search with more specific keywords" in res.text
    first = re.search(r"^=== (/memories/\S+) \(rank 1", res.text, flags=re.M)
    assert first is not None
    shown = res.text.split("===\n", 1)[1].split("\n\n[", 1)[0]
    assert s.read_text(first.group(1)).startswith(shown + "\n")  # a cut at a line, never mid-line
    assert res.meter.bytes_read <= MAX_REPLY_BYTES  # what was handed over, not the whole files


def test_chunk_store_uses_the_streams_chunking(tmp_path: Path) -> None:
    turns = [Turn(f"S1T{i}", "A", "word " * 10, "d") for i in range(1, 20)]
    assert [len(c.turns) for c in chunk_stream(turns)] == [8, 8, 3]
    long = [Turn(f"S1T{i}", "A", "x" * 1200, "d") for i in range(1, 6)]
    assert [len(c.turns) for c in chunk_stream(long)] == [2, 2, 1]  # closed before passing 3,000 characters
    # A flat stream is chunked by the same rule.
    s = build_chunk_store(open_store(tmp_path / "flat", create=True), STREAM)
    assert sorted(e.path.name for e in s.files(suffix=".md")) == [
        "MEMORY.md", "MEMORY.md", "chunk-0001.md", "chunk-0002.md", "chunk-0003.md"
    ]  # fmt: skip
    assert "turns S2T1-S2T3" in s.read_text("/memories/chunks/chunk-0002.md")  # one chunk per session
    with pytest.raises(ValueError):
        render_chunk(1, 1, [])


def test_cli_search_and_reindex(store: Store) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["search", str(store.root), "keeps bees", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["results"][0]["path"] == "/memories/people/alice.md"
    assert data["results"][0]["lines"] == [[9, "- Keeps bees on the roof [S4T2]"]]
    res = runner.invoke(
        cli, ["search", str(store.root), "calvin", "--path", "/memories/trips", "--top-k", "5"]
    )
    assert res.exit_code == 0 and "japan.md" in res.output and "alice" not in res.output
    res = runner.invoke(cli, ["search", str(store.root), '"AND*:'])
    assert res.exit_code == 0 and "no searchable words" in res.output
    res = runner.invoke(cli, ["reindex", str(store.root)])
    assert res.exit_code == 0 and res.output.startswith("indexed 3 files in ")
