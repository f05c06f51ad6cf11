"""`see /memories/...` references pointed at where what they name moved.

A rename that leaves `see /memories/old.md` behind in other notes leaves a dangling reference
(`memdir check`'s `dangling-xref`), and the reader that follows it finds nothing. So every rename
memdir makes on a person's or an agent's behalf (the rename tool with folder index keeping, `adopt
--rename`) rewrites them in the same step, store-wide. A reference is what the one grammar says
it is (`spec.XREF`, read line by line and trimmed of sentence marks as `spec.xrefs` reads it);
only its path changes, so a section after it (`see PATH > ## Heading`), the line's other words
and its line ending stay byte for byte. A move of a folder moves every reference below it
(`see /memories/a/x.md` reads `see /memories/b/x.md` once `a` is `b`). A path written any other
way (a markdown link, prose) is not a reference and is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memdir.errors import MemdirError
from memdir.store.paths import PREFIX, parse_memory_path
from memdir.store.spec import XREF
from memdir.store.store import Store

_NEEDLES = 8  # moves looked for one by one in a file's bytes; more: any reference at all


def moved_to(target: str, moves: Mapping[str, str]) -> str | None:
    """Where the path `target` is once `moves` ({old path: new path}, files or folders) are
    made, or None when none of them moves it. A dict lookup per folder above it, so a step
    moving 600 notes costs no more per reference than one moving one."""
    bare = target.rstrip("/")
    if bare == PREFIX or not bare.startswith(PREFIX + "/"):
        return None
    cut = len(bare)
    while cut > len(PREFIX):
        new = moves.get(bare[:cut])
        if new is not None:
            return new + target[cut:]
        cut = bare.rfind("/", 0, cut)
    return None


def retarget_line(line: str, moves: Mapping[str, str]) -> str:
    """`line` with each `see OLD` of a moved path read `see NEW` (a section after it is kept)."""

    def swap(m: re.Match[str]) -> str:
        target = m.group(1).rstrip(".:!?")
        new = moved_to(target, moves)
        return m.group(0).replace(target, new, 1) if new else m.group(0)

    return XREF.sub(swap, line)


def retarget(text: str, moves: Mapping[str, str]) -> str:
    """`text` with every reference to a moved path retargeted, every other byte kept."""
    if not moves or PREFIX not in text:
        return text
    lines = text.split("\n")
    out = [retarget_line(ln, moves) if PREFIX in ln else ln for ln in lines]
    return text if out == lines else "\n".join(out)


def plan(store: Store, moves: Mapping[str, str], planned: Mapping[str, str] | None = None) -> dict[str, str]:
    """{path: its text with references retargeted} of every markdown file of `store` holding a
    reference that `moves` breaks (paths as they are before the moves). `planned` gives the
    text a file is about to hold where the caller changes it in the same step; other files are
    read, through one link-safe walk and a reader that keeps its folder open, and only a file
    whose bytes hold a moved path is decoded and split (a rename in a store of 10,000 notes
    reads them all, so that is most of its cost). A file that is not UTF-8 text, or whose name
    no memory path can spell, is left out: nothing can reach it by a reference's words."""
    if not moves:
        return {}
    planned = planned or {}
    needles = [old.encode("utf-8") for old in moves] if len(moves) <= _NEEDLES else [PREFIX.encode() + b"/"]
    out: dict[str, str] = {}
    with store.safe.reader() as reader:
        for f in store.safe.scan((), PREFIX):
            if f.kind != "file" or f.nlink != 1 or not f.parts[-1].endswith(".md"):
                continue
            p = PREFIX + "".join("/" + part for part in f.parts)
            try:
                if p in planned:
                    text = planned[p]
                else:
                    data = reader.read(f.parts)
                    if not any(n in data for n in needles):
                        continue
                    text = data.decode("utf-8")
                parse_memory_path(p)
            except (MemdirError, UnicodeDecodeError):
                continue
            new = retarget(text, moves)
            if new != text:
                out[p] = new
    return out
