"""`memdir adopt`: a folder of markdown notes made a valid memory in place (issue 34, item 2),
every line of every note kept, in one journaled step that `memdir revert` undoes."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.store import frontmatter, spec
from memdir.tools.wiring import open_store

NOTES = {
    "lisbon.md": "# Trip to Lisbon\n\nWe stayed in Alfama.\r\nAna recommended the tram.\n",
    "groceries.md": "\n\noat milk, lentils\n- tofu\n",
    "recipes/dal.md": "---\ntags: [indian]\n---\n## Red lentil dal\nSimmer 20 minutes.\n",
    "recipes/Weekly Plan.md": "Mon: dal\n",
    "work/broken.md": "---\nname: broken\ndescription: never closed\n\nbody\n",
    "work/photo.png": "\x89PNG",
    ".obsidian/app.md": "{}\n",
}


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return root


def _bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.relative_to(root).parts
    }


def test_dry_run_lists_the_changes_and_writes_nothing(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    before = _bytes(root)
    res = CliRunner().invoke(cli, ["adopt", str(root), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "would add frontmatter: /memories/lisbon.md" in res.output
    assert "would make index: /memories/recipes/MEMORY.md" in res.output
    assert _bytes(root) == before and not (root / ".memdir").exists()


def test_adopt_makes_the_folder_valid_keeping_every_line_and_revert_undoes_it(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    (root / "work/broken.md").unlink()  # a broken note is reported (below); here: all valid after
    before = _bytes(root)
    res = CliRunner().invoke(cli, ["adopt", str(root), "--rename"])
    assert res.exit_code == 0, res.output
    after = _bytes(root)
    for rel, text in before.items():
        if rel.endswith(".md") and not rel.startswith(".obsidian"):
            new = after.get(rel) or after[rel.replace("Weekly Plan", "weekly-plan")]
            assert new.endswith(text) or text.startswith(b"---")
    lisbon = after["lisbon.md"].decode()
    assert frontmatter.parse(lisbon).data == {"name": "lisbon", "description": "Trip to Lisbon"}
    assert frontmatter.body(lisbon) == NOTES["lisbon.md"]  # byte-identical, CRLF line included
    assert frontmatter.parse(after["groceries.md"].decode()).description == "oat milk, lentils"
    dal = after["recipes/dal.md"].decode()
    assert frontmatter.parse(dal).data["tags"] == ["indian"]  # the user's keys kept
    assert dal.endswith("tags: [indian]\n---\n## Red lentil dal\nSimmer 20 minutes.\n")
    assert "- [dal.md](dal.md): Red lentil dal" in after["recipes/MEMORY.md"].decode()
    assert "recipes/Weekly Plan.md" not in after and "recipes/weekly-plan.md" in after
    assert (
        after[".obsidian/app.md"] == before[".obsidian/app.md"] and after["work/photo.png"] == b"\xc2\x89PNG"
    )
    assert "left alone: /memories/work/photo.png (not a markdown file)" in res.output
    assert "left alone: /memories/.obsidian (hidden" in res.output
    assert spec.validate(open_store(root)).valid
    step = res.output.rsplit("memdir revert ", 1)[1].split()[1]
    undo = CliRunner().invoke(cli, ["revert", str(root), step])
    assert undo.exit_code == 0, undo.output
    assert _bytes(root) == before


def test_broken_frontmatter_and_odd_names_are_reported_not_rewritten(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    res = CliRunner().invoke(cli, ["adopt", str(root)])
    assert res.exit_code == 0, res.output
    assert (root / "work/broken.md").read_text() == NOTES["work/broken.md"]
    assert "left alone: /memories/work/broken.md (broken frontmatter" in res.output
    assert (root / "recipes/Weekly Plan.md").exists()  # kept without --rename, and said
    assert "kept name: /memories/recipes/Weekly Plan.md (not kebab-case" in res.output


def test_adopting_twice_says_there_is_nothing_to_do(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    assert CliRunner().invoke(cli, ["adopt", str(root), "--rename"]).exit_code == 0
    again = CliRunner().invoke(cli, ["adopt", str(root), "--rename"])
    assert again.exit_code == 1 and "nothing to adopt" in again.output


def test_ingest_of_a_notes_folder_or_a_markdown_file_points_at_adopt(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    mem = tmp_path / "mem"
    CliRunner().invoke(cli, ["init", str(mem)])
    for target in (root, root / "lisbon.md"):
        res = CliRunner().invoke(cli, ["ingest", str(mem), "--model", "offline", str(target)])
        assert res.exit_code != 0 and "memdir adopt" in res.output, res.output
