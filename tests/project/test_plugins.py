"""The seam between the product and the study (memdir/plugins.py): the installed entry point is
found and brings `memdir study` and the run pages; with the study unimportable (a package of
the same name, first on the path, that fails to import, as a broken or partial install does)
`memdir study` says how to install it and the UI still starts, without the run pages."""

from __future__ import annotations

import html
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from click.testing import CliRunner
from starlette.testclient import TestClient

from memdir import plugins
from memdir.cli.main import cli
from memdir.ui.app import build_app
from memdir.ui.sources import Sources

STUDY_COMMANDS = ("bench", "data", "eval", "report", "skills")
HINT = "pip install 'memdir[study]'"
MAIN = "from memdir.cli.main import main; sys.argv = ['memdir', *sys.argv[1:]]; main()"


def _run(tmp_path: Path, code: str, *, shadow: bool) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter; with `shadow`, a `memdir_study` that cannot be imported
    comes first on the path, so the entry point is listed but its module fails to load."""
    env = dict(os.environ)
    if shadow:
        fake = tmp_path / "shadow" / "memdir_study"
        fake.mkdir(parents=True, exist_ok=True)
        (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'nltk'\")\n")
        env["PYTHONPATH"] = os.pathsep.join([str(fake.parent), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )


def test_the_installed_study_plugin_is_found_and_adds_its_commands(tmp_path: Path) -> None:
    points = {p.name: p.value for p in entry_points(group=plugins.GROUP)}
    assert points.get("study") == "memdir_study.plugin"
    assert plugins.manager().get_plugin("study") is not None
    assert plugins.failures() == {}
    listing = _run(tmp_path, f"import sys; sys.argv[1:] = ['study', '--help']; {MAIN}", shadow=False)
    assert listing.returncode == 0, listing.stderr
    for name in STUDY_COMMANDS:
        assert f"  {name} " in listing.stdout
    assert CliRunner().invoke(cli, ["--help"]).output.rstrip().splitlines()[-1].split()[0] == "study"
    routes = {path for path, _ in plugins.ui_pages().routes}
    assert {"/runs", "/run", "/run/answers", "/turn"} <= routes


def test_memdir_study_without_the_study_says_how_to_install_it(tmp_path: Path) -> None:
    for argv in (["study"], ["study", "eval", "--benchmark", "locomo"], ["study", "--help"]):
        result = _run(tmp_path, f"import sys; sys.argv[1:] = {argv!r}; {MAIN}", shadow=True)
        assert result.returncode == 2, (argv, result.stdout, result.stderr)
        assert HINT in result.stderr and "No module named 'nltk'" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    listing = _run(tmp_path, f"import sys; sys.argv[1:] = ['--help']; {MAIN}", shadow=True)
    assert listing.returncode == 0, listing.stderr
    assert f"study        (not installed: {HINT})" in listing.stdout


def test_the_ui_starts_without_the_study_and_says_the_run_pages_are_absent(tmp_path: Path) -> None:
    code = f"""
import logging
from pathlib import Path
from starlette.testclient import TestClient
from memdir.ui.app import build_app
from memdir.ui.sources import Sources
logging.basicConfig()
app = build_app(Sources([]), runs=Path({str(tmp_path)!r}), scratch=Path({str(tmp_path / "scratch")!r}))
client = TestClient(app, base_url="http://127.0.0.1")
start, runs = client.get("/"), client.get("/runs")
print(start.status_code, runs.status_code)
print(start.text)
"""
    (tmp_path / "scratch").mkdir()
    result = _run(tmp_path, code, shadow=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "200 404"
    page = html.unescape(result.stdout)
    assert "the run pages are not installed" in page and HINT in page
    assert 'href="/runs"' not in result.stdout
    assert "memdir ui: the run pages are not installed" in result.stderr and "nltk" in result.stderr


def test_with_the_study_installed_the_start_page_links_the_runs(tmp_path: Path) -> None:
    app = build_app(Sources([]), runs=tmp_path, scratch=tmp_path / "scratch")
    start = TestClient(app, base_url="http://127.0.0.1").get("/")
    assert start.status_code == 200
    assert 'href="/runs"' in start.text and "not installed" not in start.text
