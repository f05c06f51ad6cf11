"""What a store has ingested, and where a new batch of turns goes in its stream: after the
sessions the store already holds, without the turns it already holds, never under a locator
that names another turn, and one ingest at a time.

A ledger, `<root>/.memdir/ingested.jsonl`, rather than a search of the store's lines, because a
curated store keeps a turn's facts, not its words: they cannot be found again in the files. It
holds a line per turn: its locator in the store, a digest of its speaker, text and date
(SHA-256; the words are not kept twice), the batch it came in, and its `key`, the turn's place
in its conversation:

- in a ChatGPT or Claude.ai export, the conversation's id and the message's id
  (`chatlogs/exports.py`): the same message wherever it stands in a later export, and a new
  message however much it repeats an earlier one's words;
- in a log whose locators are derived (messages, speaker/text records, `Memory.add` text), the
  conversation up to and including the turn (a running SHA-256 of the turns' digests): a turn
  appended to an updated log is new even when it says what an earlier turn said that day;
- in turns that carry their own locators (memdir turns, LoCoMo, REALTALK), the locator and the
  digest.

A turn is held when the ledger has its key in a batch that still has lines in the store: a
batch is live while the store cites one of its locators. A batch `memdir revert` undid cites
nothing, so its turns are released; when a later batch is given locators it had (the store
then cites them again, for other turns), a `released` line is written for it first, so it never
counts again. A failed ingest keeps the chunks it landed: each chunk's turns are written as the
chunk lands (`Batch.land`), and rerunning the same command leaves them out and continues the
sessions they began (`S1T17` after `S1T16`, not a new `S2`). An ingest holds `.memdir/ingest.lock`
from placing its batch to its last line, so two ingests of one file at once add it once.

Lines written before keys existed (no `key`) keep their old meaning: the turn with the same
speaker, text and date is held while their batch is live. Derived locators (`S<session>T<turn>`
numbered from 1 by `chatlogs/read.py`) of sessions no earlier batch began are moved past the
highest session the store cites or a live batch holds (docs/conventions.md, "Source locators").
Deleting the ledger loses only this memory.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace

from memdir.conventions import MAX_NUMBER, locators, turn_numbers
from memdir.errors import MemdirError
from memdir.store import ledger_forgotten
from memdir.store.digest_key import store_key
from memdir.store.oslock import FIRST_WAIT, LAST_WAIT, LockTimeout, lock_fd
from memdir.store.paths import STATE_DIR
from memdir.store.store import Store
from memdir.stream import Turn

LEDGER = "ingested.jsonl"
LOCK = "ingest.lock"
DERIVED = frozenset({"openai-messages", "speaker-text", "chatgpt-export", "claude-export"})
"""Formats whose locators `chatlogs/read.py` derives (from S1T1): each batch of them is placed
in the store's stream. The others carry their own."""


def digest(turn: Turn) -> str:
    """A turn's words apart from its locator: its speaker, text and date."""
    raw = json.dumps([turn.speaker, turn.text, turn.date or ""], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def keys(turns: Sequence[Turn], ids: Sequence[str | None] = (), *, derived: bool) -> list[str]:
    """Each turn's place in its conversation (the module docstring): `ids[i]`, the source's own
    id of turn i, where it has one; else the conversation up to the turn (derived locators) or
    the turn's own locator."""
    out: list[str] = []
    running = hashlib.sha256()
    for i, t in enumerate(turns):
        d = digest(t)
        running.update(d.encode())
        given = ids[i] if i < len(ids) else None
        if given:
            out.append(f"id:{given}")
        elif derived:
            out.append(f"seq:{running.hexdigest()}")
        else:
            out.append(f"at:{t.locator}:{d}")
    return out


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
    """1 + the highest session number any `S<n>T<m>` locator in `cites` (default: the store's) names."""
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


# -- the ledger's lines -------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """A turn the ledger remembers; `key` None on lines written before keys (held by `digest`)."""

    locator: str
    digest: str
    batch: str
    key: str | None


@dataclass(frozen=True)
class Ledger:
    rows: list[Row]
    released: frozenset[str]

    def live(self, cites: set[str]) -> list[Row]:
        """The rows of batches not released that the store still cites (one locator is enough:
        a curated store cites the turns it kept facts of, not every turn of the batch)."""
        kept = {r.batch for r in self.rows if r.locator in cites} - self.released
        return [r for r in self.rows if r.batch in kept]


def _read(store: Store) -> Ledger:
    path = store.root / STATE_DIR / LEDGER  # read without making `.memdir/` (check writes nothing)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Ledger([], frozenset())
    rows, released = [], set()
    for line in raw.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill: that turn is simply not remembered
        if not isinstance(row, dict):
            continue
        if isinstance(row.get("released"), str):
            released.add(row["released"])
        elif all(isinstance(row.get(k), str) for k in ("locator", "digest", "batch")):
            key = row.get("key")
            rows.append(
                Row(row["locator"], row["digest"], row["batch"], key if isinstance(key, str) else None)
            )
    return Ledger(rows, frozenset(released))


def _append(store: Store, rows: Sequence[Mapping[str, object]]) -> None:
    """Whole lines in one appended write."""
    if not rows:
        return
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    fd = os.open(store.state_dir / LEDGER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def forget(store: Store, words: str | None, cited: set[str]) -> None:
    """Remember a forget (`ledger_forgotten.py`): its words by digest, and the turns the
    forgotten lines cited, so the same turns ingested again are left out."""
    rows = [(r.locator, r.key) for r in _read(store).rows]
    _append(store, ledger_forgotten.rows(words, cited, rows, store_key(store.root)))


def exists(store: Store) -> bool:
    return (store.root / STATE_DIR / LEDGER).is_file()


def reused(store: Store, cites: set[str]) -> dict[str, int]:
    """Locators the store cites that live batches gave to two or more different turns (different
    speaker, text or date): locator -> how many turns. `memdir check` reports them."""
    turns: dict[str, set[str]] = defaultdict(set)
    for r in _read(store).live(cites):
        turns[r.locator].add(r.digest)
    return {loc: len(d) for loc, d in sorted(turns.items()) if len(d) > 1 and loc in cites}


# -- placing a batch ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """A batch placed in the stream: the turns to ingest (under the locators they get) with
    their keys, and what was left out, continued or moved."""

    turns: list[Turn]
    keys: dict[Turn, str]
    already: int  # turns the store already holds, left out
    first_session: int | None  # derived: where the sessions no earlier batch began now start
    continued: dict[int, int] = field(default_factory=dict)  # session -> turns continuing it
    released: tuple[str, ...] = ()  # dead batches whose locators this batch is given
    forgotten: int = 0  # turns holding words `memdir forget` removed, left out

    def lines(self, total: int) -> list[str]:
        said = []
        if self.already:
            said.append(
                f"{self.already} of {total} turn(s) already in the store (ingested before at the same "
                "place in the same conversation), left out"
            )
        if self.forgotten:
            said.append(
                f"{self.forgotten} turn(s) hold words forgotten by 'memdir forget', left out (docs/forget.md)"
            )
        if self.continued:
            n, where = sum(self.continued.values()), ", ".join(f"S{s}" for s in sorted(self.continued))
            said.append(f"{n} turn(s) continue {where} (begun by an earlier ingest of this conversation)")
        if self.first_session is not None and self.first_session > 1 and self.turns:
            said.append(f"sessions numbered from S{self.first_session} (after those the store cites)")
        return said


def place(store: Store, turns: list[Turn], *, derived: bool, ids: Sequence[str | None] = ()) -> Placed:
    """`turns` without those the store already holds; derived locators continuing the sessions
    an earlier batch of their conversation began, the others moved past the store's sessions;
    turns carrying their own locators refused where one already names another turn. `ids`:
    the source's id of each turn, or None (`ChatLog.ids`)."""
    cites = cited(store)
    ledger = _read(store)
    rows = ledger.live(cites)
    by_key = {r.key: r for r in rows if r.key is not None}
    old = {r.digest for r in rows if r.key is None}  # lines written before keys: their old meaning
    began: dict[int, int] = {}  # derived: a session of this batch -> where an earlier batch put it
    fresh: list[tuple[Turn, str]] = []
    forgotten = ledger_forgotten.read(store)
    left_out = 0
    for t, k in zip(turns, keys(turns, ids, derived=derived), strict=True):
        if forgotten.holds(t, k):
            left_out += 1
            continue
        row = by_key.get(k)
        if row is not None:
            numbers = turn_numbers(row.locator)
            if derived and numbers is not None:
                began[t.session] = numbers[0]
        elif digest(t) not in old:
            fresh.append((t, k))
    already = len(turns) - len(fresh) - left_out
    owned = {r.locator for r in rows}
    if derived:
        placed, first, continued = _derived(store, fresh, began, owned, cites | owned)
    else:
        owner = {r.locator: r.digest for r in rows}
        for t, _ in fresh:
            if owner.get(t.locator, digest(t)) != digest(t):
                raise MemdirError(
                    f"locator {t.locator} already names another turn in this store (an earlier ingest); "
                    "these turns carry their own locators, so they would be cited like that one: ingest "
                    "them into a store of their own, or renumber their sessions"
                )
        placed, first, continued = fresh, None, {}
    given = {t.locator for t, _ in placed}
    live = {r.batch for r in rows}
    dead = {r.batch for r in ledger.rows if r.locator in given and r.batch not in live} - ledger.released
    return Placed(
        [t for t, _ in placed], dict(placed), already, first, continued, tuple(sorted(dead)), left_out
    )


def _derived(
    store: Store, fresh: list[tuple[Turn, str]], began: dict[int, int], owned: set[str], taken: set[str]
) -> tuple[list[tuple[Turn, str]], int | None, dict[int, int]]:
    """Fresh turns of a session an earlier batch began continue it under their own turn number,
    unless a live batch gave that locator to another turn: one the store cites that no line
    names is the conversation's own (the lines of the chunk a failed run did not finish). The
    rest keep their sessions' order after the last session the store cites or a live batch
    holds."""
    out: list[tuple[Turn, str] | None] = []
    rest: list[tuple[int, Turn, str]] = []
    continued: dict[int, int] = defaultdict(int)
    for t, k in fresh:
        numbers = turn_numbers(t.locator)
        assert numbers is not None  # derived locators are S<n>T<m>
        there = began.get(numbers[0])
        loc = f"S{there}T{numbers[1]}"
        if there is not None and loc not in owned:
            owned.add(loc)
            continued[there] += 1
            out.append((replace(t, locator=loc), k))
        else:
            rest.append((len(out), t, k))
            out.append(None)
    first = None
    if rest:
        low = min(t.session for _, t, _ in rest)
        high = max(t.session for _, t, _ in rest)
        first = session_after(store, high - low + 1, taken)
        for i, t, k in rest:
            numbers = turn_numbers(t.locator)
            assert numbers is not None
            out[i] = (replace(t, locator=f"S{numbers[0] - low + first}T{numbers[1]}"), k)
    return [p for p in out if p is not None], first, dict(continued)


# -- recording a batch as it lands --------------------------------------------------------------


class Batch:
    """One ingest's lines in the ledger, written chunk by chunk as the turns land (`land`, the
    `on_landed` of `agents/strategy.ingest_by_strategy`), so a run that fails keeps what it landed."""

    def __init__(self, store: Store, placed: Placed) -> None:
        self.store = store
        self.placed = placed
        self.id = uuid.uuid4().hex[:12]
        self.landed = 0
        self._opened = False

    def land(self, turns: Sequence[Turn]) -> None:
        rows = [] if self._opened else [{"released": b} for b in self.placed.released]
        self._opened = True
        for t in turns:
            key = self.placed.keys.get(t) or keys([t], derived=False)[0]
            rows.append({"locator": t.locator, "digest": digest(t), "batch": self.id, "key": key})
        _append(self.store, rows)
        self.landed += len(turns)

    def resume_note(self) -> str:
        """What a failed run kept, and how to go on."""
        n, total = self.landed, len(self.placed.turns)
        if not n:
            return ""
        return (
            f"; {n} of {total} turn(s) landed and are recorded as ingested: run the same command "
            "again to ingest the rest"
        )


def record(store: Store, turns: list[Turn]) -> None:
    """Remember `turns`, which carry their own locators, as one batch (one appended write)."""
    if turns:
        Batch(store, Placed(list(turns), {}, 0, None)).land(turns)


# -- one ingest at a time -----------------------------------------------------------------------


@contextmanager
def serialized(store: Store, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the store's ingest lock for the block, waiting for an ingest running elsewhere
    (`on_wait` is told first): one ingest places, runs and records at a time."""
    path = store.state_dir / LOCK
    try:
        fd = lock_fd(path, 0)
    except LockTimeout:
        if on_wait is not None:
            on_wait()
        fd = lock_fd(path, float("inf"))
    try:
        yield
    finally:
        os.close(fd)  # closing the only descriptor lets the flock go


@asynccontextmanager
async def serialized_async(store: Store, on_wait: Callable[[], None] | None = None) -> AsyncIterator[None]:
    """`serialized` for a coroutine: the wait yields to the event loop, so another add on the
    same loop (which holds the lock) runs on."""
    path = store.state_dir / LOCK
    wait = FIRST_WAIT
    while True:
        try:
            fd = lock_fd(path, 0)
            break
        except LockTimeout:
            if on_wait is not None and wait == FIRST_WAIT:
                on_wait()
            await asyncio.sleep(wait)
            wait = min(wait * 2, LAST_WAIT)
    try:
        yield
    finally:
        os.close(fd)
