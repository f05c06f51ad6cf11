"""Guards an operator can switch on: refusals checked before a write lands, phrased for the model.

Each guard sees the exact write about to happen (the file's new text, or the paths a delete or
rename touches), so it judges the result rather than guessing from the tool arguments. A
refusal is a :class:`GuardError` (a tool error): nothing is written, and the text says what to
do instead. The guards live in :class:`GuardedStore`, so every writer that goes through the
store (the file tools, the Anthropic memory adapter, the MCP server) is held to them.

- core budget: core memory (markdown directly in the root, always in the prompt) may not grow
  past a token budget; detail belongs in subdirectories (docs/study.md, size guidance).
- fanout cap: a create or rename may not give a folder more than N entries (docs/study.md, design rule 2).
- preservation: in a step marked as reorganization (meta `reorganize=True`), a write may not
  make a fact line (a line with a source locator) disappear from the store (docs/study.md, design rule 4).
- one live value: a write may not add a live keyed fact (`- SUBJECT | ATTRIBUTE: VALUE (since
  DATE) [LOC]`) whose key already has a live line in the store (docs/study.md, design rule 3, the invariant
  `memdir check` reports as `supersede`); the refusal shows the supersede form. The local model
  repeated keyed lines in every curated store it built, and `check` only said so afterwards.
- outcome gate (skill setting): in a step integrating a failed attempt (meta
  `outcome="failure"`), a write may not create a procedure (`metadata.type: skill`) or add a
  line to one; it may still remove or narrow lines, and write notes anywhere.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memdir.conventions import Fact, KeyedFact, fact_identity, keyed_facts
from memdir.errors import ToolError
from memdir.store import frontmatter, spec
from memdir.store.paths import MemoryPath
from memdir.store.store import Store
from memdir.tokens import count_tokens


class GuardError(ToolError):
    """A write an operator's guard refused; the message says what to do instead."""


@dataclass(frozen=True)
class Guards:
    """Which guards are on. `None` / False leaves a guard off (the default: all off)."""

    core_budget: int | None = None
    fanout_cap: int | None = None
    preserve_facts: bool = False
    outcome_gate: bool = False
    one_live_value: bool = False

    @property
    def any(self) -> bool:
        return (
            self.core_budget is not None
            or self.fanout_cap is not None
            or self.preserve_facts
            or self.outcome_gate
            or self.one_live_value
        )


def store_limits(store: Store) -> tuple[int, int]:
    """(fanout cap, core budget) that hold for `store`: its guards' where it has them, else the
    defaults (`spec.DEFAULT_FANOUT_CAP`, `spec.DEFAULT_CORE_BUDGET`). `health` measures against
    these, whoever calls it (the tool, the feedback round, the offline mender), so a finding
    never disagrees with the guard that will refuse the write."""
    cap, budget = spec.DEFAULT_FANOUT_CAP, spec.DEFAULT_CORE_BUDGET
    if isinstance(store, GuardedStore):
        cap = cap if store.guards.fanout_cap is None else store.guards.fanout_cap
        budget = budget if store.guards.core_budget is None else store.guards.core_budget
    return cap, budget


def fact_key(line: str) -> Fact | None:
    """A fact line's identity, the one `memdir diff --facts` compares (`conventions.fact_identity`:
    locator set and normalized words), so the guard and the diff agree; None if not a fact."""
    return fact_identity(line)


def fact_lines(text: str) -> dict[Fact, str]:
    """{fact identity: the line as written} for every fact line of `text`."""
    out: dict[Fact, str] = {}
    for line in text.split("\n"):
        key = fact_key(line)
        if key is not None:
            out.setdefault(key, line.strip())
    return out


class GuardedStore(Store):
    """A :class:`Store` whose writes pass the configured guards first."""

    def __init__(self, root: str | os.PathLike[str], guards: Guards, **kw: Any) -> None:
        super().__init__(root, **kw)
        self.guards = guards

    # -- the hooks: each runs before the parent performs the write ----------------------
    def create(self, path: str | MemoryPath, text: str) -> MemoryPath:
        mp = self.parse(path)
        self._check_fanout(mp, None)
        self._check_core(mp, text)
        self._check_outcome(mp, text, creating=True)
        self._check_live(mp, text, creating=True)
        return super().create(mp, text)

    def write(self, path: str | MemoryPath, text: str) -> MemoryPath:
        mp = self.parse(path)
        self._check_core(mp, text)
        self._check_preserved([mp], {mp.text: text})
        self._check_outcome(mp, text, creating=False)
        self._check_live(mp, text, creating=False)
        return super().write(mp, text)

    def delete(self, path: str | MemoryPath) -> list[str]:
        mp = self.parse(path)
        if not mp.is_root and self.exists(mp):
            gone = [e.path for e in self.walk(mp) if not e.is_dir] if self.is_dir(mp) else [mp]
            self._check_preserved(gone, {})
        return super().delete(mp)

    def rename(self, old: str | MemoryPath, new: str | MemoryPath) -> tuple[MemoryPath, MemoryPath]:
        omp = self.parse(old)
        nmp = self.parse(new)
        self._check_fanout(nmp, omp)
        if _is_core(nmp) and not _is_core(omp) and self.exists(omp) and not self.is_dir(omp):
            self._check_core(nmp, self._text(omp))
        return super().rename(omp, nmp)

    # -- the guards ---------------------------------------------------------------------
    def _check_core(self, mp: MemoryPath, new_text: str) -> None:
        budget = self.guards.core_budget
        if budget is None or not _is_core(mp):
            return
        before: dict[str, int] = {}
        for e in self.files():
            if _is_core(e.path):
                before[e.path.text] = count_tokens(self._text(e.path))
        new_tokens = count_tokens(new_text)
        after_total = sum(v for k, v in before.items() if k != mp.text) + new_tokens
        if after_total > budget and new_tokens > before.get(mp.text, 0):
            raise GuardError(
                f"refused: core memory (the .md files directly in /memories, always loaded) would be "
                f"{after_total:,} tokens, over this store's budget of {budget:,}. Nothing was written. Keep "
                f"{mp.text} short: move the detail into a file in a subfolder (e.g. /memories/<topic>/...) "
                "and leave a one-line pointer here ('see /memories/<topic>/<file>.md')"
            )

    def _check_fanout(self, target: MemoryPath, moving_from: MemoryPath | None) -> None:
        cap = self.guards.fanout_cap
        if cap is None:
            return
        # The first missing ancestor of `target` is the one new entry; its parent gains it.
        cur = MemoryPath(())
        for seg in target.parts:
            nxt = cur.child(seg)
            if not self.exists(nxt):
                if moving_from is not None and moving_from.parent == cur:
                    return  # a move within one folder adds no entry
                count = sum(1 for _ in self._entries(cur))
                if count + 1 > cap:
                    raise GuardError(
                        f"refused: {cur.text} already holds {count} entries and the fanout cap is {cap}; "
                        f"adding {nxt.text} would exceed it. Nothing was written. Group related entries "
                        f"into a subfolder of {cur.text} (with its own MEMORY.md), or add this to an "
                        "existing file or index instead of a new one"
                    )
                return
            cur = nxt

    def _check_outcome(self, mp: MemoryPath, new_text: str, *, creating: bool) -> None:
        step = getattr(self._local, "step", None)
        if not self.guards.outcome_gate or step is None or step.meta.get("outcome") != "failure":
            return
        if frontmatter.parse(new_text).metadata.get("type") != "skill":
            return
        old = set() if creating or not self.exists(mp) else set(self._text(mp).split("\n"))
        added = [line for line in new_text.split("\n") if line.strip() and line not in old]
        if added:
            raise GuardError(
                f"refused: this attempt failed, and only a successful attempt may create or extend a "
                f"procedure (a file with metadata type: skill); this write would add {added[0]!r} to "
                f"{mp.text}. Nothing was written. Record what the failure taught as a note "
                "(metadata: {type: note}) in a separate file instead"
            )

    def _check_live(self, mp: MemoryPath, new_text: str, *, creating: bool) -> None:
        """Refuse a live keyed line this write adds when its key already has a live line, in the
        new text or in another file. Lines the file already had are not judged again, so a store
        that broke the rule before the guard was on still takes unrelated writes."""
        if not self.guards.one_live_value or "|" not in new_text:
            return
        old = "" if creating or not self.exists(mp) else self._text(mp)
        had = Counter(old.split("\n"))  # a multiset: inserting a copy of a line adds it
        lines = new_text.split("\n")
        mine = [f for f in keyed_facts(mp.text, new_text) if f.live]
        added = []
        for f in mine:
            if had[lines[f.lineno - 1]] > 0:
                had[lines[f.lineno - 1]] -= 1
            else:
                added.append(f)
        if not added:
            return
        for f in added:
            other = next((g for g in mine if g.key == f.key and g.lineno != f.lineno), None)
            if other is None:
                other = self._live_elsewhere(mp, f)
            if other is not None:
                raise GuardError(_one_live_refusal(f, other))

    def _live_elsewhere(self, mp: MemoryPath, fact: KeyedFact) -> KeyedFact | None:
        subject = fact.subject.split()[0].casefold()
        for e in self.files():
            if e.path.text == mp.text:
                continue
            text = self._text(e.path)
            if subject not in text.casefold():
                continue  # cheap: the subject first
            for g in keyed_facts(e.path.text, text):
                if g.live and g.key == fact.key:
                    return g
        return None

    def _entries(self, folder: MemoryPath) -> Iterable[str]:
        with self.safe.dir_fd(folder.parts, folder.text) as fd, os.scandir(fd) as it:
            for ent in it:
                if not ent.name.startswith("."):
                    yield ent.name

    def _text(self, mp: MemoryPath) -> str:
        """A file's text through the store's link-safe reader; undecodable bytes never block a guard."""
        return self.read_bytes(mp).decode("utf-8", errors="replace")

    def _check_preserved(self, touched: list[MemoryPath], new_texts: dict[str, str]) -> None:
        """Refuse when a fact line of a touched file is in neither its new text nor any other file."""
        step = getattr(self._local, "step", None)
        if not self.guards.preserve_facts or step is None or not step.meta.get("reorganize"):
            return
        touched_texts = {mp.text for mp in touched}
        lost: dict[Fact, str] = {}
        for mp in touched:
            try:
                old = self.read_text(mp)
            except ToolError:
                continue
            kept = fact_lines(new_texts.get(mp.text, ""))
            lost.update({k: v for k, v in fact_lines(old).items() if k not in kept})
        if not lost:
            return
        for e in self.files():
            if e.path.text in touched_texts:
                continue
            text = self._text(e.path)
            maybe = [k for k in lost if all(loc in text for loc in k[0])]  # cheap: locators first
            present = fact_lines(text) if maybe else {}
            for key in maybe:
                if key in present:
                    del lost[key]
            if not lost:
                return
        for key in list(lost):
            if any(key in fact_lines(t) for t in new_texts.values()):
                del lost[key]
        if lost:
            first = next(iter(lost.values()))
            more = f" (and {len(lost) - 1} more fact line(s))" if len(lost) > 1 else ""
            raise GuardError(
                f"refused: this is a reorganization, which may move facts but never drop them, and this "
                f"write would remove the fact line {first!r}{more} from the store. Nothing was written. "
                "Copy the line (with its locator) to its new place first, then remove it here; or keep it"
            )


def _one_live_refusal(new: KeyedFact, old: KeyedFact) -> str:
    loc = ", ".join(old.locators)
    head = f"refused: '{new.subject} | {new.attribute}' already has a live value at {old.where}"
    if " ".join(new.value.split()).casefold() == " ".join(old.value.split()).casefold():
        return (
            f"{head} ({old.value!r}), and this write adds it again. Nothing was written. "
            "Do not repeat a keyed fact: leave it where it is, or add the new locator to that line"
        )
    return (
        f"{head} ({old.value!r} since {old.since}), and a key has one live value. Nothing was written. "
        f"If {new.value!r} replaces it, first strike the old line through where it is: "
        f"'- ~~{old.subject} | {old.attribute}: {old.value}~~ ({old.since} until {new.since}) [{loc}]', "
        "then add the new line"
    )


def _is_core(mp: MemoryPath) -> bool:
    return len(mp.parts) == 1 and mp.name.endswith(".md")
