"""`memdir forget`: a dry run lists what would go and changes nothing; a terminal is asked first,
a script passes --yes; no match and bad input are said plainly, with nothing changed."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.store.journal import Journal, stop_committer
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

SECRET = "ZQXJ-4417-BLUE-HERON"
NOTE = f"---\nname: alice\ndescription: notes on alice\n---\n# alice\n- likes tea\n- door code {SECRET}\n"


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    Harness(open_store(root, create=True, init=True), "manage", keep_indexes=True).call_or_raise(
        "create", {"path": "/memories/alice.md", "file_text": NOTE}
    )
    stop_committer()
    return root


def _state(root: Path) -> tuple[str | None, str]:
    return Journal(root).head(), (root / "alice.md").read_text()


def test_dry_run_lists_and_changes_nothing(tmp_path: Path) -> None:
    root = _store(tmp_path)
    before = _state(root)
    out = CliRunner().invoke(cli, ["forget", str(root), SECRET, "--dry-run", "--json"])
    assert out.exit_code == 0, out.output
    said = json.loads(out.output)
    assert said["dry_run"] and said["files"] == {"/memories/alice.md": 1} and said["steps"]
    text = CliRunner().invoke(cli, ["forget", str(root), SECRET, "--dry-run"]).output
    assert "would go" in text and "step(s) would be rewritten" in text
    assert _state(root) == before


def test_a_script_must_say_yes(tmp_path: Path) -> None:
    root = _store(tmp_path)
    before = _state(root)
    out = CliRunner().invoke(cli, ["forget", str(root), SECRET])
    assert out.exit_code == 2 and "--yes" in out.output
    assert _state(root) == before
    out = CliRunner().invoke(cli, ["forget", str(root), SECRET, "--yes"])
    assert out.exit_code == 0 and "gone" in out.output
    assert SECRET not in (root / "alice.md").read_text()


def test_nothing_matched_and_bad_input_change_nothing(tmp_path: Path) -> None:
    root = _store(tmp_path)
    before = _state(root)
    out = CliRunner().invoke(cli, ["forget", str(root), "NOT-IN-THIS-STORE", "--yes"])
    assert out.exit_code == 1 and "nothing matched" in out.output and "nothing was changed" in out.output
    for args, said in (
        (["ab"], "shorter than"),
        (["--line", "alice.md"], "PATH:N"),
        (["--line", "alice.md:99"], "give a line number"),
        (["--line", "nobody.md:2"], "does not exist"),
        ([SECRET, "--file", "alice.md"], "exactly one of"),
        ([], "exactly one of"),
    ):
        out = CliRunner().invoke(cli, ["forget", str(root), *args, "--yes"])
        assert out.exit_code != 0 and said in out.output, (args, out.output)
    assert _state(root) == before


def _on_terminal(root: Path, answer: bytes) -> str:
    """Run `memdir forget` on a pseudo-terminal, answer its question; what it printed."""
    main, sub = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "forget", str(root), SECRET],
        stdin=sub,
        stdout=sub,
        stderr=sub,
        env=env,
    )
    os.close(sub)
    seen = b""
    deadline = time.monotonic() + 120
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        seen += os.read(main, 4096)
    os.write(main, answer + b"\n")
    proc.wait(120)
    try:
        while chunk := os.read(main, 4096):
            seen += chunk
    except OSError:
        pass  # the terminal closed with the process
    os.close(main)
    return seen.decode("utf-8", "replace")


def test_a_terminal_is_asked_first(tmp_path: Path) -> None:
    root = _store(tmp_path)
    before = _state(root)
    said = _on_terminal(root, b"n")
    assert "would go" in said and "Aborted" in said
    assert _state(root) == before
    said = _on_terminal(root, b"y")
    assert "gone" in said
    assert SECRET not in (root / "alice.md").read_text()


def test_secrets_written_by_hand_go_from_every_version(tmp_path: Path) -> None:
    """`forget --secrets`: secrets that reached the store past the write-time scanner (a file
    edited by hand, journaled by the next open) go from the files and every journal version,
    a private key's whole block included, not only its BEGIN line; `check` then finds none."""
    from memdir.store.traces import traces

    root = _store(tmp_path)
    key = "sk-proj-" + "Tq3vX9bLm2Rk8Wz4Yp6Hs1Jd" * 2
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
    block = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    note = root / "keys.md"
    note.write_text(
        f"---\nname: keys\ndescription: keys pasted by hand\n---\n# keys\n- the bot's key is {key}\n"
        f"- the deploy key:\n\n{block}\n\n- rotate them monthly\n",
        encoding="utf-8",
    )
    open_store(root)  # the next open journals the hand edit, secrets and all
    stop_committer()
    needles = [key.encode(), body.encode()]
    assert set(traces(root, needles)) == set(needles)  # the premise: both are in the history
    runner = CliRunner()
    checked = runner.invoke(cli, ["check", str(root)])
    assert "secret" in checked.output
    out = runner.invoke(cli, ["forget", str(root), "--secrets", "--yes"])
    stop_committer()
    assert out.exit_code == 0, out.output
    assert traces(root, needles) == {}
    kept = note.read_text(encoding="utf-8")
    assert "- rotate them monthly" in kept and "the bot's key is [redacted]" in kept
    assert "secret" not in runner.invoke(cli, ["check", str(root)]).output
    again = runner.invoke(cli, ["forget", str(root), "--secrets", "--yes"])
    assert again.exit_code == 1 and "nothing matched" in again.output
