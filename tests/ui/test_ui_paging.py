"""`memdir ui` reads what it shows in bounded pieces (follow-ups of issues 33 and 34): the
history lists operations and one operation's steps a page at a time; a past step's big file is
read a window at a time, as the live file page is; a run's answers page parses only its rows."""

from __future__ import annotations

import json
import re
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memdir.api.memory import Memory
from memdir.store import operations
from memdir.store.journal import Journal, group
from memdir.store.paths import parse_memory_path
from memdir.store.store import Store
from memdir.ui.app import build_app
from memdir.ui.sources import Source, Sources
from memdir_study.ui import table_page
from ui_helpers import call
from ui_runs import RUN, build_run

LOCAL = "http://127.0.0.1"
PAGE_ROWS = 100  # docs/ui.md: history and answers pages show 100 rows
OP_STEPS, LONE_CALLS = 320, 105
BIG_LINES = 100_000  # 5.2 MB at a past step


def peak_of(fn: Callable[[], object]) -> tuple[object, int]:
    """What `fn` returns and the peak of memory traced while it ran (the app runs in this
    process, on the test client's thread, so its reads are traced)."""
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak


def note(name: str, fact: str) -> str:
    return f"---\nname: {name}\ndescription: {fact}\n---\n# {name}\n\n- {fact}\n"


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose baseline (step 0) holds a 5 MB file, then one operation of OP_STEPS steps
    (as one chat's ingest makes) and LONE_CALLS operations of one step each."""
    root = tmp_path_factory.mktemp("paging") / "mem"
    root.mkdir()
    (root / "big.md").write_text(
        "".join(f"line {i} of the big file at the baseline\n" for i in range(1, BIG_LINES + 1))
    )
    mem = Memory(root)
    with operations.operation(root, "ingest", "ingest big-chat.jsonl"):
        for i in range(OP_STEPS):
            call(mem, "create", {"path": f"/memories/chat/n{i}.md", "file_text": note(f"n{i}", f"fact {i}")})
    for i in range(LONE_CALLS):
        call(mem, "create", {"path": f"/memories/lone/n{i}.md", "file_text": note(f"n{i}", f"lone {i}")})
    mem.close()
    return root


@pytest.fixture(scope="module")
def client(store_root: Path, tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    app = build_app(Sources([Source("store", "mem", store_root)]), scratch=tmp_path_factory.mktemp("scratch"))
    return TestClient(app, base_url=LOCAL)


def test_an_operations_steps_are_shown_100_a_page_newest_first(client: TestClient, store_root: Path) -> None:
    (op,) = [g.id for g in group(Journal(store_root).steps()) if g.operation.kind == "ingest"]
    assert (
        f'href="/s/store/history?operation={op}">{OP_STEPS} steps'
        in client.get("/s/store/history", params={"from": "100"}).text
    )  # older than the lone calls: on the operations' second page
    r = client.get("/s/store/history", params={"operation": op})
    assert r.status_code == 200
    rows = re.findall(r'<tr class="step"><td><a href="/s/store/step/(\d+)">', r.text)
    assert len(rows) == PAGE_ROWS
    indexes = [int(x) for x in rows]
    assert indexes == sorted(indexes, reverse=True)  # newest first
    assert "steps 1–100 of 320" in r.text and "320 steps" in r.text
    nxt = re.search(r'<a href="([^"]+)" rel="next">next</a>', r.text)
    assert nxt is not None and "from=100" in nxt.group(1) and op in nxt.group(1)
    assert 'rel="prev"' not in r.text
    last = client.get("/s/store/history", params={"operation": op, "from": "300"}).text
    tail = [int(x) for x in re.findall(r'<tr class="step"><td><a href="/s/store/step/(\d+)">', last)]
    assert len(tail) == 20 and tail[-1] == min(indexes) - (
        OP_STEPS - PAGE_ROWS
    )  # the operation's first step, last
    assert "steps 301–320 of 320" in last and 'rel="prev"' in last and 'rel="next"' not in last


def test_the_operations_list_is_paged_too(client: TestClient) -> None:
    r = client.get("/s/store/history")
    rows = re.findall(r'<tr class="operation">', r.text)
    found = re.search(r"operations 1–100 of (\d+)", r.text)
    assert len(rows) == PAGE_ROWS and found is not None and int(found.group(1)) >= LONE_CALLS + 1
    total = int(found.group(1))
    nxt = re.search(r'<a href="([^"]+)" rel="next">next</a>', r.text)
    assert nxt is not None
    second = client.get(nxt.group(1).replace("&amp;", "&")).text
    assert len(re.findall(r'<tr class="operation">', second)) == total - PAGE_ROWS
    assert "ingest big-chat.jsonl" in second  # older than the lone calls: on the second page
    past = client.get("/s/store/history", params={"from": str(total + 5)})
    assert past.status_code == 404 and "open the first page" in past.text


def test_a_big_file_at_a_past_step_is_read_a_window_at_a_time(client: TestClient) -> None:
    r, peak = peak_of(
        lambda: client.get("/s/store/step/0/file", params={"path": "/memories/big.md", "view": "source"})
    )
    assert r.status_code == 200  # type: ignore[attr-defined]
    html = r.text  # type: ignore[attr-defined]
    assert f"lines 1–1000 of {BIG_LINES}" in html
    assert "line 1000 of the big file" in html and "line 1001 of the big file" not in html
    assert 'rel="next"' in html
    assert peak < 3 * 2**20, f"a 5 MB file's first window peaked at {peak / 2**20:.1f} MiB"
    later = client.get("/s/store/step/0/file", params={"path": "/memories/big.md", "from": "99001"}).text
    assert "line 100000 of the big file" in later and f"lines 99001–100000 of {BIG_LINES}" in later


# -- the run's answers page -------------------------------------------------------------------

ANSWERS = 20_000


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    out = build_run(runs)
    good = json.loads((out / "answers.jsonl").read_text().split("\n")[0])
    with (out / "answers.jsonl").open("w") as f:
        for i in range(ANSWERS):
            v = "agent-curated" if i % 2 == 0 else "dump"
            f.write(json.dumps({**good, "variant": v, "question_id": f"q{i}", "question": "x" * 300}) + "\n")
    return runs


@pytest.fixture(scope="module")
def runs_client(runs_dir: Path) -> TestClient:
    return TestClient(build_app(Sources([]), runs=runs_dir), base_url=LOCAL)


def test_answers_page_one_of_20000_rows_reads_a_bounded_amount(
    runs_client: TestClient, runs_dir: Path
) -> None:
    size = (runs_dir / RUN / "answers.jsonl").stat().st_size
    assert size > 7 * 2**20
    r, peak = peak_of(lambda: runs_client.get("/run/answers", params={"name": RUN}))
    html = r.text  # type: ignore[attr-defined]
    assert r.status_code == 200  # type: ignore[attr-defined]
    assert len(re.findall(r'<tr class="answer">', html)) == PAGE_ROWS
    assert f"{ANSWERS} answers; showing 1–100" in html and ">q0<" not in html  # ids sit among others
    assert "q0 ·" in html and "q99 ·" in html and "q100 ·" not in html
    assert re.search(r'href="/run/answers\?name=[^"]*from=100">next</a>', html)
    assert peak < 3 * 2**20, f"page 1 of a {size / 2**20:.0f} MiB table peaked at {peak / 2**20:.1f} MiB"
    # the handler's reader, called as the page calls it: it parses the page's rows and no others
    store = Store(runs_dir / RUN)
    page = table_page.read_page(store, parse_memory_path("/memories/answers.jsonl"), 0, PAGE_ROWS)
    assert (page.parsed, len(page.rows), page.total, page.more) == (
        PAGE_ROWS,
        PAGE_ROWS,
        ANSWERS,
        ANSWERS - PAGE_ROWS,
    )
    last = runs_client.get("/run/answers", params={"name": RUN, "from": str(ANSWERS - PAGE_ROWS)}).text
    assert f"q{ANSWERS - 1} ·" in last and "previous" in last and ">next<" not in last


def test_a_filtered_answers_page_counts_only_its_variant(runs_client: TestClient) -> None:
    html = runs_client.get("/run/answers", params={"name": RUN, "variant": "dump", "from": "100"}).text
    assert f"{ANSWERS // 2} answers; showing 101–200" in html
    assert "q201 ·" in html and "q200 ·" not in html  # odd rows only: the 101st dump row is q201
    assert "<option selected>dump</option>" in html and "<option >agent-curated</option>" in html


def test_an_overlong_line_is_named_not_held(tmp_path: Path) -> None:
    out = build_run(tmp_path)
    good = (out / "answers.jsonl").read_text().split("\n")[0]
    (out / "answers.jsonl").write_text(
        good + "\n" + '{"answer": "' + "y" * (8 * 2**20) + '"}\n' + good + "\n"
    )
    page, peak = peak_of(
        lambda: table_page.read_page(Store(out), parse_memory_path("/memories/answers.jsonl"), 0, PAGE_ROWS)
    )
    assert isinstance(page, table_page.TablePage)
    assert len(page.rows) == 2 and [(m.line, m.reason) for m in page.malformed] == [(2, "longer than 1 MiB")]
    assert peak < 4 * 2**20, f"an 8 MiB line peaked at {peak / 2**20:.1f} MiB"  # two chunks and a row


def test_a_past_file_whose_content_is_gone_says_so(tmp_path: Path) -> None:
    """The streamed read still reports a blob the journal lost (power loss, a hand edit), as
    the whole read did: an error page naming it, not an empty file."""
    root = tmp_path / "mem"
    with Memory(root) as mem:
        call(mem, "create", {"path": "/memories/gone.md", "file_text": note("gone", "a fact")})
    journal = Journal(root)
    last = journal.steps()[-1]
    sha = journal.files_at(last.commit)["gone.md"]
    loose = journal.git_dir / "objects" / sha[:2] / sha[2:]
    assert loose.is_file()
    loose.unlink()
    client = TestClient(build_app(Sources([Source("store", "mem", root)])), base_url=LOCAL)
    r = client.get(f"/s/store/step/{last.index}/file", params={"path": "/memories/gone.md"})
    assert r.status_code == 400 and f"the file content {sha} is missing" in r.text
