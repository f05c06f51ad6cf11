"""Skill file fate in the paper's categories (Figure 8): kept, rewritten, moved, deleted, for the
files present at 25% of a chain, followed through real tool calls on a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.store import spec
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store
from memdir_study.skills.fate import entry_texts, fate, fate_lines

MUGS = "# Mugs\n- take the mug\n- rinse it\n"  # `merged`'s line, and more


def doc(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name}\n---\n{body}"


def test_each_early_file_lands_in_one_category(tmp_path: Path) -> None:
    store = open_store(tmp_path / "mem", create=True)
    spec.init(store)
    h = Harness(store, "manage", role="test")
    bodies = {
        "same": "# Same\n- go to the sink\n",
        "grown": "# Grown\n- heat the egg\n",
        "changed": "# Changed\n- cool the apple in the fridge\n",
        "renamed": "# Renamed\n- look under the lamp\n",
        "merged": "- take the mug\n",
        "gone": "# Gone\n- a bad idea\n",
    }
    for name, body in bodies.items():
        assert not h.call(
            "create", {"path": f"/memories/skills/{name}.md", "file_text": doc(name, body)}
        ).is_error
    early = entry_texts(store)  # the checkpoint: MEMORY.md is not followed
    assert sorted(early) == sorted(f"/memories/skills/{n}.md" for n in bodies)
    calls = [
        ("insert", {"path": "/memories/skills/grown.md", "insert_line": 6, "insert_text": "- then plate it"}),
        ("str_replace", {"path": "/memories/skills/changed.md", "old_str": "fridge", "new_str": "freezer"}),
        ("rename", {"old_path": "/memories/skills/renamed.md", "new_path": "/memories/light/lamp.md"}),
        ("create", {"path": "/memories/skills/mugs.md", "file_text": doc("mugs", MUGS)}),
        ("delete", {"path": "/memories/skills/merged.md"}),
        ("delete", {"path": "/memories/skills/gone.md"}),
    ]  # fmt: skip
    for tool, args in calls:
        assert not h.call(tool, args).is_error
    got = fate(early, entry_texts(store))
    assert got == {"kept": 2, "untouched": 1, "rewritten": 1, "moved": 2, "deleted": 1}
    assert sum(got[k] for k in ("kept", "rewritten", "moved", "deleted")) == len(early)


FATE = {"kept": 3, "untouched": 1, "rewritten": 2, "moved": 1, "deleted": 4}


def test_the_report_table_has_the_four_categories() -> None:
    cells = [
        {"variant": "no-store", "early_file_fate": {}},
        {"variant": "curated-skills", "early_file_fate": FATE},
        {"variant": "episode-log", "early_file_fate": {"untouched": 35, "edited": 0, "deleted": 0}},
    ]  # fmt: skip
    text = "\n".join(fate_lines(cells))
    assert "| variant | kept | of which untouched | rewritten | moved | deleted |" in text
    assert "| curated-skills | 3 | 1 | 2 | 1 | 4 |" in text
    assert "no-store" not in text and "before Figure 8's categories" in text


@pytest.mark.slow
def test_a_chain_row_records_the_fate_at_the_papers_checkpoint(tmp_path: Path) -> None:
    from memdir_study.bench.alfworld import load_games
    from memdir_study.skills.chain import run_chains

    games = load_games()[:4]  # the checkpoint is task round(0.25 * 4) = 1
    rows = run_chains(tmp_path / "run", ["episode-log"], games=games)
    last = rows[-1]
    assert last["index"] == 4 and last["store_files"] == 4
    assert last["early_fate"] == {"kept": 1, "untouched": 1, "rewritten": 0, "moved": 0, "deleted": 0}
