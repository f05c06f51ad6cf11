"""Growth and lifecycle of a store, replayed from its journal (docs/metrics.md, 'Growth').

The replay reads git objects only (the journal's steps with their changed blobs, then each blob
once, for the whole history), never checks a tree out, so it is safe on a live store.

Per step (step 0 is the baseline, steps 1..n are tool calls): `.md` files, sections and bytes
after the step; creations, edits, deletions and renames the step made (from the changes the
store recorded, so a rename is a rename, not a delete plus a create), and their running totals.
Fate: every `.md` file present after step ceil(n/4) is followed to the end through renames:
`deleted` if it was deleted at any later step (a file later recreated at the same path is a new
file), else `renamed` if it was moved (edits included), else `edited` if modified in place,
else `untouched`. Adherence: the stats record (profile, shape and B1-B4) after every k-th step
and after the last.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from memdir.analytics.stats import compute
from memdir.analytics.tree import Parts, Snapshot
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.store.journal import BASELINE, Journal, JournalStep
from memdir.store.outline import outline
from memdir.store.paths import PREFIX

EVENTS = {"create": "creations", "modify": "edits", "delete": "deletions", "rename": "renames"}
FATES = ("untouched", "edited", "renamed", "deleted")


Fate = Literal["untouched", "edited", "renamed", "deleted"]


class FileFate(TypedDict):
    """What became of a file present at the fate step: where it is now (None once deleted)."""

    fate: Fate
    path: str | None
    edited: bool
    renamed: bool


class FateRecord(TypedDict):
    at_step: int | None
    counts: dict[str, int]
    files: dict[str, FileFate]


class GrowthRecord(TypedDict):
    """growth.json: a row per step (its counts by EVENTS, and their running sums), the fates,
    and a row of the stats per sampled step (`Stats.as_json` less its details)."""

    steps: int
    every: int
    per_step: list[JsonObject]
    fate: FateRecord
    adherence: list[JsonObject]


@dataclass
class Growth:
    steps: list[JsonObject] = field(default_factory=list)
    fate_step: int | None = None
    fates: dict[str, FileFate] = field(default_factory=dict)
    adherence: list[JsonObject] = field(default_factory=list)
    every: int = 10

    def fate_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(FATES, 0)
        for f in self.fates.values():
            counts[f["fate"]] += 1
        return counts

    def as_json(self) -> GrowthRecord:
        return {
            "steps": len(self.steps) - 1,
            "every": self.every,
            "per_step": self.steps,
            "fate": {"at_step": self.fate_step, "counts": self.fate_counts(), "files": self.fates},
            "adherence": self.adherence,
        }


def _states(steps: list[JournalStep]) -> list[dict[str, str]]:
    """The {relative path: blob sha} of `.md` files after every step."""
    state: dict[str, str] = {}
    out: list[dict[str, str]] = []
    for st in steps:
        for status, sha, path in st.raw:
            if not path.endswith(".md"):
                continue
            if status == "D":
                state.pop(path, None)
            else:
                state[path] = sha
        out.append(dict(state))
    return out


def fates(steps: list[JournalStep], states: list[dict[str, str]]) -> tuple[int | None, dict[str, FileFate]]:
    n = len(steps) - 1
    if n < 1:
        return None, {}
    at = math.ceil(n / 4)
    live = {PREFIX + "/" + p: PREFIX + "/" + p for p in states[at]}  # current path -> origin
    flags: dict[str, FileFate] = {
        o: {"fate": "untouched", "path": o, "edited": False, "renamed": False} for o in live
    }
    for st in steps[at + 1 :]:
        for c in st.changes:
            origin = live.get(c.path)
            if origin is None:
                continue
            f = flags[origin]
            if c.kind == "modify":
                f["edited"] = True
            elif c.kind == "rename" and c.new_path:
                del live[c.path]
                live[c.new_path] = origin
                f["renamed"], f["path"] = True, c.new_path
            elif c.kind == "delete":
                del live[c.path]
                f["fate"], f["path"] = "deleted", None
    for f in flags.values():
        if f["fate"] != "deleted":
            f["fate"] = "renamed" if f["renamed"] else "edited" if f["edited"] else "untouched"
    return at, flags


def replay(journal: Journal, every: int = 10, progress: Callable[[int, int], None] | None = None) -> Growth:
    """Everything `memdir growth` reports, from the journal alone."""
    if every < 1:
        raise MemdirError("--every must be at least 1")
    steps = journal.steps(raw=True)
    if not steps:
        raise MemdirError(
            f"{journal.root} has no journal yet; it starts with the first write through memdir's tools"
        )
    states = _states(steps)
    n = len(steps) - 1
    sampled = sorted({*range(0, n + 1, every), n})
    want_text = {sha for i in sampled for sha in states[i].values()}
    all_shas = sorted({sha for s in states for sha in s.values()})
    sizes: dict[str, tuple[int, int]] = {}
    texts: dict[str, str] = {}
    for sha, data in journal.blobs(all_shas):
        text = data.decode("utf-8", "replace")
        sizes[sha] = (len(data), len(outline(text)))
        if sha in want_text:
            texts[sha] = text
    g = Growth(every=every)
    totals = dict.fromkeys(EVENTS.values(), 0)
    for st, state in zip(steps, states, strict=True):
        counts = dict.fromkeys(EVENTS.values(), 0)
        for c in st.changes:
            if c.kind in EVENTS:
                counts[EVENTS[c.kind]] += 1
        for k, v in counts.items():
            totals[k] += v
        g.steps.append(
            {
                "step": st.index,
                "tool": st.tool,
                **{k: st.meta[k] for k in ("role", "chunk", "task") if k in st.meta},
                "time": st.time,
                "files": len(state),
                "sections": sum(sizes[s][1] for s in state.values()),
                "bytes": sum(sizes[s][0] for s in state.values()),
                **counts,
                **{f"cum_{k}": v for k, v in totals.items()},
            }
        )
    g.fate_step, g.fates = fates(steps, states)
    for done, i in enumerate(sampled):
        files: dict[Parts, str] = {tuple(p.split("/")): texts[sha] for p, sha in states[i].items()}
        record = compute(Snapshot.from_files(files)).as_json()
        record.pop("details", None)
        g.adherence.append({"step": i, **record})
        if progress:
            progress(done + 1, len(sampled))
    if steps[0].tool != BASELINE:
        g.steps[0]["note"] = "the journal does not open with a baseline commit"
    return g
