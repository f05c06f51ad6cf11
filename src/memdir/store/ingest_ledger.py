"""Where a batch of turns goes in a store's stream: after the sessions the store already cites,
without the turns it already holds, and never under a locator that names another turn.

Derived locators (`S<session>T<turn>` numbered from 1 by `chatlogs/read.py`) are moved past the
highest session any locator in the store cites, so a second conversation is not cited `[S1T1]`
like the first (docs/conventions.md, "Source locators").

What was ingested is kept in a ledger, `<root>/.memdir/ingested.jsonl`: a line per turn with its
locator, a digest of its speaker, text and date (SHA-256; the words themselves are not kept
twice) and the batch it came in. A ledger rather than a search of the store's lines, because a
curated store keeps a turn's facts, not its words: they cannot be found again in the files. A
turn is "already in the store" when the ledger holds its digest in a batch the store still cites
(one of the batch's locators appears in some file): a batch undone by `memdir revert` no longer
counts, so ingesting it again is not refused. Deleting the ledger loses only this memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections import defaultdict
from dataclasses import dataclass, replace

from memdir.conventions import MAX_NUMBER, locators, turn_numbers
from memdir.errors import MemdirError
from memdir.store.paths import STATE_DIR
from memdir.store.store import Store
from memdir.stream import Turn

LEDGER = "ingested.jsonl"
DERIVED = frozenset({"openai-messages", "speaker-text", "chatgpt-export", "claude-export"})
"""Formats whose locators `chatlogs/read.py` derives (from S1T1): each batch of them is moved
past the sessions the store already cites. The others carry their own."""


def digest(turn: Turn) -> str:
    """A turn's identity apart from its locator: same speaker, text and date, same turn."""
    raw = json.dumps([turn.speaker, turn.text, turn.date or ""], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def cited(store: Store) -> set[str]:
    """Every locator any file of the store cites (one read of each file)."""
    out: set[str] = set()
    for entry in store.files():
        try:
            text = store.read_text(entry.path)
        except MemdirError:
            continue  # gone since the walk
        out.update(locators(text))
    return out


def next_session(store: Store, cites: set[str] | None = None) -> int:
    """1 + the highest session number any `S<n>T<m>` locator in the store cites."""
    top = 0
    for loc in cited(store) if cites is None else cites:
        numbers = turn_numbers(loc) if loc.startswith("S") else None
        if numbers is not None:
            top = max(top, numbers[0])
    return top + 1


def session_after(store: Store, span: int, cites: set[str] | None = None) -> int:
    """The store's next session, refused when `span` more sessions would pass what a locator
    holds (a store citing `S999999999T1`, written outside the tools)."""
    first = next_session(store, cites)
    if first + max(span - 1, 0) > MAX_NUMBER:
        raise MemdirError(
            f"the store already cites session {first - 1:,}; a locator holds at most {MAX_NUMBER:,}, "
            "so no later session can be numbered; renumber the locators that cite it"
        )
    return first


def shifted(turns: list[Turn], offset: int) -> list[Turn]:
    """Derived locators moved `offset` sessions on."""
    if offset == 0:
        return turns
    out: list[Turn] = []
    for t in turns:
        numbers = turn_numbers(t.locator)
        assert numbers is not None  # derived locators are S<n>T<m>
        out.append(replace(t, locator=f"S{numbers[0] + offset}T{numbers[1]}"))
    return out


@dataclass(frozen=True)
class Placed:
    """A batch placed in the stream: the turns to ingest, and what was left out or moved."""

    turns: list[Turn]
    already: int  # turns the store already holds, left out
    first_session: int | None  # derived: the session the batch now starts at

    def lines(self, total: int) -> list[str]:
        said = []
        if self.already:
            said.append(
                f"{self.already} of {total} turn(s) already in the store (ingested before: same "
                "speaker, text and date), left out"
            )
        if self.first_session is not None and self.first_session > 1 and self.turns:
            said.append(f"sessions numbered from S{self.first_session} (after those the store cites)")
        return said


def _read(store: Store) -> list[dict[str, str]]:
    path = store.root / STATE_DIR / LEDGER  # read without making `.memdir/` (check writes nothing)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    rows = []
    for line in raw.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill: that turn is simply not remembered
        if isinstance(row, dict) and {"locator", "digest", "batch"} <= row.keys():
            rows.append(row)
    return rows


def live(store: Store, cites: set[str]) -> list[dict[str, str]]:
    """The ledger's rows whose batch the store still cites."""
    rows = _read(store)
    kept = {r["batch"] for r in rows if r["locator"] in cites}
    return [r for r in rows if r["batch"] in kept]


def exists(store: Store) -> bool:
    return (store.root / STATE_DIR / LEDGER).is_file()


def reused(store: Store, cites: set[str]) -> dict[str, int]:
    """Locators the store cites that the ledger gave to two or more different turns (different
    speaker, text or date): locator -> how many turns. `memdir check` reports them."""
    turns: dict[str, set[str]] = defaultdict(set)
    for r in live(store, cites):
        turns[r["locator"]].add(r["digest"])
    return {loc: len(d) for loc, d in sorted(turns.items()) if len(d) > 1 and loc in cites}


def place(store: Store, turns: list[Turn], *, derived: bool) -> Placed:
    """`turns` without those the store already holds; derived locators moved past the store's
    sessions; turns carrying their own locators refused where one already names another turn."""
    cites = cited(store)
    rows = live(store, cites)
    held = {r["digest"] for r in rows}
    owner = {r["locator"]: r["digest"] for r in rows}
    fresh = [t for t in turns if digest(t) not in held]
    if derived:
        if not fresh:
            return Placed([], len(turns), None)
        numbers = [turn_numbers(t.locator) for t in fresh]
        low = min(n[0] for n in numbers if n is not None)
        high = max(n[0] for n in numbers if n is not None)
        first = session_after(store, high - low + 1, cites)
        return Placed(shifted(fresh, first - low), len(turns) - len(fresh), first)
    for t in fresh:
        if owner.get(t.locator, digest(t)) != digest(t):
            raise MemdirError(
                f"locator {t.locator} already names another turn in this store (an earlier ingest); "
                "these turns carry their own locators, so they would be cited like that one: ingest "
                "them into a store of their own, or renumber their sessions"
            )
    return Placed(fresh, len(turns) - len(fresh), None)


def record(store: Store, turns: list[Turn]) -> None:
    """Remember `turns` as one batch (one appended write of whole lines)."""
    if not turns:
        return
    batch = uuid.uuid4().hex[:12]
    data = "".join(
        json.dumps({"locator": t.locator, "digest": digest(t), "batch": batch}) + "\n" for t in turns
    ).encode()
    fd = os.open(store.state_dir / LEDGER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
