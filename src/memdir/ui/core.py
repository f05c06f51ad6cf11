"""The core-memory gauge of the start page, in bounded time and memory.

Core memory is the root's markdown, and the gauge counts its tokens as `memdir check` does
(`spec.core_file_tokens`, `spec.core_total`). Counting it all made one large root file cost
seconds and hundreds of megabytes per start page
(benchmarks/results/2026-12-06-docstring-figures.md, "ui/core.py"). So a page reads at most
`CORE_READ_BYTES` of core memory in at most `CORE_READ_FILES` files: within that, the count is
exact and the same as `check`'s; past it, the gauge shows a lower bound ("at least N tokens":
the head of a file is counted up to where the tokenizer always cuts, so the rest can only add)
and links to the file it stopped in. A core memory that big is over its 30,000-token budget many
times over, and the bound says so just as well.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from memdir.errors import ToolError
from memdir.store import spec
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.paths import ROOT, MemoryPath
from memdir.store.safefs import utf8_name
from memdir.store.store import Store

CORE_READ_BYTES = 1 << 20
CORE_READ_FILES = 1000


@dataclass(frozen=True)
class Share:
    """One core file's tokens: exact, or a lower bound (`at_least`) from its head."""

    tokens: int
    at_least: bool = False


@dataclass(frozen=True)
class Budget:
    """The core-memory gauge: tokens of the root's markdown against the core budget. Not
    `exact`: `tokens` is a lower bound, counted in the first `read` bytes of core memory, and
    `partial` is the first file not counted whole."""

    tokens: int
    budget: int
    exact: bool = True
    read: int = 0
    partial: str | None = None
    shares: dict[str, Share] = field(default_factory=dict, repr=False)  # by memory path

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.tokens / self.budget)) if self.budget else 100

    @property
    def over(self) -> bool:
        return self.tokens > self.budget


def core_files(store: Store) -> list[MemoryPath]:
    """The markdown files directly in the root, by one listing of the root through its
    link-safe descriptor (no walk below it): what the gauge of a page other than the root's
    needs. Links and hidden names are not core memory, as the store's walk leaves them out."""
    with store.safe.dir_fd((), ROOT.text) as fd, os.scandir(fd) as it:
        return [
            ROOT.child(e.name)
            for e in it
            if e.name.endswith(".md")
            and not e.name.startswith(".")
            and utf8_name(e.name)
            and e.is_file(follow_symlinks=False)
        ]


def gauge(store: Store, core: list[MemoryPath], limit: int = spec.DEFAULT_CORE_BUDGET) -> Budget:
    """The gauge over the core files `core` (the markdown files in the root),
    reading at most `CORE_READ_BYTES` of them; a file that cannot be read (a link, gone
    meanwhile) is not core memory, as `spec.core_tokens` skips it."""
    ordered = sorted(core, key=lambda mp: (mp.name != MEMORY_INDEX, mp.name))
    shares: dict[str, Share] = {}
    left, partial, counted = CORE_READ_BYTES, None, 0
    for i, mp in enumerate(ordered):
        if left <= 0 or i >= CORE_READ_FILES or counted > limit:
            partial = partial or mp.text  # the rest would only add to a count already over
            break
        try:
            data = store.safe.read(mp.parts, mp.text, limit=left + 1)
        except ToolError:
            continue
        text = data[:left].decode("utf-8", "replace")
        if len(data) <= left:
            shares[mp.text] = Share(spec.core_file_tokens(mp.text, text))
        else:
            shares[mp.text] = Share(spec.core_file_tokens_at_least(mp.text, text), at_least=True)
            partial = partial or mp.text
        counted += shares[mp.text].tokens
        left -= min(len(data), left)
    total = spec.core_total([s.tokens for s in shares.values()])
    return Budget(total, limit, partial is None, CORE_READ_BYTES - left, partial, shares)
