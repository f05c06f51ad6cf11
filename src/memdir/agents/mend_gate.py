"""A feedback round may mend the store, never lose a source: every locator the store cited
before the round is cited after it, or the whole round is undone.

The round is memdir's addition to the study's protocol (agents/feedback.py), so it must not
cost the store what the episode filed. On the local 1.5B model a round told to retire a stale
value deleted the store's only file, MEMORY.md, with every fact line in it (docs/health.md).
A mend rewrites lines (a value struck through, a reference cut or pointed anew), so the words
of a fact may change; its locator stays, and that is what the gate holds to, as the offline
mender's tests do. The undo lands through the landing kernel (agents/landing.py) as one step,
so the guards hold, the index and journal follow, and the store is as it was byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.agents.landing import apply, digests, plain_files, plan, read, sha256
from memdir.conventions import locators
from memdir.store.store import Store

UNDO_TOOL = "feedback-undo"


@dataclass
class Before:
    """The store's plain files and the locators they cite, as the round found them."""

    files: dict[str, bytes]
    cited: frozenset[str] = field(default_factory=frozenset)


def before_round(store: Store) -> Before:
    files = read(store, [mp.text for mp in plain_files(store)])
    return Before(files, _cited(files))


def lost_sources(store: Store, before: Before) -> list[str]:
    """The locators `before` cited that the store no longer cites, sorted."""
    now = read(store, [mp.text for mp in plain_files(store)])
    return sorted(before.cited - _cited(now))


def undo_round(store: Store, before: Before, **meta: object) -> int:
    """Put the store's plain files back as `before` holds them, as one step; the files changed."""
    target = {p: sha256(b) for p, b in before.files.items()}
    with store.step(UNDO_TOOL, **meta):
        ops = plan(digests(store), target)
        if not ops.empty:
            apply(store, ops, {p: before.files[p] for p in ops.needed}, read(store, ops.old_side))
    return len(ops.deletes) + len(ops.renames) + len(ops.writes) + len(ops.creates)


def _cited(files: dict[str, bytes]) -> frozenset[str]:
    return frozenset(
        loc
        for p, data in files.items()
        if p.endswith(".md")
        for loc in locators(data.decode("utf-8", "replace"))
    )
