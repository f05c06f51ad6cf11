"""`SafeRoot.reader()`: the read that keeps its folder's descriptor (what `check` and `stats`
read 100,000 files through) answers as `SafeRoot.read` does, refuses what it refuses, and a
folder swapped for a link between two reads cannot take it out of the store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir.errors import NotFoundError, PathError
from memdir.store.store import Store


def _tree(root: Path) -> None:
    (root / "a").mkdir()
    (root / "b" / "c").mkdir(parents=True)
    for rel, text in {"x.md": "root", "a/y.md": "in a", "a/z.md": "", "b/c/w.md": "deep é"}.items():
        (root / rel).write_text(text)


def test_reader_reads_what_read_reads_in_any_order(root: Path) -> None:
    _tree(root)
    store = Store(root)
    order = [("a", "y.md"), ("x.md",), ("a", "z.md"), ("b", "c", "w.md"), ("a", "y.md"), ("x.md",)]
    with store.safe.reader() as reader:
        got = [reader.read(p, "/memories/" + "/".join(p)) for p in order]
        limited = reader.read(("b", "c", "w.md"), "w", limit=4)
    assert got == [store.safe.read(p, "p") for p in order]
    assert got[3] == "deep é".encode()
    assert limited == "deep é".encode()[:4]
    assert store.safe.read(("a", "z.md"), "z", limit=0) == b""


def test_a_file_larger_than_one_read_comes_whole(root: Path) -> None:
    data = os.urandom(3 << 20)
    (root / "big.md").write_bytes(data)
    store = Store(root)
    with store.safe.reader() as reader:
        assert reader.read(("big.md",), "big") == data
        assert reader.read(("big.md",), "big", limit=(1 << 20) + 7) == data[: (1 << 20) + 7]


def test_reader_refuses_links_hard_links_and_missing_files(root: Path, tmp_path: Path) -> None:
    _tree(root)
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    (root / "a" / "link.md").symlink_to(outside)
    os.link(root / "x.md", root / "a" / "hard.md")
    store = Store(root)
    with store.safe.reader() as reader:
        with pytest.raises(PathError, match="symbolic link"):
            reader.read(("a", "link.md"), "/memories/a/link.md")
        with pytest.raises(PathError, match="hard"):
            reader.read(("a", "hard.md"), "/memories/a/hard.md")
        with pytest.raises(NotFoundError):
            reader.read(("a", "gone.md"), "/memories/a/gone.md")
        assert reader.read(("a", "y.md"), "/memories/a/y.md") == b"in a"  # still usable
        for parts in [("a", "link.md"), ("a", "hard.md"), ("a", "gone.md"), ("no", "such.md")]:
            shown = "/memories/" + "/".join(parts)
            with pytest.raises((PathError, NotFoundError)) as named:
                reader.read(parts, shown)
            with pytest.raises((PathError, NotFoundError)) as unnamed:  # named from its parts
                reader.read(parts)
            assert str(unnamed.value) == str(named.value) and shown in str(named.value)


def test_a_folder_swapped_for_a_link_between_reads_stays_in_the_store(root: Path, tmp_path: Path) -> None:
    _tree(root)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "z.md").write_text("secret")
    store = Store(root)
    with store.safe.reader() as reader:
        assert reader.read(("a", "y.md"), "/memories/a/y.md") == b"in a"
        os.rename(root / "a", root / "moved")
        (root / "a").symlink_to(outside)
        assert reader.read(("a", "z.md"), "/memories/a/z.md") == b""  # the folder it opened
        assert reader.read(("b", "c", "w.md"), "w") == "deep é".encode()
        with pytest.raises(PathError) as refused:  # opened again: the chain refuses the link
            reader.read(("a", "z.md"), "/memories/a/z.md")
    with pytest.raises(PathError) as read_refused:
        store.safe.read(("a", "z.md"), "/memories/a/z.md")
    assert str(refused.value) == str(read_refused.value)
