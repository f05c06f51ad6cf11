"""The annotations every tool carries (MCP readOnlyHint, destructiveHint, idempotentHint) are
true of it, shown on a real store: a read-only tool leaves the store byte-identical and makes no
journal step; every other tool can write; a tool not marked destructive only adds (every line
the store held is still held somewhere); one marked destructive can remove; one marked
idempotent changes nothing when repeated, and a writer not so marked has a call that does.

Decisions (docs/tools.md, Titles and annotations): str_replace is destructive (it rewrites a
file in place, and an empty new_str removes text); rename is not (the destination must not
exist, so nothing is overwritten, and every byte moves with it); create, delete and rename are
idempotent (a repeated call finds the file there, or gone, and is refused with nothing changed).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.conftest import fm, snapshot

from memdir.errors import MemdirError
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.tools.base import ToolResult
from memdir.tools.profiles import PROFILES, Harness, load_tools
from memdir.tools.wiring import open_store

PATH = "/memories/people/alice.md"
ALICE = fm(
    "alice",
    "Alice: diet and drinks",
    "# Alice\n## Diet\n- alice | diet: vegan (since 2023-05-02) [S6T5]\n## Drinks\nqx tea [S1T1]\n",
)
CHUNK = fm("c1", "session 1", "[S1T1] Alice: I drink green tea every morning.\n")

# A witness per read-only tool: calls that must leave the store as it was.
READS: dict[str, list[dict[str, Any]]] = {
    "view": [
        {"path": "/memories"},
        {"path": PATH},
        {"path": PATH, "start_line": 2, "end_line": 4, "show_sha256": True},
    ],
    "grep": [{"pattern": "vegan"}, {"pattern": "t.a", "path": "/memories/people"}],
    "toc": [{"path": PATH}],
    "section_read": [{"path": PATH, "section_path": "# Alice > ## Diet"}],
    "bm25_full_search": [{"query": "alice vegan"}],
    "bm25_chunk_retrieve": [{"query": "green tea"}],
    "hybrid_chunk_retrieve": [{"query": "what does alice drink in the morning"}],
    "section_search": [{"query": "alice diet", "mode": "bm25"}, {"query": "what does alice eat"}],
    "health": [{}, {"path": "/memories/people"}, {"path": PATH}],
}
# A witness per writer: a call that changes the store (for a destructive tool, one that removes).
WRITES: dict[str, dict[str, Any]] = {
    "create": {
        "path": "/memories/notes/new.md",
        "file_text": fm("new", body="- bob | job: nurse (since 2024-01-01) [S2T1]\n"),
    },
    "str_replace": {"path": PATH, "old_str": "vegan (since", "new_str": "(since"},
    "insert": {"path": PATH, "insert_line": 9, "insert_text": "- alice | pet: cat (since 2024-02-02) [S3T1]"},
    "delete": {"path": PATH},
    "rename": {"old_path": "/memories/people", "new_path": "/memories/family"},
    "bash": {"command": "rm /memories/people/alice.md"},
    "forget": {"text": "vegan (since", "reason": "the witness"},
}
# More calls of the writers not marked destructive, each of which must only add.
ADDITIVE: dict[str, list[dict[str, Any]]] = {
    "create": [WRITES["create"], {"path": "/memories/a/b/c.md", "file_text": fm("c")}],
    "insert": [WRITES["insert"], {"path": PATH, "insert_line": 4, "insert_text": "# Top\nline\n"}],
    "rename": [WRITES["rename"], {"old_path": PATH, "new_path": "/memories/alice.md"}],
}
# For each writer not marked idempotent: a call whose repetition changes the store again.
REPEATS: dict[str, dict[str, Any]] = {
    "str_replace": {"path": PATH, "old_str": "qx", "new_str": "qxy"},
    "insert": WRITES["insert"],
    "bash": {"command": "echo more >> /memories/people/alice.md"},
}


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "m"
    store = open_store(root, create=True)
    spec.init(store)
    with store.step("seed"):
        store.create(PATH, ALICE)
        store.create("/memories/chunks/c1.md", CHUNK)
    return root


def _harness(root: Path, tool: str) -> Harness:
    profile = next(p for p, names in PROFILES.items() if tool in names)
    try:
        return Harness(open_store(root), profile, role="test")
    except MemdirError as exc:
        pytest.skip(f"{tool} is not available here: {exc}")


def _conforms(h: Harness, tool: str, r: ToolResult) -> None:
    """A success of a tool with an output schema carries data that follows it (outputs.py)."""
    schema = h.specs[tool].output_schema
    if schema is None:
        assert r.data is None
    else:
        assert r.data is not None, (tool, r.text)
        jsonschema.Draft202012Validator(schema).validate(r.data)


def _lines(snap: dict[str, bytes]) -> Counter[str]:
    return Counter(ln for data in snap.values() for ln in data.decode().split("\n"))


def test_every_tool_has_a_witness() -> None:
    tools = load_tools()
    assert {n for n, s in tools.items() if s.read_only} == set(READS)
    assert {n for n, s in tools.items() if not s.read_only} == set(WRITES)
    assert {n for n, s in tools.items() if not s.read_only and not s.destructive} == set(ADDITIVE)
    assert {n for n, s in tools.items() if not s.read_only and not s.idempotent} == set(REPEATS)
    assert all(s.idempotent for s in tools.values() if s.read_only)


@pytest.mark.parametrize("tool", sorted(READS))
def test_read_only_tools_leave_the_store_byte_identical(world: Path, tool: str) -> None:
    h = _harness(world, tool)
    before, head = snapshot(world), Journal(world).head()
    for args in READS[tool]:
        r = h.call(tool, args)
        assert not r.is_error, (args, r.text)
        assert r.meter.writes == 0
        _conforms(h, tool, r)
    assert snapshot(world) == before and Journal(world).head() == head


@pytest.mark.parametrize("tool", sorted(WRITES))
def test_writers_write_and_destructive_ones_can_remove(world: Path, tool: str) -> None:
    h = _harness(world, tool)
    before = snapshot(world)
    r = h.call(tool, WRITES[tool])
    assert not r.is_error and snapshot(world) != before, r.text
    _conforms(h, tool, r)
    removed = _lines(before) - _lines(snapshot(world))
    if h.specs[tool].destructive:
        assert removed, f"{tool} is marked destructive, but its witness removed nothing"


@pytest.mark.parametrize(("tool", "i"), [(t, i) for t, calls in ADDITIVE.items() for i in range(len(calls))])
def test_writers_not_marked_destructive_only_add(world: Path, tool: str, i: int) -> None:
    h = _harness(world, tool)
    before = snapshot(world)
    r = h.call(tool, ADDITIVE[tool][i])
    assert not r.is_error, r.text
    _conforms(h, tool, r)
    assert not (_lines(before) - _lines(snapshot(world))), f"{tool} removed content"
    contents = Counter(before.values())
    if tool == "rename":  # moved, byte for byte
        assert Counter(snapshot(world).values()) == contents


@pytest.mark.parametrize("tool", sorted(WRITES))
def test_idempotent_means_a_repeat_changes_nothing(world: Path, tool: str) -> None:
    h = _harness(world, tool)
    if h.specs[tool].idempotent:
        assert not h.call(tool, WRITES[tool]).is_error
        once = snapshot(world)
        h.call(tool, WRITES[tool])
        assert snapshot(world) == once
    else:
        args = REPEATS[tool]
        assert not h.call(tool, args).is_error
        once = snapshot(world)
        r = h.call(tool, args)
        assert not r.is_error and snapshot(world) != once, r.text
