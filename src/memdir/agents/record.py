"""The run record: one JSON line per model call (and per compaction and episode), append-only.

It says who called (role, variant, chunk or question), what it cost (usage, duration), what
the model asked for (tool calls with their arguments) and how much came back (result sizes).
In every line `tool_calls` is a count (the calls the model, or a baseline, asked for) and
`calls` the list of them with their arguments; :func:`effort` is the one sum of a run's lines.
Keys never get here: nothing reads request headers, every string is redacted as a store's
files are (docs/secrets.md), and every line is scrubbed of the values of secret-looking
environment variables before it is written, as a second guard.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from memdir.models.usage import Bounds, BoundsRecord, Usage, UsageRecord
from memdir.store.private import create
from memdir.store.safefs import private_dirs
from memdir.store.secrets import redact

_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|SECRET|PASSWORD)$|^(OPENAI|ANTHROPIC)_.*KEY", re.IGNORECASE)
REDACTED = "[redacted]"


def secret_values() -> list[str]:
    """Values of environment variables whose names mark them as secrets (8+ characters)."""
    return sorted(
        {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8}, key=len, reverse=True
    )


def scrub(text: str) -> str:
    for value in secret_values():
        text = text.replace(value, REDACTED)
    return text


# What a run-record line is about, beside its kind and role: the variant, and the chunk, the
# question, the task or the pass (`pass` is a keyword, hence the call form), and how a chunk
# was curated (split, or a feedback round). Every line of an episode carries them.
RecordIds = TypedDict(
    "RecordIds",
    {
        "variant": str | None,
        "chunk": int,
        "question": str | None,
        "task": str | int | None,
        "pass": int,
        "curation": str,
        "feedback": bool,
    },
    total=False,
)


class HarnessDelta(TypedDict, total=False):
    """What an episode's tool calls cost the harness (`Meter.as_dict` less the seconds)."""

    calls: int
    bytes_returned: int
    bytes_read: int
    writes: int
    files_touched: int


class RecordLine(RecordIds, total=False):
    """One run-record line as its readers take it: the keys every line has (`ts`, `kind`), who
    wrote it and, on an episode's line, what it cost. A kind's own fields ride along untyped
    (`RunRecord.write`'s keywords), so a reader of one of them adds it here."""

    ts: float
    kind: str
    role: str
    model: str
    usage: UsageRecord
    tool_calls: int
    rounds: int
    harness: HarnessDelta
    bounds: BoundsRecord
    round: int  # a model call's round in its episode
    prompt_bytes: int  # on round 1: the messages sent, before the model read anything
    introduced: int  # a feedback_result: the defects a write brought in,
    mended: int  # those the feedback round mended,
    undone: bool  # and whether the write was undone instead


class CellRecord(TypedDict):
    """One cell of :func:`summarize`: its episodes, their usage, dollars and bounds."""

    episodes: int
    usage: UsageRecord
    cost_usd: float
    bounds: BoundsRecord


@dataclass
class _Cell:
    episodes: int = 0
    usage: Usage = field(default_factory=Usage)
    bounds: Bounds = field(default_factory=lambda: Bounds(0, 0, 0))
    cost_usd: float = 0.0


class RunRecord:
    """Appends records to a JSONL file (or only keeps them in memory when `path` is None)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, **context: Any) -> None:
        self.path = Path(path) if path is not None else None
        self.context = {k: v for k, v in context.items() if v is not None}
        self.entries: list[RecordLine] = []
        self._lock = threading.Lock()
        if self.path is not None:
            private_dirs(self.path.parent)

    def write(self, kind: str, **fields: Any) -> RecordLine:
        entry: dict[str, Any] = {"ts": round(time.time(), 3), "kind": kind, **self.context}
        entry.update({k: v for k, v in fields.items() if v is not None})
        line = scrub(json.dumps(_redacted(entry), ensure_ascii=False, default=str))
        with self._lock:
            self.entries.append(json.loads(line))
            if self.path is not None:
                append_line(self.path, line)
        return cast(RecordLine, entry)


def _redacted(value: Any) -> Any:
    """`value` with the secrets in each string written as `[redacted: kind]` (a tool call's
    arguments carry what the model wrote; docs/secrets.md), before it becomes a JSON line."""
    if isinstance(value, str):
        return redact(value)[0]
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(v) for v in value]
    return value


def append_line(path: Path, line: str) -> None:
    """Append one whole line, even with other processes appending to the same file (the
    workers of a Ray run share one record): one `O_APPEND` write under an exclusive `flock`,
    so no line is ever cut into another, whatever its length."""
    data = (line + "\n").encode("utf-8")
    fd = create(path, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)  # releases the lock


def read_record(path: str | os.PathLike[str]) -> list[RecordLine]:
    """The record's lines, as written."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@dataclass(frozen=True)
class Effort:
    """What a set of episodes cost: the calls asked for, rounds, bytes read and token usage."""

    tool_calls: int
    rounds: int
    bytes_read: int
    usage: Usage


def effort(entries: list[RecordLine]) -> Effort:
    """The sum over episode and offline-step lines (a model call's own lines are inside its
    episode's): used for a build's cost and a question's search alike, so both count the same."""
    usage = Usage()
    calls = rounds = bytes_read = 0
    for e in entries:
        if e.get("kind") not in ("episode", "offline_step"):
            continue
        usage += Usage.from_dict(e.get("usage", {}))
        calls += int(e.get("tool_calls", 0))
        rounds += int(e.get("rounds", 0))
        bytes_read += int((e.get("harness") or {}).get("bytes_read", 0))
    return Effort(calls, rounds, bytes_read, usage)


def bounds(entries: list[RecordLine]) -> Bounds:
    """The intrinsic bounds of the episodes among `entries`, summed: a question's search (or a
    build's), so a cell's caching efficiency is a ratio of sums (the paper's Table 18)."""
    total = Bounds(0, 0, 0)
    for e in entries:
        if e.get("kind") == "episode" and e.get("bounds"):
            b = e["bounds"]
            total += Bounds(int(b["no_cache"]), int(b["measured"]), int(b["perfect"]))
    return total


def summarize(entries: list[RecordLine], by: tuple[str, ...] = ("role", "variant")) -> dict[str, CellRecord]:
    """Per cell (entries grouped by `by`): episodes, usage, dollars and the intrinsic bounds.

    A cell's bounds are the sums of its episodes' bounds, so its caching efficiency is a ratio
    of sums (None when no episode had anything to cache). Offline steps count as episodes with
    zero usage.
    """
    from memdir.models import Bounds, Usage, price_card

    cells: dict[str, _Cell] = {}
    for e in entries:
        if e.get("kind") not in ("episode", "offline_step"):
            continue
        line: Mapping[str, object] = e
        key = " / ".join(str(line.get(k, "-")) for k in by)
        cell = cells.setdefault(key, _Cell())
        cell.episodes += 1
        usage = Usage.from_dict(e.get("usage", {}))
        cell.usage += usage
        if e.get("bounds"):
            b = e["bounds"]
            cell.bounds += Bounds(b["no_cache"], b["measured"], b["perfect"])
        card = price_card(str(e.get("model", "")))
        cell.cost_usd += card.cost(usage) if card else 0.0
    return {
        k: {
            "episodes": c.episodes,
            "usage": c.usage.as_dict(),
            "cost_usd": round(c.cost_usd, 8),
            "bounds": c.bounds.as_dict(),
        }
        for k, c in cells.items()
    }
