"""`memdir ui` without a browser: each page over a real store (real journal, real index),
confinement, escaping, loopback only, read-only, tenants, runs, and the real command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.routing import Route
from starlette.testclient import TestClient

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.mcp import tenants
from memdir.ui.app import build_app
from memdir.ui.server import loopback
from memdir.ui.sources import Source, Sources
from ui_helpers import SCRIPT_TEXT, build_store
from ui_runs import CELL, RUN, SKILL_RUN, build_run, build_skill_run
from waits import read_line_with

LOCAL = "http://127.0.0.1"


@pytest.fixture(scope="module")
def store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ui") / "mem"
    build_store(root)
    return root


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    build_run(runs)
    build_skill_run(runs)
    return runs


@pytest.fixture(scope="module")
def client(store_root: Path, runs_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    app = build_app(
        Sources([Source("store", "mem", store_root)]),
        runs=runs_dir,
        scratch=tmp_path_factory.mktemp("scratch"),
    )
    return TestClient(app, base_url=LOCAL)


def files_of(root: Path) -> dict[str, bytes]:
    """Every memory file's bytes (derived state in .memdir/ left out)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


def test_tree_shows_core_memory_budget_and_folders(client: TestClient) -> None:
    r = client.get("/s/store/tree")
    assert r.status_code == 200
    html = r.text
    assert "always loaded" in html and "MEMORY.md" in html
    assert re.search(r'<meter class="gauge"[^>]*max="30000"', html)
    assert "people/" in html and "People the user talks about" in html  # the folder's MEMORY.md description
    assert "2 files" in html  # people/ holds MEMORY.md and alice.md
    frag = client.get("/s/store/children", params={"path": "/memories/people"}).text
    assert "alice.md" in frag and "Alice, the user&#39;s sister" in frag
    assert "always loaded" not in frag  # only root markdown is core memory


def test_file_links_references_marks_dangling_and_locators(client: TestClient) -> None:
    html = client.get("/s/store/file", params={"path": "/memories/travel/MEMORY.md"}).text
    assert 'class="xref" href="/s/store/file?path=%2Fmemories%2Ftravel%2F2023.md"' in html
    assert 'class="xref dangling"' in html and "plan-gone.md" in html
    alice = client.get("/s/store/file", params={"path": "/memories/people/alice.md", "lines": "10"}).text
    assert '<span class="locator">S4T1</span>' in alice  # no benchmark behind this store: marked, not linked
    assert 'href="#L7">Work</a>' in alice  # the outline links to each heading's line
    assert re.search(r'id="L10"[^>]*class="cited"', alice)
    src = client.get(
        "/s/store/file", params={"path": "/memories/people/alice.md", "view": "source", "lines": "9-10"}
    )
    assert src.text.count('class="cited"') == 2


@pytest.mark.parametrize(
    "raw",
    [
        "/memories/../outside.md",
        "/memories/people/../../outside.md",
        "/memories/%2e%2e/outside.md",
        "/memories/%252e%252e/outside.md",
        "/memories/people/..%2f..%2foutside.md",
        "/memories/..\\outside.md",
        "/memories/a\x00b.md",
        "/etc/passwd",
        "../outside.md",
        "/memories/.memdir/index",
        "/memories/link.md",
    ],
)
def test_paths_are_confined(client: TestClient, store_root: Path, raw: str) -> None:
    secret = store_root.parent / "outside.md"
    secret.write_text("TOP SECRET outside the store\n")
    link = store_root / "link.md"
    if not link.is_symlink():
        link.symlink_to(secret)
    for route in ("/s/store/file", "/s/store/tree", "/s/store/children"):
        r = client.get(route, params={"path": raw}, follow_redirects=True)
        assert r.status_code in (400, 404), (route, raw, r.status_code)
        assert "TOP SECRET" not in r.text and "root:" not in r.text
    # the same, written straight into the URL with its own encoding
    r = client.get("/s/store/file?path=/memories/%2E%2E/outside.md")
    assert r.status_code == 400 and "TOP SECRET" not in r.text


def test_store_text_is_escaped_and_nothing_remote_loads(client: TestClient) -> None:
    r = client.get("/s/store/file", params={"path": "/memories/notes/hostile.md"})
    html = r.text
    assert "&lt;script&gt;document.title='PWNED'" in html
    assert SCRIPT_TEXT not in html and "<script>document" not in html
    assert "&lt;img src=&quot;http://203.0.113.9/x.png&quot; onerror=" in html  # markup shown as text
    assert not re.search(r"<img[^>]*onerror", html)
    assert 'src="http' not in html and 'href="javascript' not in html
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "img-src 'self'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert not re.search(r"""(src|href)=["']https?://""", client.get("/s/store/tree").text)


def test_loopback_only() -> None:
    for host in ("0.0.0.0", "192.168.1.5", "example.com", "::"):
        with pytest.raises(MemdirError, match="loopback only"):
            loopback(host)
    assert loopback("localhost") == "127.0.0.1" and loopback("::1") == "::1"
    result = CliRunner().invoke(cli, ["ui", ".", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code != 0 and "loopback only" in str(result.exception or result.output)


def test_foreign_host_header_is_refused(client: TestClient) -> None:
    """A rebound DNS name pointing at 127.0.0.1 still carries its own Host: refused."""
    r = client.get("/s/store/tree", headers={"host": "evil.example:8765"})
    assert r.status_code == 400 and "alice" not in r.text


def test_read_only(client: TestClient, store_root: Path) -> None:
    for route in client.app.routes:  # type: ignore[attr-defined]
        if isinstance(route, Route):
            allowed = route.methods or set()
            assert allowed <= {"GET", "HEAD"} or (route.path == "/login" and allowed == {"POST"}), route.path
    before = files_of(store_root)
    for method in ("post", "put", "patch", "delete"):
        r = client.request(method.upper(), "/s/store/file", params={"path": "/memories/people/alice.md"})
        assert r.status_code == 405
    pages = [
        "/s/store/tree",
        "/s/store/file?path=/memories/people/alice.md",
        "/s/store/search?q=alice",
        "/s/store/health",
        "/s/store/history",
        "/s/store/step/1",
        "/s/store/step/1/tree",
        "/s/store/facts?old=1&new=8",
    ]
    for url in pages:
        assert client.get(url).status_code == 200, url
    assert files_of(store_root) == before


def test_search_over_modes(client: TestClient) -> None:
    html = client.get("/s/store/search", params={"q": "principal", "mode": "bm25"}).text
    assert "/memories/people/alice.md" in html and "bm25 #1" in html
    bad = client.get("/s/store/search", params={"q": "x", "mode": "fuzzy"}).text
    assert "unknown search mode" in bad


def test_health_lists_findings_with_links_and_meanings(client: TestClient) -> None:
    html = client.get("/s/store/health").text
    assert "B1 sibling label distinctness" in html and "mean unit depth" in html
    assert "dangling-xref" in html and "plan-gone.md" in html
    assert 'href="/s/store/file?path=%2Fmemories%2Ftravel%2FMEMORY.md&amp;lines=7#L7"' in html
    assert "dangling-ref" in html  # health's finding, with its action
    assert "create /memories/travel/plan-gone.md" in html or "remove the reference" in html


def test_history_step_diff_past_file_and_fact_diff(client: TestClient) -> None:
    hist = client.get("/s/store/history").text
    assert "str_replace" in hist and "growth_size.png" in hist and "Fate of the" in hist
    last = int(re.findall(r'href="/s/store/step/(\d+)"', hist)[0])
    step = client.get(f"/s/store/step/{last}").text
    assert "+- Alice | job: principal (since 2024-03-01) [S4T1]" in step.replace("&#43;", "+")
    assert 'class="del">-- Alice | job: teacher (since 2023-01-05) [S1T2]' in step
    past = client.get(f"/s/store/step/{last - 1}/file", params={"path": "/memories/people/alice.md"}).text
    assert "teacher (since 2023-01-05)" in past and "principal" not in past
    gone = client.get("/s/store/step/1/file", params={"path": "/memories/people/alice.md"})
    assert gone.status_code == 404 and "did not exist after step 1" in gone.text
    tree = client.get(f"/s/store/step/{last}/tree").text
    assert "people/" in tree and "as after step" in tree
    facts = client.get("/s/store/facts", params={"old": last - 1, "new": last}).text
    # the supersede rewrote the old fact line's words, so diff --facts counts it as lost
    assert "1 fact line missing" in facts and "- Alice | job: teacher (since 2023-01-05) [S1T2]" in facts
    assert f"step/{last - 1}/file?path=%2Fmemories%2Fpeople%2Falice.md&amp;lines=9#L9" in facts
    assert "no fact lost" in client.get("/s/store/facts", params={"old": 1, "new": last - 1}).text
    png = client.get("/s/store/growth/growth_size.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    assert client.get("/s/store/growth/..%2fsecret").status_code == 404
    assert client.get("/s/store/step/999").status_code == 404


def test_runs_report_answers_citations_and_source_turn(client: TestClient) -> None:
    listing = client.get("/runs").text
    assert RUN in listing
    run = client.get("/run", params={"name": RUN}).text
    assert "<table" in run and '<img src="/run/asset?name=study%2Fgenerated&amp;path=correctness.png"' in run
    png = client.get("/run/asset", params={"name": RUN, "path": "correctness.png"})
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert client.get("/run/asset", params={"name": RUN, "path": "../../x.png"}).status_code == 400
    assert client.get("/run/asset", params={"name": RUN, "path": "manifest.json"}).status_code == 400
    answers = client.get("/run/answers", params={"name": RUN}).text
    sid = "~".join((RUN.replace("/", "~"), *CELL))
    assert f'href="/s/{sid}/file?path=%2Fmemories%2Fpeople%2Falice.md&amp;lines=10-10#L10"' in answers
    assert 'class="citation dangling"' in answers  # the citation eval marked [FILE NOT FOUND]
    cell = client.get(f"/s/{sid}/file", params={"path": "/memories/people/alice.md"}).text
    assert 'href="/turn?bench=generated&amp;sample=gen-s42&amp;loc=S1T2"' in cell
    turn = client.get("/turn", params={"bench": "generated", "sample": "gen-s42", "loc": "S1T2"}).text
    assert 'class="cited"' in turn and "running, three times a week" in turn
    assert client.get("/run", params={"name": "../../etc"}).status_code == 404


def test_a_skill_runs_tasks_link_to_the_step_after_each(client: TestClient, runs_dir: Path) -> None:
    page = client.get("/run", params={"name": SKILL_RUN}).text
    assert "put a mug on the desk" in page and "skills" in page
    link = re.search(r'href="(/s/[^"]+/at\?commit=[0-9a-f]+)"', page)
    assert link is not None
    r = client.get(link.group(1), follow_redirects=False)
    assert r.status_code == 307 and re.search(r"/step/\d+$", r.headers["location"])
    assert client.get(link.group(1).split("=")[0] + "=0000").status_code == 404


def test_a_folder_over_the_fanout_cap_is_marked_in_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "wide"
    (root / "big").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# root\n")
    for i in range(51):  # files written by hand: the tree shows the store as it is on disk
        (root / "big" / f"n{i:02d}.md").write_text(f"note {i}\n")
    c = TestClient(build_app(Sources([Source("w", "wide", root)])), base_url=LOCAL)
    html = c.get("/s/w/tree").text
    assert "51 entries, over the cap" in html and "51 files" in html


def test_tenants_see_only_their_own_store(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    build_store(a)
    b.mkdir()
    (b / "MEMORY.md").write_text("---\ndescription: B's root\n---\n# B secret\n")
    file = tmp_path / "tenants.json"
    token_a = tenants.add_token(file, str(a), "manage", tenant="alpha")
    token_b = tenants.add_token(file, str(b), "manage", tenant="beta")
    registry = tenants.load(file)
    sources = Sources(
        [Source(t.tenant, t.tenant, Path(t.real_root), tenant=t.tenant) for t in registry.tokens]
    )
    c = TestClient(build_app(sources, tenants=registry), base_url=LOCAL)
    r = c.get("/s/alpha/tree", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login"
    assert c.get("/s/alpha/tree", headers={"authorization": "Bearer nope"}).status_code == 401
    auth = {"authorization": f"Bearer {token_a}"}
    assert "alice" in c.get("/s/alpha/children", params={"path": "/memories/people"}, headers=auth).text
    other = c.get("/s/beta/file", params={"path": "/memories/MEMORY.md"}, headers=auth)
    assert other.status_code == 404 and "B secret" not in other.text
    assert (
        c.post(
            "/login", content=b"token=wrong", headers={"content-type": "application/x-www-form-urlencoded"}
        ).status_code
        == 401
    )
    ok = c.post(
        "/login",
        content=f"token={token_b}".encode(),
        headers={"content-type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert ok.status_code == 303 and "httponly" in ok.headers["set-cookie"].lower()
    assert "samesite=strict" in ok.headers["set-cookie"].lower()
    assert "B secret" in c.get("/s/beta/file", params={"path": "/memories/MEMORY.md"}).text  # by the cookie
    assert c.get("/s/alpha/tree").status_code == 404


def listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses with a socket listening on `port` (from the kernel's table)."""
    found = set()
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = row.split()
        addr, _, hex_port = f[1].partition(":")
        if f[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
            found.add(".".join(str(b) for b in reversed(bytes.fromhex(addr))))
    return found


def test_the_command_serves_and_prints_its_url(store_root: Path) -> None:
    """The real `memdir ui` process: binds loopback, prints the URL, answers a page."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", str(store_root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = (
            read_line_with(proc.stdout, b"http://127.0.0.1:", "the UI's URL")
            .decode()
            .strip()
            .splitlines()[-1]
        )
        import httpx

        port = int(url.rstrip("/").rsplit(":", 1)[1])
        assert listening_addresses(port) == {"127.0.0.1"}  # bound to loopback, nothing else
        r = httpx.get(url + "s/store/tree", timeout=30)
        assert r.status_code == 200 and "always loaded" in r.text
        assert httpx.get(url, timeout=30, follow_redirects=False).status_code == 307
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_nothing_to_serve_says_what_to_give() -> None:
    result = CliRunner().invoke(cli, ["ui"])
    assert result.exit_code == 2 and "give ROOT, --tenants FILE or --runs DIR" in result.output
