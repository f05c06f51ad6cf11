"""The offline curator's answer to live feedback (`--feedback health`): the findings a chunk
introduced, mended by rule instead of by a model (docs/health.md, Feedback).

The offline management play takes the store's health before and after the curator integrates a
chunk, and the findings the chunk introduced (by key: `analytics.health.introduced`) come here,
once per chunk, as the model's come back to it for one extra round. Three kinds are mended,
through the harness, so every change is a metered, journaled tool call:
- `stale-live`: the stale line becomes the dated past entry the finding gives, struck through
  with its end date and its own locator (docs/conventions.md, Keyed facts and dated supersede).
  None is given when two values share one date or one value is live twice: which one holds, or
  which copy's locator may go, needs a reader, and a fact line is never deleted; it is left.
- `dangling-ref`: a reference to a missing section drops the section; one to a missing file
  points at the entry of that name elsewhere (the one nearest the old path: a moved file), and
  with none it is cut from its line, which keeps its fact and its locator.
- `fanout`: the folder's files move into subfolders (`shard.py`).
Every other kind is left, and the record says so. Stale values go first (they give wrong
answers), the shard last, since it moves the files the other mends edit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memdir.agents.feedback import store_health
from memdir.agents.offline.edits import Edits
from memdir.agents.offline.shard import shard_folder
from memdir.agents.record import RecordIds, RunRecord
from memdir.analytics.health import Finding, HealthReport, introduced
from memdir.conventions import LOCATOR, parse_keyed
from memdir.jsontypes import JsonObject
from memdir.models.base import LoggedCall
from memdir.store.moves import MoveLog
from memdir.store.spec import DEFAULT_FANOUT_CAP
from memdir.tools.profiles import Harness

ORDER = ("stale-live", "dangling-ref", "fanout")


@dataclass(frozen=True)
class Outcome:
    """What the mend did about one finding: `acted` (and how) or left (and why)."""

    kind: str
    path: str
    key: str
    acted: bool
    note: str

    def as_dict(self) -> JsonObject:
        return {"kind": self.kind, "path": self.path, "key": self.key, "acted": self.acted, "note": self.note}


@dataclass
class MendResult:
    outcomes: list[Outcome] = field(default_factory=list)
    tool_calls: list[LoggedCall] = field(default_factory=list)

    @property
    def left(self) -> int:
        return sum(1 for o in self.outcomes if not o.acted)


def mend_findings(harness: Harness, findings: list[Finding]) -> MendResult:
    """Act on each finding by its kind's rule; a kind without one is left, with the reason."""
    ed = Edits(harness)
    out = MendResult(tool_calls=ed.calls)
    rank = {k: i for i, k in enumerate(ORDER)}
    for f in sorted(findings, key=lambda f: rank.get(f.kind, len(ORDER))):
        rule = _RULES.get(f.kind)
        if rule is None:
            out.outcomes.append(_left(f, f"the offline curator does not mend {f.kind} findings"))
        else:
            out.outcomes.append(rule(ed, f))
    return out


def _left(f: Finding, why: str) -> Outcome:
    return Outcome(f.kind, f.path, f.key, False, why)


def _nearest(lines: list[str], line: object, hit: Callable[[str], bool]) -> int | None:
    """The index of the line `hit` accepts nearest to line number `line` (where the finding saw
    it: an earlier mend of the same file may have moved it)."""
    want = line if isinstance(line, int) else 0
    found = [i for i, ln in enumerate(lines) if hit(ln)]
    return min(found, key=lambda i: abs(i + 1 - want)) if found else None


def _stale(ed: Edits, f: Finding) -> Outcome:
    stale, new = f.detail.get("stale"), f.detail.get("replacement")
    if not new:
        why = f.detail.get("reason")
        return _left(f, f"no end date to give it ({why}): which value holds needs a reader")
    if stale is None:
        return _left(f, "the finding does not say which line is stale")
    old, past = parse_keyed(f.path, 0, stale["text"]), parse_keyed(f.path, 0, new)
    if old is None or past is None or past.live or past.key != old.key or past.locators != old.locators:
        return _left(f, "the struck-through line offered does not retire this one")
    lines = ed.lines(f.path)
    at = None if lines is None else _nearest(lines, stale["line"], lambda ln: ln == stale["text"])
    if lines is None or at is None:
        return _left(f, "the stale line is no longer there")
    err = ed.rewrite(f.path, lines, {at: [new]})
    return _left(f, err) if err else Outcome(f.kind, f.path, f.key, True, f"struck through: {new.strip()}")


# Where a reference's path ends, as `spec.XREF` reads it: at a character no path holds, after
# any of the sentence marks it strips (so `x.md.` is x.md, and `x.md.md` is another path).
_END = r"""(?=[.:!?]*(?:[\s)\]>,;`'"]|$))"""


def _ref(target: str, section: str | None) -> re.Pattern[str]:
    """`see TARGET` (with ` > SECTION` when given) as written in a line."""
    tail = rf"\s+>\s+{re.escape(section)}" if section else ""
    return re.compile(rf"\b[Ss]ee\s+{re.escape(target)}{tail}{_END}")


_HEADINGS_AFTER = r"(?:\s+>\s+#{1,6} [^\n]*?(?=\s*(?:[\])]|$|\s\[)))?"


def cut_ref(line: str, target: str) -> str:
    """`line` without its reference to `target` (and a section named after it): a wrapping
    `( )` goes with it, else the separator before it. The rest of the line, locator and all,
    stays."""
    see = rf"\b[Ss]ee\s+{re.escape(target)}{_END}{_HEADINGS_AFTER}"
    wrapped = re.compile(rf"\s*\(\s*{see}\s*\)")
    if not wrapped.search(line):
        wrapped = re.compile(rf"\s*[,;:]?\s*{see}")
    return wrapped.sub("", line, count=1).rstrip()


def _shared(a: list[str], b: list[str]) -> int:
    """How many leading path parts `a` and `b` share."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _moved_to(target: str, candidates: list[Any]) -> str | None:
    """The entry of the target's name nearest the old path (most leading folders shared); None
    when there is none or two are equally near."""
    parts = target.split("/")
    best = sorted(((_shared(parts, str(c).split("/")), str(c)) for c in candidates), reverse=True)
    return best[0][1] if best and (len(best) == 1 or best[0][0] > best[1][0]) else None


def _dangling(ed: Edits, f: Finding) -> Outcome:
    target, section = str(f.detail.get("target") or ""), f.detail.get("section")
    if not target:
        return _left(f, "the reference could not be read from the finding")
    ref = _ref(target, section)
    lines = ed.lines(f.path)
    at = None if lines is None else _nearest(lines, f.detail.get("line"), lambda ln: bool(ref.search(ln)))
    if lines is None or at is None:
        return _left(f, "the reference is no longer there")
    line = lines[at]
    dest = None if section else _moved_to(target, list(f.detail.get("candidates") or []))
    m = ref.search(line)
    if m is None:
        return _left(f, "the reference is no longer there")
    head, tail = line[: m.start()] + m.group(0)[: m.group(0).index(target)], line[m.end() :]
    many = len(f.detail.get("candidates") or [])
    if section:
        new, how = head + target + tail, f"dropped ' > {section}', which {target} lacks"
    elif dest:
        new, how = head + dest + tail, f"pointed it at {dest}"
    elif many > 1:
        return _left(f, f"{many} entries have that name, none nearest: which one is meant needs a reader")
    else:
        new, how = cut_ref(line, target), "cut the reference; the line stays"
    emptied = not LOCATOR.search(new) and not re.search(r"\w", re.sub(r"^\s*[-*+]\s*", "", new))
    err = ed.rewrite(f.path, lines, {at: [] if emptied else [new]})
    return _left(f, err) if err else Outcome(f.kind, f.path, f.key, True, how)


def _fanout(ed: Edits, f: Finding) -> Outcome:
    shard = shard_folder(ed, f.path, int(f.detail.get("cap") or DEFAULT_FANOUT_CAP))
    if shard.error:
        done = f" (after moving {len(shard.moved)} file(s))" if shard.moved else ""
        return _left(f, shard.error + done)
    return Outcome(f.kind, f.path, f.key, True, shard.note)


_RULES: dict[str, Callable[[Edits, Finding], Outcome]] = {
    "stale-live": _stale,
    "dangling-ref": _dangling,
    "fanout": _fanout,
}


@dataclass(frozen=True)
class FeedbackResult:
    """One chunk's feedback, counted as the model side counts it (agents/feedback.py)."""

    introduced: int
    mended: int = 0
    remaining: int = 0
    left: int = 0
    mend: MendResult | None = None

    def summary(self) -> str:
        if not self.introduced:
            return "feedback: nothing introduced"
        return f"feedback: {self.introduced} introduced, {self.mended} mended, {self.left} left"


def mend_introduced(
    harness: Harness,
    before: HealthReport,
    record: RunRecord | None,
    role: str,
    ids: RecordIds,
    moved: MoveLog,
) -> FeedbackResult:
    """Mend what the chunk introduced since `before`, writing the `feedback` line (what was
    found) and, when there was something, the `feedback_result` line (what remains). `moved`:
    the renames made since `before`, the mend's own shard included."""
    found = introduced(before, store_health(harness.store), moved.moves)
    if record is not None:
        rows = [{"kind": f.kind, "path": f.path, "key": f.key} for f in found]
        record.write("feedback", role=role, **ids, introduced=len(found), findings=rows)
    if not found:
        return FeedbackResult(0)
    writes = harness.meter.writes
    res = mend_findings(harness, found)
    still = {f.key for f in introduced(before, store_health(harness.store), moved.moves)}
    out = FeedbackResult(len(found), sum(1 for f in found if f.key not in still), len(still), res.left, res)
    if record is not None:
        record.write(
            "feedback_result",
            role=role,
            **ids,
            introduced=out.introduced,
            mended=out.mended,
            remaining=out.remaining,
            left=out.left,
            tool_calls=len(res.tool_calls),
            writes=harness.meter.writes - writes,
            outcomes=[o.as_dict() for o in res.outcomes],
        )
    return out
