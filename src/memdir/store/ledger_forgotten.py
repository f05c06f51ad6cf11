"""What the ingest ledger remembers of a forget, so ingesting the same export again does not bring
the forgotten words back (docs/forget.md).

Two kinds of line go into `<root>/.memdir/ingested.jsonl` (`ingest_ledger.py`), neither holding
the words: `{"forgotten": <SHA-256 of the words>, "chars": <their length>}`, which leaves out a
turn whose text holds them (every window of that length hashed: a turn is short, and a store
has few of these), and `{"forgotten_key": <key>}` for each turn a forgotten line cited (a
curated line is a turn's fact, not its words: the turn is known by the locator it cited).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memdir.store.paths import STATE_DIR
from memdir.store.store import Store
from memdir.stream import Turn

LEDGER = "ingested.jsonl"  # ingest_ledger.LEDGER: that module imports this one


@dataclass(frozen=True)
class Forgotten:
    """The ledger's forgotten words (by digest and length) and turn keys."""

    digests: dict[int, set[str]]
    keys: frozenset[str]

    def holds(self, turn: Turn, key: str) -> bool:
        """Is `turn` (placed under `key`) one whose words were forgotten?"""
        if key in self.keys:
            return True
        text = turn.text.encode("utf-8", "surrogatepass")
        for size, wanted in self.digests.items():
            for at in range(0, len(text) - size + 1):
                if hashlib.sha256(text[at : at + size]).hexdigest() in wanted:
                    return True
        return False


def read(store: Store) -> Forgotten:
    digests: dict[int, set[str]] = {}
    keys: set[str] = set()
    try:
        raw = (store.root / STATE_DIR / LEDGER).read_text(encoding="utf-8")
    except FileNotFoundError:
        return Forgotten({}, frozenset())
    for line in raw.splitlines():
        if '"forgotten' not in line:
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if not isinstance(row, dict):
            continue
        if isinstance(row.get("forgotten"), str) and isinstance(row.get("bytes"), int):
            digests.setdefault(row["bytes"], set()).add(row["forgotten"])
        elif isinstance(row.get("forgotten_key"), str):
            keys.add(row["forgotten_key"])
    return Forgotten(digests, frozenset(keys))


def rows(
    words: str | None, cited: Iterable[str], ledger_rows: Sequence[tuple[str, str | None]]
) -> list[dict[str, object]]:
    """The lines a forget appends: the words' digest, and the key of each ledger row
    (locator, key) whose locator a forgotten line cited."""
    out: list[dict[str, object]] = []
    if words:
        raw = words.encode("utf-8", "surrogatepass")
        out.append({"forgotten": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)})
    gone = set(cited)
    out.extend({"forgotten_key": key} for loc, key in ledger_rows if loc in gone and key)
    return out
