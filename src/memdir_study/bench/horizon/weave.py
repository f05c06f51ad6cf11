"""Real conversations woven into the simulated year: LoCoMo and REALTALK sessions, re-dated.

A simulated life says what it is built to say; real people ramble, joke and half-say things. So
the year also holds real sessions, taken in each conversation's own order (a conversation's facts
evolve as its people lived them), alternating between the two sources, each seed starting at
a conversation of its own. Each real session is
moved to the day the year gives it: its turns are dated that day and numbered as the year's
session (`S<year session>T<its own turn>`), and LoCoMo's reference facts (`observation`) move
with it, their evidence renumbered the same way. REALTALK has no reference facts: its sessions
dilute the stream and grow the store, and nothing is scored on them.

The data comes from `MEMDIR_DATA` (`bench/data.py`); when a source is absent the error says which
file is missing and where to put it, rather than weaving a thinner year silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

from memdir.stream import Turn
from memdir_study.bench import locomo, realtalk
from memdir_study.bench.data import DataUnavailable, data_root
from memdir_study.bench.locomo import Observation

T = TypeVar("T")


@dataclass(frozen=True)
class RealSession:
    """One session of a real conversation, as its source numbers it."""

    source: str  # "locomo conv-26 S3"
    turns: tuple[Turn, ...]
    observations: tuple[Observation, ...]

    def placed(self, number: int, day: str) -> tuple[list[Turn], list[Observation]]:
        """Its turns and reference facts as session `number` of the year, dated `day`."""
        moved = {t.locator: f"S{number}T{t.locator.split('T', 1)[1]}" for t in self.turns}
        turns = [Turn(moved[t.locator], t.speaker, t.text, day) for t in self.turns]
        facts = [
            Observation(number, o.speaker, o.text, tuple(moved[e] for e in o.evidence if e in moved))
            for o in self.observations
        ]
        return turns, [o for o in facts if o.evidence]


def _turned(items: list[T], by: int) -> list[T]:
    """`items` starting at the `by`-th (modulo their count): each seed its own conversations first."""
    if not items:
        return items
    k = by % len(items)
    return items[k:] + items[:k]


def _locomo(seed: int) -> Iterator[RealSession]:
    for raw in _turned(locomo.load_all(), seed):  # DataUnavailable names the file and where it goes
        sample = locomo.from_raw(raw)
        facts = locomo.observations_from_raw(raw).facts
        for n, turns in sample.session_turns().items():
            held = {t.locator for t in turns}
            obs = tuple(o for o in facts if o.evidence and all(e in held for e in o.evidence))
            yield RealSession(f"locomo {sample.id} S{n}", tuple(turns), obs)


def realtalk_chats() -> list[str]:
    """The REALTALK chats under the data folder; none is an error that says where they go."""
    here = data_root() / "realtalk"
    found = [c for c in realtalk.CHATS if (here / f"{c}.json").is_file()]
    if not found:
        raise DataUnavailable(
            f"no REALTALK chat under {here}: the horizon bench weaves REALTALK sessions into its year; "
            f"put Chat_*.json there (source: {realtalk.SOURCE}) or point MEMDIR_DATA at a folder that "
            "holds realtalk/Chat_*.json"
        )
    return found


def _realtalk(seed: int) -> Iterator[RealSession]:
    here = data_root() / "realtalk"
    for chat in _turned(realtalk_chats(), seed):
        sample = realtalk.from_raw(chat, json.loads((here / f"{chat}.json").read_text(encoding="utf-8")))
        for n, turns in sample.session_turns().items():
            yield RealSession(f"realtalk {chat} S{n}", tuple(turns), ())


def real_sessions(count: int, seed: int = 0) -> list[RealSession]:
    """The first `count` real sessions, alternating LoCoMo and REALTALK (one source running out,
    the other continues), each source's conversations starting at the seed's; fewer only when
    both are spent."""
    sources = [_locomo(seed), _realtalk(seed)]
    out: list[RealSession] = []
    while len(out) < count and sources:
        for it in list(sources):
            if len(out) >= count:
                break
            got = next(it, None)
            if got is None:
                sources.remove(it)
            else:
                out.append(got)
    return out
