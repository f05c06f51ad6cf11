"""Retrieval for the skill setting through each tool set: grep (center), BM25 (center-bm25) and
the sandboxed bash tool (shell), on a real store built with the real file tools.

The shell cases run the real bubblewrap sandbox and skip (with the reason) only where no
confining sandbox can be made on the machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.errors import MemdirError
from memdir.search.embed import embedder_missing
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.sandbox import _probe
from memdir.tools.wiring import open_store
from memdir_study.skills.retrieve import (
    DEFAULT,
    RETRIEVALS,
    bm25_retrieve,
    grep_retrieve,
    hybrid_retrieve,
    rank,
    retrieval,
    shell_retrieve,
)

NO_SANDBOX = _probe()
needs_sandbox = pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no confining sandbox here: {NO_SANDBOX}")
needs_embedder = pytest.mark.skipif(embedder_missing() is not None, reason=str(embedder_missing()))
TOOL_SET_NAMES = [
    pytest.param(n, marks=needs_sandbox)
    if n == "shell"
    else pytest.param(n, marks=needs_embedder)
    if n == "center-hybrid"
    else n
    for n in RETRIEVALS
]


def skill(family: str, description: str, body: str) -> str:
    return (
        f"---\nname: {family}\ndescription: {description}\nmetadata:\n  type: skill\n  family: {family}\n"
        f"---\n{body}"
    )


def note(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


FILES = {
    "/memories/skills/heat.md": skill(
        "heat",
        "Put a hot object, e.g. a hot apple, in a receptacle such as the fridge",
        "# Heat then place\n1. Find the apple (countertop, fridge). [E1]\n"
        "2. Heat it with microwave 1 until it is hot. [E1]\n3. Put the hot apple in fridge 1. [E3]\n",
    ),
    "/memories/skills/cool.md": skill(
        "cool",
        "Put a cool object in a receptacle",
        "# Cool then place\n1. Cool it with fridge 1. [E2]\n2. Put it in cabinet 1. [E2]\n",
    ),
    "/memories/skills/clean.md": skill(
        "clean", "Put a clean object somewhere", "# Clean\n1. Clean it with sinkbasin 1. [E4]\n"
    ),
    "/memories/notes/apple.md": note("apple", "Where apples were seen", "- Apple 1 on countertop 2. [E1]\n"),
    "/memories/notes/mug.md": note("mug", "Where mugs were seen", "- Mug 2 in cabinet 3. [E2]\n"),
    "/memories/episodes/e1.md": note(
        "e1", "Episode 1: heat some apple and put it in fridge", "Outcome: success\n1. > go to countertop 2\n"
    ),
    "/memories/episodes/e2.md": note(
        "e2", "Episode 2: cool some mug and put it in cabinet", "Outcome: success\n1. > go to cabinet 3\n"
    ),
    "/memories/episodes/e3.md": note(
        "e3", "Episode 3: clean some egg, put it in garbagecan", "Outcome: failure\n1. > go to sinkbasin 1\n"
    ),
}
# Folder indexes name every word of the task; they must never come back as entries.
INDEXES = {
    f"/memories/{d}/MEMORY.md": note("MEMORY", f"Index of {d}", f"- hot apple fridge: see /memories/{d}/\n")
    for d in ("skills", "notes", "episodes")
}
TASK = "put a hot apple in fridge"
MATCHING = {p for p, t in FILES.items() if any(w in t.lower() for w in ("apple", "fridge", " hot"))}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    st = open_store(tmp_path_factory.mktemp("retr") / "mem", create=True)
    spec.init(st)
    manage = Harness(st, "manage", role="test")
    for path, text in {**INDEXES, **FILES}.items():
        manage.call_or_raise("create", {"path": path, "file_text": text})
    # Hidden state and hidden folders are not memory: planted on disk, matching every word.
    for hidden in (st.state_dir / "stray.md", st.root / ".drafts" / "hot.md"):
        hidden.parent.mkdir(parents=True, exist_ok=True)
        hidden.write_text(note("hot", "hot apple fridge", "hot apple fridge hot apple fridge\n"))
    return st


def run(store: Store, name: str, task: str, k: int) -> list[tuple[str, str]]:
    r = retrieval(name)
    return [(d.path, d.text) for d in r.fn(Harness(store, r.profile, role="test"), task, k)]


@pytest.mark.parametrize("name", TOOL_SET_NAMES)
def test_best_file_first_whole_and_no_indexes(store: Store, name: str) -> None:
    docs = run(store, name, TASK, 10)
    paths = [p for p, _ in docs]
    assert paths[0] == "/memories/skills/heat.md"
    assert set(paths) == MATCHING  # every entry holding a task word, nothing else
    assert not any(p.endswith("MEMORY.md") or "/." in p for p in paths)
    for path, text in docs:  # whole, as written: frontmatter included, no line numbers
        assert text == FILES[path].removesuffix("\n")
    assert docs[0][1].startswith("---\nname: heat\n") and "  family: heat\n" in docs[0][1]


@pytest.mark.parametrize("name", TOOL_SET_NAMES)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_k_is_respected(store: Store, name: str, k: int) -> None:
    docs = run(store, name, TASK, k)
    assert len(docs) == k
    assert docs == run(store, name, TASK, 10)[:k]


@pytest.mark.parametrize("name", TOOL_SET_NAMES)
@pytest.mark.parametrize("task", ["examine the zebra", "put it in the", ""])
def test_no_matching_word_gives_nothing(store: Store, name: str, task: str) -> None:
    assert run(store, name, task, 5) == []


TASKS = [TASK, "cool some mug and put it in cabinet", "clean egg sinkbasin", "put two apple in countertop"]


@needs_sandbox
@pytest.mark.parametrize("task", TASKS)
def test_grep_and_shell_rank_alike(store: Store, task: str) -> None:
    assert run(store, "shell", task, 20) == run(store, "center", task, 20)


def test_bm25_asks_again_when_indexes_take_the_places(store: Store) -> None:
    """All three MEMORY.md files score for the task; the k asked for are still all entries."""
    k = len(MATCHING)
    harness = Harness(store, "search-bm25")
    docs = bm25_retrieve(harness, TASK, k)
    assert {d.path for d in docs} == MATCHING
    assert harness.meter.calls > 1 + k  # more than one search, then one view per file


def test_registry_names_profiles_and_unknown_names(store: Store) -> None:
    assert {n: (r.profile, r.fn) for n, r in RETRIEVALS.items()} == {
        "center": ("search", grep_retrieve),
        "center-bm25": ("search-bm25", bm25_retrieve),
        "shell": ("shell", shell_retrieve),
        "center-hybrid": ("search-hybrid", hybrid_retrieve),
    }
    assert DEFAULT is grep_retrieve
    with pytest.raises(MemdirError, match="center, center-bm25, center-hybrid, shell"):
        retrieval("centre")


def test_search_harness_reads_are_metered(store: Store) -> None:
    harness = Harness(store, "search")
    docs = grep_retrieve(harness, TASK, 2)
    assert harness.meter.calls == 1 + len(docs)  # one grep, one view per file
    assert harness.meter.bytes_read >= sum(len(FILES[d.path]) for d in docs)


def test_shell_retrieval_reads_odd_file_names(tmp_path: Path) -> None:
    if NO_SANDBOX is not None:
        pytest.skip(f"no confining sandbox here: {NO_SANDBOX}")
    st = open_store(tmp_path / "mem", create=True)
    spec.init(st)
    # The tools write kebab-case names only; a hand-written file may be named anyway.
    odd = "/memories/notes/it's a hot: apple.md"
    (st.root / "notes").mkdir()
    (st.root / "notes" / "it's a hot: apple.md").write_text(note("x", "hot apple", "no newline at end"))
    got = shell_retrieve(Harness(st, "shell"), TASK, 3)
    assert [(d.path, d.text) for d in got] == [(odd, note("x", "hot apple", "no newline at end"))]
    assert got == grep_retrieve(Harness(st, "search"), TASK, 3)


def test_rank_weighs_rare_words_and_breaks_ties_by_path() -> None:
    found = {
        "/memories/a.md": {"apple"},
        "/memories/b.md": {"apple"},
        "/memories/c.md": {"fridge", "apple"},
        "/memories/d.md": {"apple", "fridge"},
        "/memories/e.md": {"hot"},
        "/memories/f.md": set(),
    }
    # hot (1 file) outweighs apple (4 files); equal scores: later paths first; no word: not ranked
    assert rank(found, 10) == [f"/memories/{c}.md" for c in "dceba"]
    assert rank(found, 2) == ["/memories/d.md", "/memories/c.md"] and rank(found, 0) == []


@needs_sandbox
def test_shell_reads_in_pages_when_output_exceeds_the_tool_limit(store: Store) -> None:
    """A shell that shows 250 characters a call still gives the whole ranking and whole files."""
    small = Harness(store, "shell", config={"shell": {"output_chars": 250}})
    docs = shell_retrieve(small, TASK, 10)
    assert [(d.path, d.text) for d in docs] == run(store, "center", TASK, 10)
    assert small.meter.calls > 2 * 2  # both the grep and the cat took several pages
    tiny = Harness(store, "shell", config={"shell": {"output_chars": 150}})  # 30-byte pages
    with pytest.raises(MemdirError, match="longer than the shell shows"):
        shell_retrieve(tiny, TASK, 3)
