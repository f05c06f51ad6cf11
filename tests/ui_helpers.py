"""The store the UI tests look at, built through memdir's own tools (so it has a real journal
and index), and the headless browser they drive it with.

The store plants what each page must show: core memory in the root, folders with indexes, a
`see` reference that resolves and one that dangles, source locators, a keyed fact superseded
over two steps, and a file holding `<script>`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from memdir.api.memory import Memory

# Debian's packages (scripts/setup-system.sh installs them), found on PATH
CHROMIUM = shutil.which("chromium") or "chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "chromedriver"
SCRIPT_TEXT = "<script>document.title='PWNED'; window.pwned = 1;</script>"

FILES: list[tuple[str, str]] = [
    (
        "/memories/people/MEMORY.md",
        "---\ndescription: People the user talks about, one file each.\n---\n# People\n\n"
        "- Alice: see /memories/people/alice.md\n",
    ),
    (
        "/memories/people/alice.md",
        "---\nname: alice\ndescription: Alice, the user's sister, and what she does.\n---\n# Alice\n\n"
        "## Work\n\n- Alice | job: teacher (since 2023-01-05) [S1T2]\n\n"
        "## Family\n\nShe has two cats [S2T4, S2T5]. For her trips, see /memories/travel/2023.md\n",
    ),
    (
        "/memories/travel/MEMORY.md",
        "---\ndescription: Trips, one file per year.\n---\n# Travel\n\n"
        "- 2023: see /memories/travel/2023.md\n- The old plan: see /memories/travel/plan-gone.md\n",
    ),
    (
        "/memories/travel/2023.md",
        "---\nname: 2023\ndescription: Trips taken in 2023.\n---\n# 2023\n\nParis in May [S3T1].\n",
    ),
    (
        "/memories/notes/MEMORY.md",
        "---\ndescription: Loose notes.\n---\n# Notes\n\n- hostile: see /memories/notes/hostile.md\n",
    ),
    (
        "/memories/notes/hostile.md",
        "---\nname: hostile\ndescription: A note holding markup that must stay text.\n---\n"
        f"# Hostile\n\n{SCRIPT_TEXT}\n\n"
        '<img src="http://203.0.113.9/x.png" onerror="window.pwned=2">\n\n'
        "[click](javascript:window.pwned=3) ![remote](http://203.0.113.9/y.png)\n",
    ),
]


def build_store(root: Path) -> Memory:
    """The sample store at `root`: its MEMORY.md from init, then one journaled step per call."""
    mem = Memory(root)
    call(
        mem,
        "str_replace",
        {
            "path": "/memories/MEMORY.md",
            "old_str": "put detail in folders, each with its own MEMORY.md that indexes its files.",
            "new_str": "put detail in folders, each with its own MEMORY.md that indexes its files.\n\n"
            "- people: see /memories/people/MEMORY.md\n- travel: see /memories/travel/MEMORY.md",
        },
    )
    for path, text in FILES:
        call(mem, "create", {"path": path, "file_text": text})
    call(
        mem,
        "str_replace",
        {
            "path": "/memories/people/alice.md",
            "old_str": "- Alice | job: teacher (since 2023-01-05) [S1T2]",
            "new_str": "- ~~Alice | job: teacher~~ (2023-01-05 until 2024-03-01) [S1T2]\n"
            "- Alice | job: principal (since 2024-03-01) [S4T1]",
        },
    )
    return mem


def call(mem: Memory, tool: str, args: dict[str, Any]) -> None:
    result = mem.call(tool, args)
    if result.is_error:
        raise AssertionError(f"building the sample store: {tool} failed: {result.text}")


def chrome_missing() -> str | None:
    """Why no browser test can run here, or None when chromium, its driver and selenium exist."""
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not os.path.isabs(exe) or not os.access(exe, os.X_OK):
            return (
                f"{exe} is missing: install Debian's chromium and chromium-driver (scripts/setup-system.sh)"
            )
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[dev]'"
    return None


class Browser:
    """Headless chromium from the system's packages, with a fresh profile, driven by selenium.

    The flags keep it from reaching the network on its own (a closed network makes a browser
    that tries hang or misbehave)."""

    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = Path(tempfile.mkdtemp(prefix="memdir-ui-chrome-"))
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for flag in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,900",
            f"--user-data-dir={self.profile}",
        ):
            opts.add_argument(flag)
        self.driver: Any = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
