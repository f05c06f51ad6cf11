"""An Anthropic SDK helper's memory folder made a memdir store in place, losing nothing.

`BetaLocalFilesystemMemoryTool` lets Claude write any name (`user_preferences.txt`, `Notes.md`)
with no frontmatter; the tools edit only `.md` files, and `validate` asks each to be a memory
file (a kebab-case name, `name` and `description`). So the first `Memory(BASE)` over such a
folder (`store/sdk_layout.py` finds its root, `BASE/memories`) converts it before anything else:

1. each file whose name is not a memory file name moves to the one it stands for
   (`frontmatter.memory_name`, the rule by which the Anthropic adapter maps Claude's names, so
   `/memories/user_preferences.txt` keeps reaching `user-preferences.md`), byte for byte, one
   atomic rename each, all in one journaled step;
2. `memdir adopt` (`agents/adopt.py`) then gives every note without frontmatter its `name`
   and `description` above the unchanged text, and each memory directory its `MEMORY.md`, in
   one landing.

Left as they are, and named in the result: a file whose memory name another file already has
or another file maps to (which one is Claude's is not for memdir to guess), a name with no
letter or digit to map, and a file that is not UTF-8 text. A kill between the two steps leaves
files with memory names and no frontmatter; the root still has no `MEMORY.md` then, so the next
`Memory(BASE)` converts again (step 1 finds nothing to move) and completes it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from memdir.agents import adopt
from memdir.errors import MemdirError
from memdir.store.frontmatter import MEMORY_INDEX, is_memory_name, memory_name
from memdir.store.paths import MemoryPath
from memdir.store.spec import governed_dirs, is_governed
from memdir.store.store import Store

TOOL = "adopt-sdk"


@dataclass
class Conversion:
    """What converting did: (old, new) memory paths moved, notes given frontmatter, indexes
    made, and (path, why) of each file left as it was."""

    moved: list[tuple[str, str]] = field(default_factory=list)
    described: list[str] = field(default_factory=list)
    indexed: list[str] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"renamed: {a} -> {b} (its old path keeps reaching it through the adapter)" for a, b in self.moved
        ]
        out += [f"frontmatter added: {p}" for p in self.described]
        out += [f"index made: {p}" for p in self.indexed]
        return out + [f"left as it was: {p} ({why})" for p, why in self.left]


def plan_moves(store: Store) -> tuple[list[tuple[MemoryPath, MemoryPath]], list[tuple[str, str]]]:
    """(moves to memory file names, files left with why), from the files alone."""
    governed = governed_dirs(store)
    files = [e.path for e in store.walk() if not e.is_dir and not is_governed(e.path, governed)]
    present = {mp.text for mp in files}
    wanted: dict[MemoryPath, MemoryPath] = {}
    left: list[tuple[str, str]] = []
    for mp in files:
        if mp.name == MEMORY_INDEX or is_memory_name(mp.name):
            continue
        name = memory_name(mp.name)
        if name is None:
            left.append((mp.text, "no letter or digit (a-z, 0-9) to name a memory file by"))
            continue
        try:
            store.read_text(mp)
        except MemdirError as exc:
            left.append((mp.text, str(exc)))
            continue
        wanted[mp] = mp.parent.child(name)
    claims = Counter(new.text for new in wanted.values())
    moves: list[tuple[MemoryPath, MemoryPath]] = []
    for old, new in sorted(wanted.items(), key=lambda kv: kv[0].parts):
        if new.text in present:
            left.append((old.text, f"its memory name {new.text} is another file's"))
        elif claims[new.text] > 1:
            others = sorted(o.text for o, n in wanted.items() if n == new and o != old)
            left.append((old.text, f"{', '.join(others)} would take the same memory name {new.text}"))
        else:
            moves.append((old, new))
    return moves, left


def convert(store: Store, **meta: str) -> Conversion:
    """Convert the folder `store` is rooted in (see the module's docstring); call it before the
    root's `MEMORY.md` is made, which marks the conversion done."""
    out = Conversion()
    moves, out.left = plan_moves(store)
    if moves:
        with store.step(TOOL, **meta):
            for old, new in moves:
                store.rename(old, new)
                out.moved.append((old.text, new.text))
    adoption = adopt.plan(store)
    adopt.adopt(store, adoption)
    out.described, out.indexed = list(adoption.described), list(adoption.indexed)
    named = {p for p, _ in out.left}
    out.left += [(p, why) for p, why in adoption.left if p not in named]
    return out
