"""The listing's description cache (store/descriptions.py): never a stale description, and a
listing byte-identical to one read from the files (a bare Store lists uncached)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.waits import wait_until

from memdir.store.descriptions import CACHE_FILE, DescriptionCache
from memdir.store.listing_walk import walk_levels
from memdir.store.paths import MAX_DEPTH, STATE_DIR
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def _fm(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def varied_store(root: Path, outside: Path) -> None:
    """Every kind of entry a listing meets: plain, frontmatter-less, lenient and refused YAML,
    a description that is not text, bytes that are not UTF-8, a head cut in a character, deep
    and too-deep folders, hidden paths, links, a hard link, a FIFO, names no path can spell."""
    root.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes | str] = {
        "MEMORY.md": "# Index\n\n- people/\n",
        "core.md": _fm("core", "core memory ✓"),
        "plain.md": "no frontmatter at all\n",
        "empty.md": "",
        "people/alice.md": _fm("alice", "Alice: vegan, likes tea"),  # not YAML: lenient
        "people/bob.md": "---\nname: bob\ndescription: 'quoted: yes'\nmetadata: {on: off}\n---\nbody\n",
        "people/MEMORY.md": "---\ndescription: people I know\n---\n",
        "people/alias.md": "---\nname: alias\ndescription: &a x\nother: *a\n---\n",
        "people/listy.md": "---\nname: listy\ndescription: [not, text]\n---\n",
        "people/escaped.md": '---\nname: escaped\ndescription: "nul \\0 and\\nnewline"\n---\n',
        "people/unterminated.md": "---\nname: unterminated\ndescription: never closed\n",
        "people/latin1.md": b"---\nname: latin1\ndescription: caf\xe9\n---\n",
        "people/cut.md": ("---\nname: cut\ndescription: cut head\n---\n" + "x" * 16340 + "é" * 40).encode(),
        "people/big-fm.md": "---\nname: big-fm\ndescription: d\nmetadata:\n"
        + "".join(f"  k{i}: v\n" for i in range(600))
        + "---\n",
        "a/b/c/deep.md": _fm("deep", "three levels down"),
        "a/b/c/d/deeper.md": _fm("deeper", "four levels down: not listed from the root"),
        "a/notes.txt": "not markdown",
        "a/folder.md/inside.md": _fm("inside", "inside a folder named like a file"),
        ".hidden.md": _fm("hidden", "SECRET hidden file"),
        ".secret/x.md": _fm("x", "SECRET in a hidden folder"),
        "people/.hidden-note.md": _fm("hidden-note", "SECRET hidden note"),
    }
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "target.md").write_text(_fm("target", "SECRET outside the store"))
    os.symlink(outside / "target.md", root / "people" / "linked-file.md")
    os.symlink(outside, root / "people" / "linked-folder")
    os.link(outside / "target.md", root / "people" / "hard.md")
    os.mkfifo(root / "people" / "pipe.md")
    (root / "odd").mkdir()
    (root / "odd" / "new\nline.md").write_text(_fm("x", "SECRET a name no path can spell"))
    (root / "odd" / "back\\slash.md").write_text(_fm("x", "SECRET backslash"))
    os.mkdir(os.fsencode(root / "odd") + b"/bad-\xff-name")
    deep = root.joinpath(*[f"l{i}" for i in range(MAX_DEPTH + 1)])
    deep.mkdir(parents=True)
    (deep / "lost.md").write_text(_fm("lost", "below the deepest level"))


def _view(h: Harness, path: str) -> tuple[str, Any]:
    r = h.call("view", {"path": path})
    assert not r.is_error, r.text
    return r.text, r.data


def _wait_past_stamps(root: Path) -> None:
    """Until the filesystem's clock has passed the mtime and ctime of `root` and all below it,
    so a listing may cache them (a file stamped at the clock's current tick is read each time)."""
    paths = [root, *root.rglob("*")] if root.is_dir() else [root]
    stamps = [
        max(st.st_mtime_ns, st.st_ctime_ns) for p in paths if ".memdir" not in p.parts and (st := p.lstat())
    ]
    probe = (root.parent if root.is_dir() else root.parent.parent) / "clock-probe"  # outside the store
    probe.touch()

    def passed() -> bool:
        os.utime(probe)
        return probe.stat().st_mtime_ns > max(stamps)

    wait_until(passed, "the filesystem clock to pass the files' timestamps")


def _rows(root: Path) -> dict[str, tuple[int, int, int, int, str | None]]:
    with sqlite3.connect(root / STATE_DIR / CACHE_FILE) as db:
        rows = db.execute("SELECT path, size, mtime_ns, ctime_ns, ino, description FROM descriptions")
        return {p: (s, m, c, i, d) for p, s, m, c, i, d in rows}


FOLDERS = ["/memories", "/memories/people", "/memories/a", "/memories/a/b", "/memories/odd"]


def test_cached_listing_is_byte_identical_to_the_uncached_one(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    varied_store(root, tmp_path / "outside")
    cached = Harness(open_store(root), "search")
    bare = Harness(Store(root), "search")
    _wait_past_stamps(root)
    for round_ in ("cold", "warm", "warm again"):
        for folder in FOLDERS:
            assert _view(cached, folder) == _view(bare, folder), (round_, folder)
    text = _view(cached, "/memories")[0]
    assert "SECRET" not in text
    assert "/memories/people/alice.md  [description: Alice: vegan, likes tea]" in text
    assert "/memories/people/hard.md\n" in text + "\n"  # listed, its content not read
    assert "not read: /memories/l0/" in text  # the too-deep folder is reported
    rows = _rows(root)
    # Every file read is cached, with the stat it was read at; links, the hard link and the FIFO
    # were never read, and neither were hidden or unspellable names.
    st = (root / "people" / "alice.md").stat()
    assert rows["/memories/people/alice.md"] == (
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_ino,
        "Alice: vegan, likes tea",
    )
    assert rows["/memories/plain.md"][4] is None
    assert "/memories/a/b/c/d/deeper.md" in rows  # listed from /memories/a
    assert not any("hard" in p or "link" in p or "pipe" in p or "hidden" in p for p in rows)
    assert not (Path(root) / STATE_DIR / "index").exists()  # a listing builds no search index


def test_the_listing_walk_sees_what_store_walk_sees(tmp_path: Path) -> None:
    """store/listing_walk.py keeps Store.walk's rules with a leaner walk below the shown
    levels: the same entries, sizes, files' mtimes and unread findings, in the same order."""
    root = tmp_path / "mem"
    varied_store(root, tmp_path / "outside")
    store = Store(root)
    kinds: set[str] = set()
    for folder, depth in (((), 3), ((), 1), (("a",), 3), (("a",), 1), (("a", "b"), 2), (("l0",), 3)):
        mp = store.parse("/".join(("/memories", *folder)))
        unread: list[Any] = []
        walked = list(store.walk(mp, unread=unread))
        got = walk_levels(store.safe, mp.parts, mp.text, depth)
        shown = [e for e in walked if len(e.path.parts) - len(folder) <= depth]
        assert [(e.parts, e.is_dir, e.size, 0 if e.is_dir else e.mtime_ns) for e in got.entries] == [
            (e.path.parts, e.is_dir, e.size, 0 if e.is_dir else e.mtime_ns) for e in shown
        ]
        assert got.unread == unread
        kinds |= {u.kind for u in unread}
        for e in [*shown, None]:
            parts = folder if e is None else e.path.parts
            if e is None or e.is_dir:
                inside = sum(w.size for w in walked if not w.is_dir and w.path.parts[: len(parts)] == parts)
                assert got.totals[parts] == inside, parts
    assert kinds == {"too-deep", "bad-name"}  # both kinds of finding were met, in order


def test_an_edit_outside_the_tools_shows_at_once_even_with_size_and_mtime_kept(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage")
    note = root / "topics" / "note.md"
    assert not h.call(
        "create", {"path": "/memories/topics/note.md", "file_text": _fm("note", "aaaa")}
    ).is_error
    _wait_past_stamps(root)
    assert "[description: aaaa]" in _view(h, "/memories")[0]
    assert _rows(root)["/memories/topics/note.md"][4] == "aaaa"
    before = note.stat()
    note.write_text(_fm("note", "bbbb"))  # same size, written in place
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the old mtime put back
    after = note.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert "[description: bbbb]" in _view(h, "/memories")[0]  # the ctime moved
    assert _view(h, "/memories") == _view(Harness(Store(root), "search"), "/memories")


def test_a_file_renamed_over_another_shows_its_own_description(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "search")
    (root / "a.md").write_text(_fm("a", "first"))
    (root / "b.md").write_text(_fm("a", "other"))  # the same size
    _wait_past_stamps(root)
    assert "[description: first]" in _view(h, "/memories")[0]
    assert "/memories/a.md" in _rows(root)
    os.rename(root / "b.md", root / "a.md")
    assert "/memories/a.md  [description: other]" in _view(h, "/memories")[0]


def test_same_size_rewrites_listed_between_are_never_stale(tmp_path: Path) -> None:
    """Rewrite with the same size, list, rewrite again at once: each listing shows the
    description just written, however close the rewrites fall to the stat a listing saw."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "search")
    note = root / "note.md"
    for i in range(200):
        note.write_text(_fm("note", f"version {i:04d}"))
        assert f"[description: version {i:04d}]" in _view(h, "/memories")[0], i


def test_a_file_stamped_at_or_after_the_clock_is_read_each_time_never_cached(tmp_path: Path) -> None:
    """git's racy-clean rule: a file whose mtime or ctime is not before the filesystem clock
    read before it was read could still be rewritten within that tick with the same stat, so
    no row is kept for it. A stamp in the future stands for that here: this kernel stamps
    every observed change finely, so a real same-tick rewrite cannot be staged."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "search")
    (root / "old.md").write_text(_fm("old", "old one"))
    note = root / "note.md"
    note.write_text(_fm("note", "aaaa"))
    future = note.stat().st_mtime_ns + 3600 * 10**9
    os.utime(note, ns=(future, future))
    _wait_past_stamps(root / "old.md")
    assert "[description: aaaa]" in _view(h, "/memories")[0]
    rows = _rows(root)
    assert "/memories/old.md" in rows and "/memories/note.md" not in rows
    note.write_text(_fm("note", "bbbb"))
    os.utime(note, ns=(future, future))
    assert "[description: bbbb]" in _view(h, "/memories")[0]
    assert "/memories/note.md" not in _rows(root)


def test_a_bare_store_or_index_off_lists_uncached_and_leaves_no_state(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    varied_store(root, tmp_path / "outside")
    with_cache = _view(Harness(open_store(root), "search"), "/memories")
    for store in (Store(root), open_store(root, index=False, journal=False)):
        state = root / STATE_DIR / CACHE_FILE
        if state.exists():
            state.unlink()
        assert _view(Harness(store, "search"), "/memories") == with_cache
        assert not state.exists()


def test_a_broken_or_deleted_cache_file_is_replaced_and_the_listing_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    varied_store(root, tmp_path / "outside")
    expected = _view(Harness(Store(root), "search"), "/memories")
    (root / STATE_DIR).mkdir(exist_ok=True)
    (root / STATE_DIR / CACHE_FILE).write_bytes(b"not a database" * 100)
    DescriptionCache.registry.release(root.resolve())
    assert _view(Harness(open_store(root), "search"), "/memories") == expected
    _wait_past_stamps(root)
    assert _view(Harness(open_store(root), "search"), "/memories") == expected
    assert "/memories/core.md" in _rows(root)
    shutil.rmtree(root / STATE_DIR)  # derived state deleted under a running process
    assert _view(Harness(open_store(root), "search"), "/memories") == expected
    assert "/memories/core.md" in _rows(root)


def test_rows_another_process_wrote_are_used_and_the_deleted_file_gone(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    varied_store(root, tmp_path / "outside")
    _wait_past_stamps(root)
    code = (
        "import sys\nfrom memdir.tools.profiles import Harness\nfrom memdir.tools.wiring import open_store\n"
        "print(Harness(open_store(sys.argv[1]), 'search').call('view', {'path': '/memories'}).text, end='')"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "/memories/core.md" in _rows(root)
    h = Harness(open_store(root), "search")
    assert _view(h, "/memories")[0] == other
    os.unlink(root / "core.md")
    assert "core.md" not in _view(h, "/memories")[0]
    assert _view(h, "/memories") == _view(Harness(Store(root), "search"), "/memories")


def test_threads_listing_while_files_change_see_each_file_as_it_is(tmp_path: Path) -> None:
    """The MCP server runs calls in threads: listings beside a writer each show, for the one
    file the writer leaves alone, its description, and for the file it rewrites a version it
    wrote (never a mix, never an error)."""
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage")
    assert not h.call(
        "create", {"path": "/memories/still.md", "file_text": _fm("still", "unchanged")}
    ).is_error
    assert not h.call("create", {"path": "/memories/busy.md", "file_text": _fm("busy", "v0000")}).is_error
    stop = threading.Event()
    written: list[str] = ["v0000"]
    failures: list[str] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            written.append(f"v{i:04d}")  # before the write: a listing may read it at once
            (root / "busy.md").write_text(_fm("busy", f"v{i:04d}"))

    def lister() -> None:
        for _ in range(40):
            text = _view(h, "/memories")[0]
            if "/memories/still.md  [description: unchanged]" not in text:
                failures.append(f"still.md without its description in {text!r}")
            busy = [ln for ln in text.split("\n") if "/memories/busy.md" in ln]
            if busy and "[description: " in busy[0]:
                desc = busy[0].split("[description: ")[1].rstrip("]")
                if desc not in written:
                    failures.append(f"busy.md shown with {desc!r}, never written")

    threads = [threading.Thread(target=lister) for _ in range(3)]
    w = threading.Thread(target=writer)
    w.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    w.join()
    assert failures == []
    final = _view(h, "/memories")[0]
    assert f"[description: {written[-1]}]" in final
