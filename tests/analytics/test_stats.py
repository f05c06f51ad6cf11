"""Profile and shape panel on a hand-built store; expected values computed here by hand."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from click.testing import CliRunner

from memdir.analytics.stats import KEYS, store_stats
from memdir.cli.main import cli
from memdir.tools.wiring import open_store

# Unit texts: the leaves of the combined tree (heading lines and frontmatter excluded).
ROOT_INTRO = "Index of this store: people and an archive."
PEOPLE_INDEX = "People we know, one file each."
BOB = "Bob Stone is a carpenter who builds tables; see /memories/people/alice.md > ## Work"
DIET = "- alice | diet: vegan (since 2023-05-02) [S6T5]\nSame as Bob? see /memories/people/bob.md"
SHIFTS = "Night shifts on weekdays at St. Mary's hospital [S2T7]"

FILES = {
    "MEMORY.md": f"---\ndescription: root index\n---\n# Memory\n{ROOT_INTRO}\n",
    "people/MEMORY.md": f"---\ndescription: people we know\n---\n{PEOPLE_INDEX}\n",
    "people/bob.md": f"---\nname: bob\ndescription: Bob Stone\n---\n{BOB}\n",
    # "#### Shifts" skips a level under "## Work": it still adds exactly one tree level.
    "people/alice.md": (
        "---\nname: alice\ndescription: Alice Park\n---\n"
        f"# Alice\n## Diet\n{DIET}\n## Work\n#### Shifts\n{SHIFTS}\n"
    ),
}


def build(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (root / "archive").mkdir()  # an empty folder: a dir, but neither a unit nor an internal node
    (root / ".memdir").mkdir()  # hidden state is not part of the store
    (root / ".memdir" / "x.md").write_text("# hidden\n", encoding="utf-8")
    return root


def test_profile_and_shape_by_hand(tmp_path: Path) -> None:
    root = build(tmp_path)
    v = store_stats(open_store(root)).as_json()
    # The study's tree leaves memdir's index files (both MEMORY.md) out:
    # root(0) -> archive(1), people(1); people -> alice.md(2), bob.md(2, unit)
    # alice.md -> Alice(3) -> Diet(4, unit), Work(4) -> Shifts(5, unit)
    depths = [2, 4, 5]
    fanouts = [2, 2, 1, 2, 1]  # root, people, alice.md, Alice, Work
    sizes = [len(BOB), len(DIET), len(SHIFTS)]
    assert v["dirs"] == 2  # archive, people: the root is not a folder of the store
    assert v["files"] == 2
    assert v["sections"] == 4  # Alice, Diet, Work, Shifts
    assert v["units"] == 3
    assert v["xrefs"] == 2
    entries = sum(len(t.encode()) for rel, t in FILES.items() if not rel.endswith("MEMORY.md"))
    assert v["bytes"] == entries and v["kb"] == round(entries / 1024, 3)
    # memdir's own count, index files in: four files, and the root index's `# Memory`
    total = sum(len(t.encode()) for t in FILES.values())
    assert (v["memdir_files"], v["memdir_sections"], v["memdir_kb"]) == (4, 5, round(total / 1024, 3))
    assert v["depth_mean"] == sum(depths) / len(depths) == 11 / 3
    assert v["depth_max"] == 5
    assert v["fanout_mean"] == sum(fanouts) / len(fanouts)
    assert v["fanout_max"] == 2
    assert v["cv"] == statistics.pstdev(sizes) / statistics.fmean(sizes)
    assert set(KEYS) <= set(v)


def test_dirs_as_the_study_counts_them(tmp_path: Path) -> None:
    """The paper's examples (docs/metrics.md): "three files under a people/ directory" is 1 dir;
    "sixteen files, no directories" is 0."""
    people, flat = tmp_path / "locomo", tmp_path / "skills"
    for i in range(3):
        (people / "people").mkdir(parents=True, exist_ok=True)
        (people / "people" / f"p{i}.md").write_text(f"---\nname: p{i}\ndescription: x\n---\nx\n")
    flat.mkdir()
    for i in range(16):
        (flat / f"s{i}.md").write_text(f"---\nname: s{i}\ndescription: x\n---\nx\n")
    a = store_stats(open_store(people)).as_json()
    b = store_stats(open_store(flat)).as_json()
    assert (a["dirs"], a["files"]) == (1, 3)
    assert (b["dirs"], b["files"]) == (0, 16)


def test_undefined_metrics_are_null_with_reason(tmp_path: Path) -> None:
    root = tmp_path / "tiny"
    root.mkdir()
    (root / "MEMORY.md").write_text("---\ndescription: root\n---\nshort\n", encoding="utf-8")
    (root / "note.md").write_text("---\nname: note\ndescription: a note\n---\nshort\n", encoding="utf-8")
    v = store_stats(open_store(root)).as_json()
    assert v["units"] == 1 and v["depth_mean"] == 1.0 and v["cv"] == 0.0
    for key in ("b1_mean", "b1_min", "b2", "b3", "b3_loo", "b4"):
        assert v[key] is None
        assert v["null_reasons"][key]  # says why, never a silent 0
    assert v["b4_pairs"] == 0


def test_empty_root_has_null_shape(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    v = store_stats(open_store(root)).as_json()
    assert v["dirs"] == 0 and v["files"] == 0 and v["units"] == 0
    assert v["depth_mean"] is None and "no content units" in v["null_reasons"]["depth_mean"]
    assert v["fanout_mean"] is None and v["cv"] is None


def test_cli_json_and_table(tmp_path: Path) -> None:
    root = build(tmp_path)
    runner = CliRunner()
    res = runner.invoke(cli, ["stats", str(root), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [k for k in KEYS if k not in data] == []
    assert data["sections"] == 4 and data["memdir_sections"] == 5
    res = runner.invoke(cli, ["stats", str(root)])
    assert res.exit_code == 0
    assert "depth_mean" in res.output and "Sackin" in res.output


def test_headings_are_markdown_headings(tmp_path: Path) -> None:
    root = tmp_path / "md"
    root.mkdir()
    body = "Setext title\n============\n```\n# a comment, not a heading\n```\n    # indented code\n"
    (root / "a.md").write_text(f"---\nname: a\ndescription: a\n---\n{body}", encoding="utf-8")
    (root / "b.md").write_text("---\nname: b\ndescription: b\n---\nplain text, #no heading\n")
    v = store_stats(open_store(root)).as_json()
    assert v["sections"] == 1 and v["units"] == 2  # the setext section, and b.md
    assert v["depth_max"] == 2 and v["fanout_max"] == 2
