"""`memdir ui` under hostile sizes and values (issue 33, defects 9, 10, 14 and 15): a page shows a
bounded part of a big file or folder with links to the rest, reading only what it shows; the
history's snapshots are bounded, locked per store and removed on SIGTERM; numbers past any
line or step are refused; a wrong-typed run row is counted, never a 500."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from memdir.store.store import Store
from memdir.ui.app import build_app
from memdir.ui.sources import Source, Sources
from ui_helpers import build_store, call
from ui_runs import RUN, SKILL_RUN, build_run, build_skill_run
from waits import HANG_GUARD_S, read_line_with

LOCAL = "http://127.0.0.1"
# The bounds docs/ui.md states (store/window.py, ui/listing.py, ui/scratch.py hold them; the
# tests name the figures, so a change of bound is a change of the documented behavior)
PAGE_LINES, PAGE_BYTES, PAGE_ENTRIES, MAX_SNAPSHOTS = 1000, 256 * 1024, 500, 8


def test_the_stated_bounds_are_the_codes() -> None:
    from memdir.store import window
    from memdir.ui import listing, scratch

    assert (window.PAGE_LINES, window.PAGE_BYTES) == (PAGE_LINES, PAGE_BYTES)
    assert (listing.PAGE_ENTRIES, scratch.MAX_SNAPSHOTS) == (PAGE_ENTRIES, MAX_SNAPSHOTS)


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bounds") / "mem"
    mem = build_store(root)
    for i in range(6):  # more steps than the snapshot cache keeps (MAX_SNAPSHOTS)
        call(
            mem,
            "create",
            {
                "path": f"/memories/extra/n{i}.md",
                "file_text": f"---\nname: n{i}\ndescription: note {i}\n---\n# Note {i}\n\n- fact {i}\n",
            },
        )
    big = "".join(f"line {i} of the big file\n" for i in range(1, 100_001))
    (root / "big.txt").write_text(big)  # written by hand: pages show the disk as it is
    (root / "long.txt").write_text("x" * (3 * PAGE_BYTES) + "\n" + "after the long line\n")
    wide = root / "wide"
    wide.mkdir()
    for i in range(PAGE_ENTRIES + 700):
        (wide / f"n{i:05d}.md").write_text(f"---\ndescription: note {i}\n---\n# {i}\n")
    return root


@pytest.fixture(scope="module")
def client(store_root: Path, tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    app = build_app(Sources([Source("store", "mem", store_root)]), scratch=tmp_path_factory.mktemp("scratch"))
    return TestClient(app, base_url=LOCAL)


# -- defect 14: numbers past any line or step -------------------------------------------------


def test_numbers_past_any_line_or_step_are_refused_with_400(client: TestClient) -> None:
    big = "9" * 5000  # past Python's 4,300-digit int() limit
    for url, params in (
        ("/s/store/file", {"path": "/memories/people/alice.md", "lines": big}),
        ("/s/store/file", {"path": "/memories/people/alice.md", "lines": f"1-{big}"}),
        ("/s/store/file", {"path": "/memories/people/alice.md", "from": big}),
        (f"/s/store/step/{big}", {}),
        (f"/s/store/step/{big}/tree", {}),
        (f"/s/store/step/{big}/file", {"path": "/memories/people/alice.md"}),
        ("/s/store/facts", {"old": big, "new": "1"}),
        ("/s/store/tree", {"path": "/memories/wide", "from": big}),
    ):
        r = client.get(url, params=params)
        assert r.status_code == 400, (url, r.status_code)
        assert "digits" in r.text and big not in r.text, url  # says what is wrong, without echoing it
    assert client.get("/s/store/step/abc").status_code == 404  # not a number: no such step, as before


# -- defect 15: a wrong-typed row in a run folder ---------------------------------------------


@pytest.fixture(scope="module")
def runs_client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    runs = tmp_path_factory.mktemp("runs")
    out = build_run(runs)
    good = json.loads((out / "answers.jsonl").read_text().split("\n")[0])
    bad = [
        {**good, "question_id": "q-bad-f1", "f1": "high"},
        {**good, "question_id": "q-bad-citations", "citations": 7},
        {**good, "question_id": "q-bad-notfound", "citations_not_found": {"a": 1}},
        {**good, "question_id": "q-bad-cited", "citations": [3, None]},
        ["not", "an", "object"],
    ]
    with (out / "answers.jsonl").open("a") as f:
        for row in bad:
            f.write(json.dumps(row) + "\n")
        f.write(json.dumps({**good, "question_id": "q-good-last"}) + "\n")
    skill, _head = build_skill_run(runs)
    first = json.loads((skill / "tasks.jsonl").read_text().split("\n")[0])
    with (skill / "tasks.jsonl").open("a") as f:
        f.write(json.dumps({**first, "index": 1, "snapshot": 12345}) + "\n")
        f.write(json.dumps({**first, "index": 2, "served": 5, "task": "served is a number"}) + "\n")
        f.write(json.dumps({**first, "index": 3, "task": "the good last task"}) + "\n")
    return TestClient(build_app(Sources([]), runs=runs), base_url=LOCAL)


def test_wrong_typed_answer_rows_are_counted_and_the_page_renders(runs_client: TestClient) -> None:
    r = runs_client.get("/run/answers", params={"name": RUN})
    assert r.status_code == 200
    html = r.text
    assert "q-good-last" in html and "gen-s42-q1" in html  # the good rows, before and after
    assert "q-bad-f1" not in html and "q-bad-citations" not in html and "q-bad-cited" not in html
    note = re.search(r'<p class="malformed">(.*?)</p>', html, re.S)
    assert note is not None
    # line 2 is the fixture's broken line; 3-7 the wrong-typed rows
    assert "6 malformed rows not shown" in note.group(1)
    for line in (2, 3, 4, 5, 6, 7):
        assert f"line {line}" in note.group(1)
    assert "f1" in note.group(1) and "citations" in note.group(1)


def test_wrong_typed_task_rows_are_counted_and_the_page_renders(runs_client: TestClient) -> None:
    r = runs_client.get("/run", params={"name": SKILL_RUN})
    assert r.status_code == 200
    html = r.text
    assert "put a mug on the desk" in html and "the good last task" in html
    assert "served is a number" not in html
    note = re.search(r'<p class="malformed">(.*?)</p>', html, re.S)
    assert note is not None and "2 malformed rows not shown" in note.group(1)
    assert "line 2" in note.group(1) and "snapshot" in note.group(1) and "line 3" in note.group(1)


# -- defect 10: the history's snapshots -------------------------------------------------------


@pytest.mark.slow
def test_one_stores_snapshot_work_does_not_hold_up_another(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    build_store(a)
    build_store(b)
    app = build_app(Sources([Source("a", "a", a), Source("b", "b", b)]), scratch=tmp_path / "scratch")
    c = TestClient(app, base_url=LOCAL)
    done: dict[str, int] = {}

    def get(name: str, url: str) -> None:
        done[name] = c.get(url).status_code

    scratch = app.state.ui.scratch
    with scratch.store_lock(a):  # as if store a's growth replay were running
        waiting = threading.Thread(target=get, args=("a", "/s/a/history"))
        waiting.start()
        other = threading.Thread(
            target=lambda: (get("b", "/s/b/history"), get("b-facts", "/s/b/facts?old=1&new=2"))
        )
        other.start()
        other.join(HANG_GUARD_S)
        assert not other.is_alive(), "store b's history waited on store a's lock"
        assert done == {"b": 200, "b-facts": 200}
        assert waiting.is_alive()  # store a's own page does wait for its lock
    waiting.join(HANG_GUARD_S)
    assert done["a"] == 200


def snapshot_dirs(scratch: Path) -> list[Path]:
    return [p for p in scratch.rglob("*") if p.is_dir() and p.parent.name == "snapshots"]


@pytest.mark.slow
def test_snapshots_are_bounded_and_evicted_ones_deleted(store_root: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    c = TestClient(build_app(Sources([Source("s", "s", store_root)]), scratch=scratch), base_url=LOCAL)
    count = len(re.findall(r'href="/s/s/step/\d+"', c.get("/s/s/history").text))
    assert count > MAX_SNAPSHOTS + 1
    for old in range(count - 1):
        r = c.get("/s/s/facts", params={"old": old, "new": old + 1})
        assert r.status_code == 200 and "fact" in r.text
    kept = snapshot_dirs(scratch)
    assert 0 < len(kept) <= MAX_SNAPSHOTS, kept  # the oldest were deleted, not just forgotten
    again = c.get("/s/s/facts", params={"old": 0, "new": count - 1})  # an evicted step comes back
    assert again.status_code == 200 and len(snapshot_dirs(scratch)) <= MAX_SNAPSHOTS


@pytest.mark.slow
def test_sigterm_removes_the_private_folder(store_root: Path, tmp_path: Path) -> None:
    """The real `memdir ui` process: a history page fills its private folder; SIGTERM ends
    the process and the folder with it."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", str(store_root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp)},
    )
    try:
        assert proc.stdout is not None
        url = read_line_with(proc.stdout, b"http://127.0.0.1:", "the UI's URL").decode().split()[-1]
        assert httpx.get(url + "s/store/facts?old=1&new=2", timeout=HANG_GUARD_S).status_code == 200
        assert httpx.get(url + "s/store/history", timeout=HANG_GUARD_S).status_code == 200
        private = [p for p in tmp.iterdir() if p.name.startswith("memdir-ui-")]
        assert len(private) == 1 and any(private[0].rglob("*.png")) and snapshot_dirs(private[0])
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=HANG_GUARD_S)
        assert not private[0].exists(), "the private folder outlived the server"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- defect 9: big files, wide folders, big core memory ---------------------------------------


def shown_lines(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr id="L(\d+)"', html)]


def test_a_big_file_is_shown_a_page_at_a_time(client: TestClient) -> None:
    r = client.get("/s/store/file", params={"path": "/memories/big.txt", "view": "source"})
    assert r.status_code == 200
    assert shown_lines(r.text) == list(range(1, PAGE_LINES + 1))
    assert f"lines 1–{PAGE_LINES} of 100000" in r.text
    nxt = re.search(r'<a href="([^"]+)"[^>]*>next</a>', r.text)
    assert nxt is not None and f"from={PAGE_LINES + 1}" in nxt.group(1)
    page2 = client.get(nxt.group(1).replace("&amp;", "&"))
    assert shown_lines(page2.text) == list(range(PAGE_LINES + 1, 2 * PAGE_LINES + 1))
    assert "previous" in page2.text
    rendered_view = re.search(r'<a href="([^"]+)"[^>]*>rendered</a>', page2.text)
    assert rendered_view is not None and f"from={PAGE_LINES + 1}" in rendered_view.group(1)  # same page
    last = client.get("/s/store/file", params={"path": "/memories/big.txt", "from": "99990"})
    assert "lines 99990–100000 of 100000" in last.text and "next</a>" not in last.text
    rendered = client.get("/s/store/file", params={"path": "/memories/big.txt"}).text
    assert f'data-lines="1-{PAGE_LINES}"' in rendered and f"line {PAGE_LINES + 1} of" not in rendered
    past = client.get("/s/store/file", params={"path": "/memories/big.txt", "from": "100001"})
    assert past.status_code == 404 and "100000 lines" in past.text


def test_a_cited_line_of_a_big_file_opens_its_page(client: TestClient) -> None:
    r = client.get(
        "/s/store/file", params={"path": "/memories/big.txt", "lines": "50000-50001", "view": "source"}
    )
    lines = shown_lines(r.text)
    assert 50000 in lines and len(lines) <= PAGE_LINES and lines[0] < 50000
    assert re.search(r'id="L50000" class="cited"', r.text) and re.search(r'id="L50001" class="cited"', r.text)
    assert "line 50000 of the big file" in r.text


def test_a_later_page_renders_with_the_files_own_line_numbers(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    lines = ["---", "name: long", "description: a long note", "---"] + [f"- item {i}" for i in range(5, 1501)]
    lines[1200] = "## Late heading"  # line 1201
    (root / "long.md").write_text("\n".join(lines) + "\n")
    c = TestClient(build_app(Sources([Source("m", "m", root)]), scratch=tmp_path / "scratch"), base_url=LOCAL)
    first = c.get("/s/m/file", params={"path": "/memories/long.md"}).text
    assert "a long note" in first and "Late heading" not in first  # the frontmatter, on page 1
    later = c.get("/s/m/file", params={"path": "/memories/long.md", "from": "1001"}).text
    assert 'href="#L1201">Late heading</a>' in later and 'id="L1201"' in later
    assert "a long note" not in later and "lines 1001–1500 of 1500" in later


def test_a_line_longer_than_a_page_is_cut(client: TestClient) -> None:
    r = client.get("/s/store/file", params={"path": "/memories/long.txt"})
    assert r.status_code == 200 and len(r.content) < 2 * PAGE_BYTES
    assert "line 1 is cut" in r.text and "after the long line" not in r.text
    nxt = client.get("/s/store/file", params={"path": "/memories/long.txt", "from": "2"})
    assert "after the long line" in nxt.text


def test_a_page_of_a_big_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    from memdir.store.window import read_window

    (tmp_path / "huge.md").write_bytes(b"# huge\n" + b"a line of the huge file, one of many\n" * 800_000)
    store = Store(tmp_path)
    tracemalloc.start()
    try:
        w = read_window(store, "/memories/huge.md", 400_000)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert w.first == 400_000 and w.last == 400_000 + PAGE_LINES - 1 and w.total_lines == 800_001
    assert w.text.split("\n")[0] == "a line of the huge file, one of many"
    assert peak < 4 * (1 << 20), f"read a page of a 29 MB file with a {peak / 2**20:.1f} MiB peak"


@pytest.mark.slow
def test_a_wide_folder_is_shown_a_page_of_entries_at_a_time(client: TestClient) -> None:
    total = PAGE_ENTRIES + 700
    r = client.get("/s/store/tree", params={"path": "/memories/wide"})
    assert r.status_code == 200
    assert r.text.count('<li class="file') == PAGE_ENTRIES
    assert f"entries 1–{PAGE_ENTRIES} of {total}" in r.text
    nxt = re.search(r'<a href="([^"]+)"[^>]*>next</a>', r.text)
    assert nxt is not None and f"from={PAGE_ENTRIES}" in nxt.group(1)
    page2 = client.get(nxt.group(1).replace("&amp;", "&")).text
    assert page2.count('<li class="file') == PAGE_ENTRIES and "previous</a>" in page2
    assert f"entries {PAGE_ENTRIES + 1}–{2 * PAGE_ENTRIES} of {total}" in page2
    last = client.get("/s/store/tree", params={"path": "/memories/wide", "from": 2 * PAGE_ENTRIES}).text
    assert last.count('<li class="file') == total - 2 * PAGE_ENTRIES and f"n{total - 1:05d}.md" in last
    assert f"note {total - 1}" in last and "next</a>" not in last  # descriptions: the page's own
    frag = client.get("/s/store/children", params={"path": "/memories/wide"}).text
    assert frag.count('<li class="file') == PAGE_ENTRIES and "700 more" in frag


def test_a_huge_core_file_is_counted_in_part_with_a_link(tmp_path: Path) -> None:
    root = tmp_path / "core"
    root.mkdir()
    (root / "MEMORY.md").write_text(
        "---\ndescription: root\n---\n# Root\n" + "- a fact about the user\n" * 150_000
    )
    c = TestClient(build_app(Sources([Source("c", "c", root)]), scratch=tmp_path / "scratch"), base_url=LOCAL)
    html = c.get("/s/c/tree").text
    gauge = re.search(r'<div class="budget[^"]*" id="budget".*?</div>', html, re.S)
    assert gauge is not None and "over budget" in gauge.group(0) and "at least" in gauge.group(0)
    assert 'href="/s/c/file?path=%2Fmemories%2FMEMORY.md"' in gauge.group(0)
    assert "≥" in html  # the file's own badge: a lower bound, not a count


def test_the_gauge_is_checks_count_and_its_bound_never_exceeds_it(store_root: Path, tmp_path: Path) -> None:
    import random

    from memdir.store import spec

    c = TestClient(build_app(Sources([Source("s", "s", store_root)]), scratch=tmp_path / "x"), base_url=LOCAL)
    exact = spec.core_tokens(Store(store_root))
    for page in ("/s/s/tree", "/s/s/tree?path=/memories/people", "/s/s/health"):  # root listing or not
        html = c.get(page).text
        assert f"{exact} / 30000 tokens" in html and "at least" not in html, page
    rng = random.Random(7)
    pieces = ["a", "b ", " ", "\n", "/", "x\n", "é", "  ", "\t", "Hello", "- fact [S1T1]\n", "\n\n", "1"]
    for _ in range(500):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        whole = spec.core_file_tokens("/memories/M.md", body)
        cut = rng.randint(0, len(body))
        assert spec.core_file_tokens_at_least("/memories/M.md", body[:cut]) <= whole, (body, cut)
