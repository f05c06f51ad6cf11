"""What became of a skill store's early files: the paper's Figure 8, in its four categories.

The checkpoint is the paper's: the files present after 25% of a chain's tasks (the row of task
`round(0.25 n)`), followed to the chain's end. Each is
- **kept**: still at its path, every line of its body still in it (untouched, or grown);
- **rewritten**: still at its path, some line of its body changed or gone;
- **moved**: gone from its path, its body's lines all in one file at another path (a rename, a
  move into a folder, a merge into another file);
- **deleted**: gone, its content nowhere whole.
Lines are compared after the frontmatter (a move changes `name`) and stripped; memdir's index
files (`MEMORY.md`) are no entries of the store and are not followed (docs/metrics.md, "Store
profile"). `untouched` counts the kept files that are byte-identical, as reports before these
categories did.
"""

from __future__ import annotations

from memdir.store import frontmatter
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.store import Store
from memdir_study.skills.folder import SkillCell

CATEGORIES = ("kept", "rewritten", "moved", "deleted")


def entry_texts(store: Store | None) -> dict[str, str]:
    """{memory path: text} of a store's entries, its index files left out."""
    if store is None:
        return {}
    return {e.path.text: store.read_text(e.path) for e in store.files() if e.path.name != MEMORY_INDEX}


def _lines(text: str) -> set[str]:
    return {line.strip() for line in frontmatter.body(text).split("\n") if line.strip()}


def fate(early: dict[str, str], late: dict[str, str]) -> dict[str, int]:
    """The four categories (and `untouched`, the kept files byte for byte) of the files of
    `early` in `late`, both {memory path: text} of a store's entries."""
    out = dict.fromkeys((*CATEGORIES, "untouched"), 0)
    late_lines = {path: _lines(text) for path, text in late.items()}
    for path, text in early.items():
        mine = _lines(text)
        if path in late:
            if late[path] == text:
                out["kept"] += 1
                out["untouched"] += 1
            else:
                out["kept" if mine <= late_lines[path] else "rewritten"] += 1
        elif mine and any(mine <= lines for other, lines in late_lines.items() if other != path):
            out["moved"] += 1
        else:
            out["deleted"] += 1
    return out


def fate_lines(cells: list[SkillCell]) -> list[str]:
    """The report's table: each store variant's early files by category, summed over its chains.
    A cell summarized from rows written before these categories shows its old counts' names."""
    lines = ["", "## Fate of early files (present at 25% of each chain, at its end; Figure 8)", ""]
    lines += [
        "| variant | kept | of which untouched | rewritten | moved | deleted |",
        "|---|---|---|---|---|---|",
    ]
    for c in cells:
        if c["variant"] == "no-store":
            continue
        f = c["early_file_fate"]
        if "kept" not in f and f:  # untouched / edited / deleted, counted by path and hash
            lines.append(
                f"| {c['variant']} | (before Figure 8's categories: {dict(sorted(f.items()))}) |||||"
            )
            continue
        lines.append(
            f"| {c['variant']} | {f.get('kept', 0)} | {f.get('untouched', 0)} | {f.get('rewritten', 0)} | "
            f"{f.get('moved', 0)} | {f.get('deleted', 0)} |"
        )
    return lines
