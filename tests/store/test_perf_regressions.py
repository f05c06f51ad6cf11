"""Behaviour kept by the speed fixes the benchmarks led to (the speed itself is measured in
benchmarks/, never here): libyaml-backed frontmatter parsing, and directory listings that read
each file's head directly instead of re-resolving every path."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
import yaml
from tests.waits import HANG_GUARD_S

from memdir.store import frontmatter
from memdir.store.paths import MAX_DEPTH
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

TRICKY = [
    "---\nname: a\ndescription: plain\n---\n",
    "---\nname: trip\ndescription: Trip to Oslo at 12:30, answer NO\n"
    "metadata:\n  n: 01234\n  d: 2023-05-02\n---\n",
    "---\nname: a\ndescription: x\nname: a\n---\n",  # duplicate key
    "---\nname: a\ndescription: Alice: vegan\n---\n",  # not YAML: lenient fallback
    "---\n- a list\n- not a mapping\n---\n",
    "---\nname: a\ndescription: 'quoted: yes'\nmetadata: {on: off, 'y': 1.5}\n---\n",
    "---\nname: é-ü\ndescription: ünïcödé ✓ and emoji 🧠\n---\n",
    "---\n---\nbody\n",
    "---\nname: a\ndescription: |\n  two\n  lines\n---\n",
]


class _PureStringLoader(yaml.SafeLoader):
    """The pure-Python loader built by the same recipe, as the reference the fast one must match."""


_PureStringLoader.yaml_implicit_resolvers = {}
_PureStringLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    frontmatter._construct_mapping,  # type: ignore[arg-type]
)


@pytest.mark.parametrize("text", TRICKY)
def test_frontmatter_parse_matches_pure_python_loader(text: str) -> None:
    raw, _ = frontmatter.split(text)
    assert raw is not None
    fast = frontmatter.parse(text)
    try:
        expected = yaml.load(raw, Loader=_PureStringLoader)
    except yaml.YAMLError:
        assert fast.lenient, "the pure loader refuses this text, so parse must fall back"
        return
    assert not fast.lenient
    if isinstance(expected, dict):
        assert fast.data == {str(k): v for k, v in expected.items()}
    else:
        assert fast.data == {}


def test_frontmatter_keeps_yaml_11_traps_as_strings() -> None:
    fm = frontmatter.parse(TRICKY[1])
    assert fm.description == "Trip to Oslo at 12:30, answer NO"
    assert fm.metadata == {"n": "01234", "d": "2023-05-02"}
    assert any("duplicate key 'name'" in e for e in frontmatter.validate(TRICKY[2], "a.md"))


def _listing_descriptions(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.split("\n")[1:]:
        entry = line.split("\t", 1)[1]
        if "  [description: " in entry:
            path, _, desc = entry.partition("  [description: ")
            out[path] = desc.removesuffix("]")
    return out


def _fm(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def test_listing_descriptions_nested_and_refusals(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage")
    assert not h.call("create", {"path": "/memories/a/b/one.md", "file_text": _fm("one", "first ✓")}).is_error
    # A long body and a multibyte character straddling the head the listing reads.
    long_body = "x" * (16384 - 40) + "é" * 50 + "\n"
    assert not h.call(
        "create", {"path": "/memories/a/long.md", "file_text": _fm("long", "long one", long_body)}
    ).is_error
    (root / "a" / "latin1.md").write_bytes(b"---\nname: latin1\ndescription: caf\xe9\n---\n")
    (root / "a" / "bad-tail.md").write_bytes(b"---\nname: bad-tail\ndescription: ok\n---\nend \xe9")
    outside = tmp_path / "outside.md"
    outside.write_text(_fm("outside", "SECRET outside the store"))
    os.link(outside, root / "a" / "linked.md")
    os.symlink(outside, root / "a" / "symlinked.md")
    (root / "a" / ".hidden.md").write_text(_fm("hidden", "hidden one"))

    text = h.call("view", {"path": "/memories"}).text
    descs = _listing_descriptions(text)
    assert descs == {"/memories/a/b/one.md": "first ✓", "/memories/a/long.md": "long one"}
    assert "SECRET" not in text and "hidden" not in text and "symlinked" not in text
    assert "/memories/a/linked.md" in text  # listed with its size, but its content is not read
    assert "/memories/a/latin1.md" in text  # not UTF-8: listed without a description
    assert "/memories/a/bad-tail.md" in text  # not UTF-8 at its very end: the same


def test_listing_description_of_frontmatter_past_the_head(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    open_store(root, create=True)
    big = (
        "---\nname: big\ndescription: d\nmetadata:\n" + "".join(f"  k{i}: v\n" for i in range(1000)) + "---\n"
    )
    (root / "big.md").write_text(big)
    (root / "small.md").write_text(_fm("small", "fine"))
    descs = _listing_descriptions(
        Harness(open_store(root), "search").call("view", {"path": "/memories"}).text
    )
    assert descs == {"/memories/small.md": "fine"}  # frontmatter over 4,096 characters is not shown


# -- grep's Python fallback: lazy, in ripgrep's order ---------------------------------------
needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


def _grep_tree(root: Path) -> None:
    """Sibling names whose order differs between per-folder and whole-path sorting."""
    for rel in ("a/x.md", "a-b/x.md", "a.md", "a0/x.md", "B/x.md", "é/x.md", "a/b/c/deep.md", "z.md"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        stem = p.name[:-3]
        p.write_text(_fm(stem, f"{rel} file", f"needle in {rel}\nother\nNEEDLE again {rel}\n"))
    (root / ".memdir").mkdir(exist_ok=True)
    (root / ".memdir" / "state.md").write_text("needle hidden\n")
    (root / "notes.txt").write_text("needle not markdown\n")


@needs_rg
@pytest.mark.parametrize("max_results", [3, 100])
def test_python_fallback_matches_ripgrep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_results: int
) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    _grep_tree(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.md").write_text("needle outside\n")
    os.symlink(outside, root / "linked")
    os.link(outside / "o.md", root / "a" / "hard.md")  # a hard link may lead out of the store
    h = Harness(open_store(root), "search")
    args = {"pattern": "needle", "max_results": max_results}
    with_rg = h.call("grep", args)
    monkeypatch.setenv("PATH", "")  # the tool looks rg up on every call; now it finds none
    without = h.call("grep", args)
    assert not with_rg.is_error and without.text == with_rg.text
    assert "/memories/z.md:5: needle in z.md" in with_rg.text or max_results == 3  # files in the root too
    assert "outside" not in without.text and "hidden" not in without.text and "notes.txt" not in without.text
    if max_results == 3:
        assert "stopped at max_results=3" in without.text
        assert without.text.count("\n/memories/") == 3
    else:
        assert without.text.count("\n/memories/") == 16  # 8 files x 2 lines, case-insensitive


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.slow
def test_grep_survives_deep_nesting_and_reads_to_the_depth_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    root = tmp_path / "mem"
    chain = [root]
    for _ in range(1100):  # deeper than Python's recursion limit (mkdir(parents=True) recurses too)
        chain.append(chain[-1] / "d")
        chain[-1].mkdir(parents=True)
    bottom = chain[-1] / "bottom.md"
    bottom.write_text(_fm("bottom", "deep", "needle at the bottom\n"))
    limit = chain[MAX_DEPTH] / "limit.md"  # a file in the deepest folder the store reads
    limit.write_text(_fm("limit", "deep", "needle at the limit\n"))
    if engine == "python":
        monkeypatch.setenv("PATH", "")
    try:
        start = time.perf_counter()
        res = Harness(open_store(root), "search").call("grep", {"pattern": "needle at the"})
        assert time.perf_counter() - start < HANG_GUARD_S  # a hang guard, not a speed target
        assert not res.is_error, res.text
        assert "/limit.md:5: needle at the limit" in res.text and "bottom" not in res.text
    finally:  # shutil.rmtree (and so pytest's own cleanup) recurses, so take the chain down here
        bottom.unlink()
        limit.unlink()
        for folder in reversed(chain[1:]):
            folder.rmdir()
