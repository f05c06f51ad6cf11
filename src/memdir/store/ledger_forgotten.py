"""What the ingest ledger remembers of a forget, so ingesting the same export again does not bring
the forgotten words back (docs/forget.md).

Two kinds of line go into `<root>/.memdir/ingested.jsonl` (`ingest_ledger.py`), neither holding
the words: `{"forgotten_hmac": <their digest under the store's key>, "bytes": <their length>}`
(`digest_key.py`: a plain hash of a short code is the code again), which leaves out a turn whose
text holds them (every window of that length digested: a turn is short, and a store has few of
these), and `{"forgotten_key": <key>}` for each turn a forgotten line cited (a curated line is a
turn's fact, not its words: the turn is known by the locator it cited). A plain SHA-256
`{"forgotten": ...}` row of an earlier version still leaves its turn out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from memdir.store.digest_key import existing_key, keyed_digest
from memdir.store.paths import STATE_DIR
from memdir.store.store import Store
from memdir.stream import Turn

LEDGER = "ingested.jsonl"  # ingest_ledger.LEDGER: that module imports this one


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Forgotten:
    """The ledger's forgotten words (by keyed digest and length; `plain`: earlier rows' SHA-256)
    and turn keys."""

    digests: dict[int, set[str]]
    keys: frozenset[str]
    plain: dict[int, set[str]] = field(default_factory=dict)
    key: bytes | None = None

    def holds(self, turn: Turn, key: str) -> bool:
        """Is `turn` (placed under `key`) one whose words were forgotten?"""
        if key in self.keys:
            return True
        text = turn.text.encode("utf-8", "surrogatepass")
        store_key = self.key
        kinds: list[tuple[dict[int, set[str]], Callable[[bytes], str]]] = [(self.plain, _sha256)]
        if store_key is not None:
            kinds.append((self.digests, lambda data: keyed_digest(store_key, data)))
        for sizes, digest in kinds:
            for size, wanted in sizes.items():
                for at in range(0, len(text) - size + 1):
                    if digest(text[at : at + size]) in wanted:
                        return True
        return False


def read(store: Store) -> Forgotten:
    digests: dict[int, set[str]] = {}
    plain: dict[int, set[str]] = {}
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
        if isinstance(row.get("forgotten_hmac"), str) and isinstance(row.get("bytes"), int):
            digests.setdefault(row["bytes"], set()).add(row["forgotten_hmac"])
        elif isinstance(row.get("forgotten"), str) and isinstance(row.get("bytes"), int):
            plain.setdefault(row["bytes"], set()).add(row["forgotten"])
        elif isinstance(row.get("forgotten_key"), str):
            keys.add(row["forgotten_key"])
    key = existing_key(store.root) if digests else None
    return Forgotten(digests, frozenset(keys), plain, key)


def rows(
    words: str | None, cited: Iterable[str], ledger_rows: Sequence[tuple[str, str | None]], key: bytes
) -> list[dict[str, object]]:
    """The lines a forget appends: the words' digest under the store's `key`, and the key of
    each ledger row (locator, key) whose locator a forgotten line cited."""
    out: list[dict[str, object]] = []
    if words:
        raw = words.encode("utf-8", "surrogatepass")
        out.append({"forgotten_hmac": keyed_digest(key, raw), "bytes": len(raw)})
    gone = set(cited)
    out.extend({"forgotten_key": key} for loc, key in ledger_rows if loc in gone and key)
    return out
