"""A feedback round may mend the store, never lose a source: every locator the store cited
before the round is cited after it, or the whole round is undone.

The round is memdir's addition to the management protocol (agents/feedback.py), so it must not
cost the store what the episode filed. On the local 1.5B model a round told to retire a stale
value deleted the store's only file, MEMORY.md, with every fact line in it (docs/health.md). A
mend rewrites lines (a value struck through, a reference cut or pointed anew), so the words of a
fact may change; its locator stays, and that is what the gate holds to, as the offline mender's
tests do. The undo lands through the landing kernel (agents/landing.py) as one step, so the
guards hold, the index and journal follow, and the store is as it was byte for byte.

The same gate holds every model-driven management episode (`gate_episode`, from
agents/run.py): on the local model an episode rewrote the root MEMORY.md with raw turn text and
lost its frontmatter fence, writing no memory file (issue 32). An episode is undone whole, as
one `episode-undo` step naming its reasons, when it (a) lost a cited locator, (b) broke the
frontmatter of a file it changed (a fence lost, a block that no longer parses as a mapping, a
`name` or `description` lost where the convention needs them), (c) added to an index a line
that reproduces a turn of its chunk (the rule of `reproduces_turn`; docs/health.md), or (d)
added a keyed or `SUBJECT | KIND: VALUE` line that its cited turn does not bear out about whom,
what and when (`fact_truth.false_reason`, the rules split curation validates by and `bench
writes` scores by): the agentic curator's keyed writes are held to the same truth.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from memdir.agents.landing import apply, digests, plain_files, plan, read, sha256
from memdir.agents.record import RecordIds, RunRecord
from memdir.conventions import LOCATOR, locators, parse_distilled, parse_keyed
from memdir.fact_quality import content_f1
from memdir.fact_truth import false_reason, line_of, stream_names
from memdir.store import frontmatter
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.store import Store
from memdir.stream import Turn
from memdir.tools.profiles import Harness
from memdir.words import terms

UNDO_TOOL = "feedback-undo"
EPISODE_UNDO_TOOL = "episode-undo"
LOST_SOURCES = "lost-sources"
BROKEN_FRONTMATTER = "broken-frontmatter"
RAW_TURNS = "raw-turns-in-index"
FALSE_LINES = "false-fact-lines"
# A line of an index reproduces a turn when its content words match the turn's at content F1
# .8 or more (fact_quality.content_f1): a paraphrase keeps fewer of them, a copy nearly all.
RAW_TURN_F1 = 0.8
# Turns with fewer content words ("Yes, sure!") match too much to be told from an index line.
MIN_TURN_TERMS = 3
# A turn as a chunk renders it (stream.Turn.render): `[S1T2] (2024-05-02) Alice: text`.
_RENDERED = re.compile(r"\[(?P<loc>[^\]]+)\]\s*(?:\(\d{4}-\d{2}-\d{2}\)\s*)?(?P<speaker>[^:\n]{1,80}):\s")


class UndoRecord(TypedDict):
    """Why an episode was undone, as its `episode_undone` record line says it (JSON)."""

    reasons: list[str]
    paths: list[str]
    lost_sources: list[str]
    broken_frontmatter: list[dict[str, str]]
    raw_turn_lines: list[str]
    false_lines: list[str]


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


def undo_round(store: Store, before: Before, *, tool: str = UNDO_TOOL, **meta: object) -> int:
    """Put the store's plain files back as `before` holds them, as one step; the files changed."""
    target = {p: sha256(b) for p, b in before.files.items()}
    with store.step(tool, **meta):
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


@dataclass(frozen=True)
class Verdict:
    """What an episode did to the store that the gate refuses; empty when it left it no worse."""

    lost_sources: tuple[str, ...] = ()
    broken_frontmatter: tuple[tuple[str, str], ...] = ()  # (path, what broke)
    raw_turn_lines: tuple[tuple[str, int], ...] = ()  # (index path, line number)
    false_lines: tuple[tuple[str, int, str], ...] = ()  # (path, line number, fact_truth reason)

    @property
    def worse(self) -> bool:
        return bool(self.lost_sources or self.broken_frontmatter or self.raw_turn_lines or self.false_lines)

    @property
    def reasons(self) -> list[str]:
        named = (
            (LOST_SOURCES, self.lost_sources),
            (BROKEN_FRONTMATTER, self.broken_frontmatter),
            (RAW_TURNS, self.raw_turn_lines),
            (FALSE_LINES, self.false_lines),
        )
        return [reason for reason, found in named if found]

    @property
    def paths(self) -> list[str]:
        """The files the refused changes are in (a lost source names no file: it is gone)."""
        found = {p for p, _ in self.broken_frontmatter} | {p for p, _ in self.raw_turn_lines}
        return sorted(found | {p for p, _, _ in self.false_lines})

    def as_dict(self) -> UndoRecord:
        return {
            "reasons": self.reasons,
            "paths": self.paths,
            "lost_sources": list(self.lost_sources),
            "broken_frontmatter": [{"path": p, "problem": why} for p, why in self.broken_frontmatter],
            "raw_turn_lines": [f"{p}:{n}" for p, n in self.raw_turn_lines],
            "false_lines": [f"{p}:{n} {why}" for p, n, why in self.false_lines],
        }


def judge(store: Store, before: Before, turns: Sequence[Turn]) -> Verdict:
    """What the store lost or broke since `before`, for an episode over `turns`."""
    now = read(store, [mp.text for mp in plain_files(store)])
    changed = {p: b for p, b in now.items() if p.endswith(".md") and before.files.get(p) != b}
    broken: list[tuple[str, str]] = []
    raw: list[tuple[str, int]] = []
    false: list[tuple[str, int, str]] = []
    for path, data in sorted(changed.items()):
        text = data.decode("utf-8", "replace")
        old = before.files.get(path)
        old_text = old.decode("utf-8", "replace") if old is not None else None
        name = path.rsplit("/", 1)[-1]
        was = _frontmatter_problems(old_text, name) if old_text is not None else set()
        broken += [(path, why) for why in sorted(_frontmatter_problems(text, name) - was)]
        if name == MEMORY_INDEX:
            kept = set(old_text.splitlines()) if old_text is not None else set()
            raw += [
                (path, n)
                for n, line in enumerate(text.splitlines(), 1)
                if line not in kept and reproduces_turn(line, turns)
            ]
        false += _false_lines(path, text, old_text, turns)
    return Verdict(tuple(sorted(before.cited - _cited(now))), tuple(broken), tuple(raw), tuple(false))


def _false_lines(
    path: str, text: str, old_text: str | None, turns: Sequence[Turn]
) -> list[tuple[str, int, str]]:
    """The keyed and `KIND` lines new in `text` that cite turns of the chunk and that
    `fact_truth` calls false of them, with the reason."""
    kept = set(old_text.splitlines()) if old_text is not None else set()
    by_locator = {t.locator: t for t in turns}
    speakers = sorted({t.speaker for t in turns})
    names = stream_names(turns)
    found: list[tuple[str, int, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if line in kept or "|" not in line:
            continue
        parsed = parse_keyed(path, n, line) or parse_distilled(line)
        if parsed is None or not line_of(parsed).live:
            continue
        cited = [by_locator[loc] for loc in parsed.locators if loc in by_locator]
        reason = false_reason(line_of(parsed), cited, speakers, names=names) if cited else None
        if reason is not None:
            found.append((path, n, reason))
    return found


def reproduces_turn(line: str, turns: Sequence[Turn]) -> bool:
    """A line that is a turn of `turns` rather than a note about one: the turn as a chunk renders
    it (its locator, then its speaker and a colon), or its content words at content F1 of
    RAW_TURN_F1 or more (locators left out) against a turn of MIN_TURN_TERMS content words."""
    by_locator = {t.locator: t for t in turns}
    for m in _RENDERED.finditer(line):
        turn = by_locator.get(m["loc"])
        if turn is not None and m["speaker"].strip() == turn.speaker:
            return True
    bare = LOCATOR.sub(" ", line)
    if not terms(bare):
        return False
    return any(
        len(terms(t.text)) >= MIN_TURN_TERMS and content_f1(bare, t.text) >= RAW_TURN_F1 for t in turns
    )


def _frontmatter_problems(text: str, filename: str) -> set[str]:
    """What the convention needs of a file's frontmatter that `text` lacks (its naming rules
    aside: a rename is the model's to make, and the write tools hold those)."""
    problems: set[str] = set()
    broken = frontmatter.broken_fence(text)
    if broken is not None:
        problems.add(broken)
    fm = frontmatter.parse(text)
    if not fm.present:
        problems.add("no frontmatter block (its '---' fences are gone)")
        return problems
    problems.update(p for p in fm.problems if p == frontmatter.NOT_A_MAPPING or p in frontmatter.REFUSALS)
    problems.update(p for p in fm.problems if p.startswith("duplicate"))
    if filename != MEMORY_INDEX and fm.name is None:
        problems.add("no 'name' in the frontmatter")
    if not (fm.description or "").strip():
        problems.add("no 'description' in the frontmatter")
    return problems


def gate_episode(
    harness: Harness,
    before: Before,
    turns: Sequence[Turn],
    record: RunRecord | None,
    role: str,
    ids: RecordIds,
) -> Verdict:
    """Undo the episode since `before` whole when it left the store worse; the record says why."""
    verdict = judge(harness.store, before, turns)
    if not verdict.worse:
        return verdict
    reason = ", ".join(verdict.reasons)
    restored = undo_round(harness.store, before, tool=EPISODE_UNDO_TOOL, **harness.meta, reason=reason)
    if record is not None:
        record.write("episode_undone", role=role, **ids, **verdict.as_dict(), files_restored=restored)
    return verdict
