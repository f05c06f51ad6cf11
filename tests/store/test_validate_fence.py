"""`validate` reports a frontmatter whose fence was lost or left open, in an index too.

Issue 32: the local model rewrote the root MEMORY.md with its frontmatter fence lost, and
`validate` still said valid (an index may go without frontmatter, so a broken one read as none).
Real files in a temp dir, the real store and validator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_helpers import new_store
from memdir.store import frontmatter, spec

DESCRIPTION = "description: Root index of this memory; core memory, always loaded.\n"
BROKEN_INDEXES = {
    "opening fence lost": f"{DESCRIPTION}---\n# Memory\n- see the folders\n",
    "closing fence lost": f"---\n{DESCRIPTION}# Memory\n- see the folders\n",
    "both fences lost": f"{DESCRIPTION}# Memory\n- see the folders\n",
}


@pytest.mark.parametrize("how", sorted(BROKEN_INDEXES))
def test_an_index_whose_fence_broke_is_not_valid(tmp_path: Path, how: str) -> None:
    store = new_store(tmp_path / "m")
    (tmp_path / "m" / "MEMORY.md").write_text(BROKEN_INDEXES[how], encoding="utf-8")
    report = spec.validate(store)
    assert not report.valid, how
    (v,) = report.violations
    assert (v.path, v.rule) == ("/memories/MEMORY.md", "frontmatter")
    assert "fence" in v.message and "'---'" in v.message  # says what to write


def test_a_file_whose_closing_fence_is_lost_says_so(tmp_path: Path) -> None:
    text = "---\nname: alice\ndescription: Alice\n# Alice\n- a fact [S1T1]\n"
    (msg,) = frontmatter.validate(text, "alice.md")
    assert "closing '---'" in msg


def test_an_index_without_any_frontmatter_stays_valid(tmp_path: Path) -> None:
    """The convention lets an index go without frontmatter: plain markdown is not a broken fence."""
    store = new_store(tmp_path / "m")
    (tmp_path / "m" / "MEMORY.md").write_text("# Memory\n\n- people/: who is who\n", encoding="utf-8")
    assert spec.validate(store).valid
    # nor is a body line that happens to hold a key and a colon further down
    assert frontmatter.validate("# Memory\n\nname: the folders below\n---\n", "MEMORY.md") == []
