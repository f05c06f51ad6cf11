"""The rename tool's references: every `see /memories/...` naming what a rename moves, rewritten
in the rename's own step.

With the product's folder index keeping (`folder_index_keeping.py`), a rename leaves no
reference dangling: the files holding one, anywhere in the store, are planned with
`store/retarget.py` (the one reading of the grammar, `spec.XREF`) and written with the move,
under its intent record, so a kill lands all of it or none. Without it the tools keep the base
contract (the model fixes its own references; the tool's note says so to a model shown the
extensions), so without index keeping nothing here runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from memdir.errors import MemdirError
from memdir.store import retarget
from memdir.store.paths import MemoryPath
from memdir.tools.base import ToolContext
from memdir.tools.folder_index_keeping import Row, keeping


@dataclass(frozen=True)
class Refs:
    """The references a move breaks: `texts` maps each file holding one (by its path after the
    move) to its text with them retargeted; `moved` are those of them that move too."""

    moves: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    moved: frozenset[str] = frozenset()

    def target(
        self, own: dict[str, bytes | None], rows: list[Row]
    ) -> tuple[dict[str, bytes | None], list[Row]]:
        """The move's own effect (`own`, `rows`) with the rewritten files added: a file the move
        itself writes (the moved file naming itself) is retargeted from the bytes it writes."""
        out, more = dict(own), list(rows)
        for p, text in self.texts.items():
            base = own.get(p)
            out[p] = (retarget.retarget(base.decode("utf-8"), self.moves) if base else text).encode("utf-8")
            if ("modify", p, None) not in more:
                more.append(("modify", p, None))
        return out, more

    def said(self) -> str:
        if not self.texts:
            return ""
        return f" Rewrote the 'see' references to it in {', '.join(sorted(self.texts))}."


def plan(ctx: ToolContext, old: MemoryPath, new: MemoryPath) -> Refs:
    """What moving `old` to `new` does to the store's references (none without folder index
    keeping)."""
    if not keeping(ctx):
        return Refs()
    moves = {old.text: new.text}
    found = retarget.plan(ctx.store, moves)
    texts = {retarget.moved_to(p, moves) or p: t for p, t in found.items()}
    return Refs(moves, texts, frozenset(p for p in texts if ctx.store.parse(p).is_within(new)))


def around(ctx: ToolContext, refs: Refs, move: Callable[[], object]) -> Callable[[], None]:
    """`move` with the references rewritten around it: the files that stay first, those that
    move with it after, each from the bytes it holds at that moment (so an index the step's
    upkeep has just rewritten is taken as it now is); all of them put back if anything fails."""

    def write() -> None:
        done: dict[str, str] = {}
        try:
            _rewrite(ctx, [p for p in refs.texts if p not in refs.moved], refs.moves, done)
            move()
            _rewrite(ctx, [p for p in refs.texts if p in refs.moved], refs.moves, done)
        except BaseException:
            for p, text in reversed(done.items()):
                with contextlib.suppress(MemdirError, OSError):
                    ctx.store.write(p, text)
            raise

    return write


def _rewrite(ctx: ToolContext, paths: list[str], moves: dict[str, str], done: dict[str, str]) -> None:
    for p in paths:
        text = ctx.store.read_text(p)
        new = retarget.retarget(text, moves)
        if new != text:
            ctx.store.write(p, new)
            done[p] = text
            ctx.touch(p)
