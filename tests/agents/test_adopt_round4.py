"""`memdir adopt`'s fourth-round defects (issue 46, items 2 and 9): an editor's save made while
adopt lands is kept, not overwritten; a note keeps its mode through adopt and revert; a byte
order mark before valid frontmatter is recognised; a CRLF note gets CRLF frontmatter lines;
links, FIFOs and file names no memory path can spell are listed as left alone, and adopt goes on."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memdir.agents.adopt import adopt, plan
from memdir.cli.main import cli
from memdir.store import frontmatter, spec
from memdir.store.journal import Journal
from memdir.store.store import Step, Store, StoreObserver
from memdir.tools.wiring import open_store

EDITOR = """
import os, sys
path, text = sys.argv[1], sys.argv[2]
tmp = path + ".swp"
with open(tmp, "w", encoding="utf-8") as fh:  # an editor's save: a new file renamed over the note
    fh.write(text)
os.replace(tmp, path)
"""


def _notes(root: Path, n: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"n{i:02d}.md").write_text(f"# Note {i}\n\nline of note {i}\n", encoding="utf-8")


class _EditorSaves(StoreObserver):
    """Another process saves a note once adopt holds the writer lock, after its plan was made."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text, self.done = path, text, False

    def before_step(self, store: Store, step: Step) -> None:
        if step.tool == "adopt" and not self.done:
            self.done = True
            subprocess.run([sys.executable, "-c", EDITOR, str(self.path), self.text], check=True)


def test_an_editors_save_during_adopt_is_kept_and_listed(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _notes(root, 30)
    store = open_store(root)
    planned = plan(store)
    assert "/memories/n07.md" in planned.described
    saved = "# Note 7\n\nline of note 7\nA LINE SAVED WHILE ADOPT RAN\n"
    store.observers.append(_EditorSaves(root / "n07.md", saved))
    landed = adopt(store, planned)
    text = (root / "n07.md").read_text(encoding="utf-8")
    # Before: the planned text (frontmatter + the old body) replaced the save, which no journal
    # snapshot held: lost for good.
    assert text.endswith(saved), text
    assert frontmatter.parse(text).data == {"name": "n07", "description": "Note 7"}
    assert landed.replanned == ["/memories/n07.md"]
    assert any("/memories/n07.md" in ln and "changed on disk" in ln for ln in landed.lines())
    journal = Journal(root)
    blob = journal.files_at(journal.steps()[-1].commit)["n07.md"]
    assert b"A LINE SAVED WHILE ADOPT RAN" in dict(journal.blobs([blob]))[blob]
    assert all((root / f"n{i:02d}.md").read_text().startswith("---\nname: ") for i in range(30))


def test_a_note_created_at_a_planned_path_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _notes(root, 3)
    store = open_store(root)
    planned = plan(store)
    assert "/memories/MEMORY.md" in planned.indexed
    mine = "---\ndescription: my own index\n---\n# Mine\n"
    store.observers.append(_EditorSaves(root / "MEMORY.md", mine))
    landed = adopt(store, planned)
    assert (root / "MEMORY.md").read_text() == mine
    assert "/memories/MEMORY.md" not in landed.indexed


def test_a_notes_mode_is_kept_by_adopt_rename(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "Weekly_Plan.md").write_text("Mon: dal\n")
    (root / "plain.md").write_text("# Plain\n")
    for p in root.iterdir():
        p.chmod(0o644)
    res = CliRunner().invoke(cli, ["adopt", str(root), "--rename"])
    assert res.exit_code == 0, res.output
    # Before: the renamed note was made anew, 0600.
    assert stat.S_IMODE((root / "weekly-plan.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((root / "plain.md").stat().st_mode) == 0o644


def test_revert_of_adopt_rename_gives_the_note_its_mode_back(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "Weekly_Plan.md").write_text("Mon: dal\n")
    (root / "Weekly_Plan.md").chmod(0o644)
    res = CliRunner().invoke(cli, ["adopt", str(root), "--rename"])
    step = res.output.rsplit("memdir revert ", 1)[1].split()[1]
    assert CliRunner().invoke(cli, ["revert", str(root), step]).exit_code == 0
    assert (root / "Weekly_Plan.md").read_text() == "Mon: dal\n"
    assert stat.S_IMODE((root / "Weekly_Plan.md").stat().st_mode) == 0o644


def test_a_byte_order_mark_before_valid_frontmatter_is_recognised(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    block = "---\nname: bom\ndescription: a note an editor saved with a BOM\n---\nbody\n"
    (root / "bom.md").write_bytes(b"\xef\xbb\xbf" + block.encode())
    (root / "plain.md").write_bytes(b"\xef\xbb\xbf# Plain heading\nbody\n")
    res = CliRunner().invoke(cli, ["adopt", str(root)])
    assert res.exit_code == 0, res.output
    # Before: a second block was put in front, its description the BOM itself.
    assert (root / "bom.md").read_text(encoding="utf-8") == block
    assert frontmatter.body((root / "plain.md").read_text()) == "# Plain heading\nbody\n"
    assert frontmatter.parse((root / "plain.md").read_text()).description == "Plain heading"
    assert "byte order mark" in res.output
    assert spec.validate(open_store(root)).valid


def test_a_crlf_note_gets_crlf_frontmatter_lines(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "crlf.md").write_bytes(b"# Crlf note\r\nline two\r\n")
    (root / "half.md").write_bytes(b"---\r\nname: half\r\n---\r\n# Half a block\r\n")
    res = CliRunner().invoke(cli, ["adopt", str(root)])
    assert res.exit_code == 0, res.output
    for name in ("crlf.md", "half.md"):
        data = (root / name).read_bytes()
        # Before: the frontmatter's lines ended in LF alone, the note's in CRLF.
        assert data.count(b"\n") == data.count(b"\r\n"), data
    assert (root / "crlf.md").read_bytes().endswith(b"---\r\n# Crlf note\r\nline two\r\n")
    assert frontmatter.parse((root / "half.md").read_text()).description == "Half a block"


def test_links_fifos_and_unspellable_names_are_listed_and_adopt_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n")
    (root / "ok.md").write_text("# Ok\n")
    (root / "link.md").symlink_to(outside / "secret.md")
    (root / "linked").symlink_to(outside)
    os.mkfifo(root / "pipe.md")
    (root / "new\nline.md").write_text("# Newline\n")
    res = CliRunner().invoke(cli, ["adopt", str(root)])
    # Before: the name with a newline aborted the whole adopt ("invalid path ... control
    # characters"), and the link, the linked folder and the FIFO were passed over unsaid.
    assert res.exit_code == 0, res.output
    assert (root / "ok.md").read_text().startswith("---\nname: ok\n")
    assert "left alone: /memories/link.md (is a symbolic link" in res.output
    assert "left alone: /memories/linked (is a symbolic link" in res.output
    assert "left alone: /memories/pipe.md (is not a regular file" in res.output
    assert "left alone: /memories/new\\nline.md (" in res.output
    assert (root / "new\nline.md").read_text() == "# Newline\n"
    assert (outside / "secret.md").read_text() == "# Secret\n"
    assert "ok.md" in (root / "MEMORY.md").read_text() and "line.md" not in (root / "MEMORY.md").read_text()


DURING_LANDING = r"""
import os, subprocess, sys
from memdir.agents.adopt import adopt, plan
from memdir.store.store import StoreObserver
from memdir.tools.wiring import open_store

root, editor, saved = sys.argv[1], sys.argv[2], sys.argv[3]
state = {"armed": False, "renames": 0}


def hook(event, args):  # the 6th file put in place by adopt's step: an editor saves the last note
    if state["armed"] and event == "os.rename":
        state["renames"] += 1
        if state["renames"] == 6:
            state["armed"] = False
            subprocess.run([sys.executable, "-c", editor, os.path.join(root, "n29.md"), saved], check=True)


class Arm(StoreObserver):
    def before_step(self, store, step):
        state["armed"] = step.tool == "adopt"

    def on_step(self, store, step):
        return None

    def after_step(self, store, step):
        state["armed"] = False


sys.addaudithook(hook)
store = open_store(root)
store.observers.append(Arm())
planned = plan(store)
landed = adopt(store, planned) or planned  # (adopt returned nothing before)
print("\n".join(landed.lines()))
"""


def test_an_editors_save_during_the_landing_itself_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    _notes(root, 30)
    saved = "# Note 29\n\nline of note 29\nSAVED WHILE THE LANDING WROTE OTHER NOTES\n"
    res = subprocess.run(
        [sys.executable, "-c", DURING_LANDING, str(root), EDITOR, saved], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    text = (root / "n29.md").read_text(encoding="utf-8")
    # Before: the landing, already under way when the save came, replaced it.
    assert text.endswith(saved), text
    assert frontmatter.parse(text).data == {"name": "n29", "description": "Note 29"}
    assert "planned again: /memories/n29.md" in res.stdout
    assert all((root / f"n{i:02d}.md").read_text().startswith("---\nname: ") for i in range(30))
    steps = [s for s in Journal(root).steps() if s.tool == "adopt"]
    assert len(steps) == 1 and {c.path for c in steps[0].changes} >= {"/memories/n29.md", "/memories/n00.md"}
