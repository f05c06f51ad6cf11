"""`memdir ui` in a real browser: Debian's headless chromium, driven by selenium through
chromedriver, against the real `memdir ui` process over the sample store and a run folder.

Every page visited is saved as a PNG: under $MEMDIR_UI_SCREENSHOTS when set (to keep them
as artifacts of a run), else in the test session's temporary folder; the paths are printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ui_helpers import Browser, build_store, chrome_missing
from ui_runs import CELL, RUN, SKILL_RUN, build_run, build_skill_run
from waits import read_line_with, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chrome_missing() is not None, reason=str(chrome_missing())),
]


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("MEMDIR_UI_SCREENSHOTS")
    out = Path(where) if where else tmp_path_factory.mktemp("ui-screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("ui-browser")
    root = base / "mem"
    build_store(root)
    runs = base / "runs"
    build_run(runs)
    build_skill_run(runs)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "ui", str(root), "--port", "0", "--runs", str(runs)],
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
        yield url.rstrip("/")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    b = Browser()
    try:
        yield b.driver
    finally:
        b.close()


def shot(driver: Any, shots: Path, name: str) -> Path:
    path = shots / f"{name}.png"
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, max(900, min(int(height) + 120, 4000)))  # the whole page, within reason
    driver.save_screenshot(str(path))
    driver.set_window_size(1280, 900)
    assert path.stat().st_size > 1000, f"{path} is not a screenshot"
    print(f"screenshot: {path}")
    return path


def ready(driver: Any) -> None:
    """The page has loaded and its script has run (it marks the body when done)."""
    wait_until(
        lambda: driver.execute_script("return document.body && document.body.dataset.ready === '1'"),
        "the page script",
    )


def by_css(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    return wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, css), f"an element {css!r}")[0]


def test_open_the_tree_and_click_into_a_file(server: str, browser: Any, shots: Path) -> None:
    browser.get(server + "/")
    ready(browser)
    shot(browser, shots, "00-start")
    by_css(browser, "ul.stores a").click()  # with --runs the start page lists the store and the runs
    ready(browser)
    assert "/s/store/tree" in browser.current_url
    assert "always loaded" in by_css(browser, "li.file.core").text
    assert by_css(browser, "meter.gauge").get_attribute("max") == "30000"
    by_css(browser, 'li.dir button.toggle[data-children*="people"]').click()
    link = by_css(browser, 'ul.tree ul.tree a.name[href*="alice.md"]')  # fetched into the open folder
    shot(browser, shots, "01-tree")
    link.click()
    ready(browser)
    assert by_css(browser, "article h1").text == "Alice"
    assert [
        a.text for a in browser.find_elements("css selector", "aside.outline li.d1 a, aside.outline li.d2 a")
    ] == ["Alice", "Work", "Family"]
    shot(browser, shots, "02-file")


def test_follow_a_see_link(server: str, browser: Any, shots: Path) -> None:
    browser.get(server + "/s/store/file?path=/memories/people/alice.md")
    ready(browser)
    by_css(browser, 'article a.xref[href*="travel%2F2023.md"]').click()
    ready(browser)
    assert "travel%2F2023.md" in browser.current_url
    assert by_css(browser, "article h1").text == "2023"
    browser.get(server + "/s/store/file?path=/memories/travel/MEMORY.md")
    ready(browser)
    dangling = by_css(browser, "article a.xref.dangling")
    assert dangling.text == "/memories/travel/plan-gone.md"
    shot(browser, shots, "03-see-links")


def test_find_the_planted_dangling_reference_in_health(server: str, browser: Any, shots: Path) -> None:
    browser.get(server + "/s/store/health")
    ready(browser)
    row = by_css(browser, "#check tr.rule-dangling-xref")
    assert "plan-gone.md" in row.text
    assert by_css(browser, "#m-b1_mean").text.startswith("b1_mean")
    shot(browser, shots, "04-health")
    row.find_element("css selector", "a").click()
    ready(browser)
    assert "travel%2FMEMORY.md" in browser.current_url and "lines=7" in browser.current_url
    cited = by_css(browser, "article .cited")
    assert "plan-gone.md" in cited.text
    shot(browser, shots, "05-health-finding-opened")


def test_open_a_past_steps_diff(server: str, browser: Any, shots: Path) -> None:
    browser.get(server + "/s/store/history")
    ready(browser)
    wait_until(
        lambda: browser.execute_script(
            "return [...document.images].every(i => i.complete && i.naturalWidth > 0)"
        ),
        "the growth plots",
    )
    shot(browser, shots, "06-history")
    rows = browser.find_elements("css selector", "#operations tr.operation")
    replace = next(r for r in rows if "str_replace" in r.text and "alice.md" in r.text)
    replace.find_element("css selector", "a").click()
    ready(browser)
    diff = by_css(browser, "#diff")
    added = [e.text for e in diff.find_elements("css selector", ".add")]
    assert "+- Alice | job: principal (since 2024-03-01) [S4T1]" in added
    shot(browser, shots, "07-step-diff")
    by_css(browser, "#as-then").click()
    ready(browser)
    assert "as after step" in by_css(browser, "h1").text
    shot(browser, shots, "08-store-as-then")
    by_css(browser, 'ul.tree a.name[href*="people"]').click()
    ready(browser)
    by_css(browser, 'ul.tree a.name[href*="alice.md"]').click()
    ready(browser)
    assert "as after step" in by_css(browser, "h1").text and by_css(browser, "article h1").text == "Alice"
    shot(browser, shots, "08b-file-as-then")
    browser.back()
    browser.back()
    browser.back()
    ready(browser)
    by_css(browser, 'a[href*="/facts?old="]').click()
    ready(browser)
    assert "fact line missing" in by_css(browser, "#facts-result").text
    shot(browser, shots, "09-diff-facts")


def test_a_script_file_renders_inert(server: str, browser: Any, shots: Path) -> None:
    browser.get(server + "/s/store/file?path=/memories/notes/hostile.md")
    ready(browser)
    assert "<script>document.title='PWNED'" in by_css(browser, "article").text
    assert browser.execute_script("return window.pwned === undefined")
    assert "PWNED" not in browser.title
    assert not browser.find_elements("css selector", "article script, article img")
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(u.startswith(server + "/") for u in loaded), loaded  # nothing remote
    shot(browser, shots, "10-script-inert")


def test_search_runs_answers_and_source_turn(server: str, browser: Any, shots: Path) -> None:
    browser.get(server + "/s/store/search?q=principal&mode=bm25")
    ready(browser)
    assert "/memories/people/alice.md" in by_css(browser, "ol.hits li").text
    shot(browser, shots, "11-search")
    browser.get(server + "/runs")
    ready(browser)
    shot(browser, shots, "12-runs")
    by_css(browser, f'a[href*="{RUN.replace("/", "%2F")}"]').click()
    ready(browser)
    wait_until(
        lambda: browser.execute_script(
            "return [...document.images].every(i => i.complete && i.naturalWidth > 0)"
        ),
        "the report's plot",
    )
    assert by_css(browser, "article.report table")
    shot(browser, shots, "13-run-report")
    by_css(browser, "#answers-link").click()
    ready(browser)
    shot(browser, shots, "14-answers")
    by_css(browser, 'a.citation[href*="alice.md"]').click()
    ready(browser)
    assert "Alice | job: principal" in by_css(browser, "article .cited").text
    shot(browser, shots, "15-cited-lines")
    by_css(browser, "p.views a:nth-of-type(2)").click()  # the numbered source view, same lines
    ready(browser)
    assert "principal" in by_css(browser, "table.lines tr.cited").text
    shot(browser, shots, "15b-cited-lines-source")
    browser.back()
    ready(browser)
    by_css(browser, 'a.locator[href*="loc=S1T2"]').click()
    ready(browser)
    assert "running, three times a week" in by_css(browser, "ol.turns li.cited").text
    shot(browser, shots, "16-source-turn")
    assert CELL[1] in browser.current_url
    browser.get(server + "/runs")
    ready(browser)
    by_css(browser, f'a[href*="{SKILL_RUN.replace("/", "%2F")}"]').click()
    ready(browser)
    assert "put a mug on the desk" in by_css(browser, "table.rows").text
    shot(browser, shots, "17-skill-run")
    by_css(browser, 'table.rows a[href*="/at?commit="]').click()
    ready(browser)
    assert by_css(browser, "h1").text.startswith("Step")
    shot(browser, shots, "18-skill-run-step")
