"""What a journal commit says: its message (subject and `Memdir-*` trailers) and how a reader
parses it back into a `JournalStep`. Both the writer (`observer.py`) and the readers
(`repository.py`) use these, so the format has one definition."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from memdir.jsontypes import JsonObject
from memdir.store import operations
from memdir.store.landing_intent import ROLLED_FORWARD
from memdir.store.safefs import Found, Unread, printable, unread
from memdir.store.store import CHANGE_KINDS, Change, Step

JOURNAL_DIR = "journal.git"
BASELINE = "baseline"
RECOVERED = "recovered"  # the tool of a step the journal reconciled from the files
META_KEYS = ("role", "chunk", "task")
# the operation a step belongs to (store/operations.py): meta key -> trailer name
OPERATION_TRAILERS = {
    operations.ID_KEY: "Operation",
    operations.KIND_KEY: "Operation-Kind",
    operations.LABEL_KEY: "Operation-Label",
}
_TRAILER_KEYS = {v: k for k, v in OPERATION_TRAILERS.items()}
MEMORY_PREFIX = "/memories/"


@dataclass
class JournalStep:
    """One commit of the journal: step 0 is the baseline, then one per writing tool call. The one
    record of a past step: the history, the UI and the API (`memdir.api.JournalStep`) read it."""

    index: int
    commit: str
    time: int
    tool: str
    meta: dict[str, str] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    raw: list[tuple[str, str, str]] = field(default_factory=list)  # (status, blob sha, path parts)
    skipped: list[Unread] = field(default_factory=list)  # entries left out of the commit, and why
    # the operation trailers (OPERATION_TRAILERS), apart from `meta`: what a caller passed
    operation_meta: dict[str, str] = field(default_factory=dict)

    @property
    def role(self) -> str | None:
        """The role whose tool call this was (`management`, `api`...), when it was named."""
        return self.meta.get("role")

    @property
    def operation(self) -> operations.OperationTag:
        """The operation this step belongs to. A step journaled before steps carried one (or the
        baseline, or a `recovered` step) is an operation of its own, named by its commit."""
        meta = self.operation_meta
        if operations.ID_KEY in meta:
            kind = meta.get(operations.KIND_KEY) or operations.CALL
            return operations.OperationTag(
                meta[operations.ID_KEY], kind, meta.get(operations.LABEL_KEY, self.tool)
            )
        return operations.OperationTag(self.commit[: operations.ID_HEX], self.tool, self.tool)

    @property
    def redacted(self) -> str | None:
        """The forget that rewrote this step (`journal/redact.py`'s `Memdir-Redacted` trailer):
        something it held is gone. None for a step as it was made."""
        return self.meta.get("redacted")

    def paths(self) -> set[str]:
        """Every path this step changed, both ends of a rename included."""
        return {p for c in self.changes for p in (c.path, c.new_path) if p}

    def as_dict(self) -> JsonObject:
        return {
            "step": self.index,
            "commit": self.commit,
            "time": self.time,
            "tool": self.tool,
            **{k: v for k, v in self.meta.items()},
            **self.operation_meta,
            "changes": [[c.kind, c.path, *([c.new_path] if c.new_path else [])] for c in self.changes],
            **({"skipped": [[u.path, u.reason] for u in self.skipped]} if self.skipped else {}),
        }


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


def message(step: Step, skipped: list[Unread] | None = None) -> str:
    """The commit message of a step: a subject line, then trailers (see `repository.py`)."""
    n = len(step.changes)
    lines = [f"{step.tool}: {n} change{'s' if n != 1 else ''}", "", f"Memdir-Tool: {_one_line(step.tool)}"]
    for key in META_KEYS:
        if key in step.meta:
            lines.append(f"Memdir-{key.capitalize()}: {_one_line(step.meta[key])}")
    for key, trailer in OPERATION_TRAILERS.items():
        if key in step.meta:
            lines.append(f"Memdir-{trailer}: {_one_line(step.meta[key])}")
    for key, value in sorted(step.meta.items()):
        if (
            key not in META_KEYS
            and key not in OPERATION_TRAILERS
            and isinstance(value, str | int | float | bool)
        ):
            lines.append(f"Memdir-Meta-{_one_line(key).replace(' ', '-')}: {_one_line(value)}")
    for c in step.changes:
        lines.append("Memdir-Change: " + "\t".join([c.kind, c.path, *([c.new_path] if c.new_path else [])]))
    lines.extend(skipped_lines(skipped or []))
    return "\n".join(lines) + "\n"


def rolled_forward(message: str) -> bool:
    """Is this the message of a step that finished a landing a kill had stopped? Such a step
    adds no commit when the journal already holds all it wrote (the killed step got there)."""
    return f"\nMemdir-Meta-{ROLLED_FORWARD}: " in message


def recovered_message(reason: str, changes: list[Change], skipped: list[Unread]) -> str:
    """A step no tool call made: files the journal found differing from its newest snapshot."""
    n = len(changes)
    lines = [f"{RECOVERED}: {n} change{'s' if n != 1 else ''}", "", f"Memdir-Tool: {RECOVERED}"]
    lines.append(f"Memdir-Recovered: {_one_line(reason)}")
    lines.extend("Memdir-Change: " + "\t".join([c.kind, c.path]) for c in changes)
    lines.extend(skipped_lines(skipped))
    return "\n".join(lines) + "\n"


def baseline_message(skipped: list[Unread]) -> str:
    lines = [f"{BASELINE}: the store before its first journaled step", "", f"Memdir-Tool: {BASELINE}"]
    return "\n".join([*lines, *skipped_lines(skipped)]) + "\n"


def skipped_lines(skipped: list[Unread]) -> list[str]:
    return [f"Memdir-Skipped: {_one_line(u.path)}\t{_one_line(u.reason)}" for u in skipped]


def parse_message(index: int, commit: str, time: int, body: str) -> JournalStep:
    step = JournalStep(index, commit, time, "?")
    for line in body.split("\n"):
        key, sep, value = line.partition(": ")
        if not sep or not key.startswith("Memdir-"):
            continue
        name = key.removeprefix("Memdir-")
        if name == "Tool":
            step.tool = value
        elif name == "Change":
            kind, path, *rest = value.split("\t")
            if kind in CHANGE_KINDS:  # memdir writes no other kind; a hand-made line is left out
                step.changes.append(Change(kind, path, rest[0] if rest else None))
        elif name == "Skipped":
            path, _, reason = value.partition("\t")
            step.skipped.append(Unread(path, reason))
        elif name.startswith("Meta-"):
            step.meta[name.removeprefix("Meta-")] = value
        elif name in _TRAILER_KEYS:
            step.operation_meta[_TRAILER_KEYS[name]] = value
        else:
            step.meta[name.lower()] = value
    return step


def found(parts: tuple[str, ...], st: os.stat_result) -> Found:
    if stat.S_ISLNK(st.st_mode):
        return Found(parts, "link")
    if stat.S_ISREG(st.st_mode):
        return Found(parts, "file", st.st_size, st.st_mtime_ns, st.st_nlink)
    return Found(parts, "other")


def why_skipped(f: Found) -> Unread:
    """Why an entry the walk met is not journaled."""
    seen = unread(f)
    if seen is not None:
        return seen
    if f.kind == "file":
        reason = f"this file has {f.nlink} hard links and may be shared with something outside the store"
    elif f.kind == "link":
        reason = "a symbolic link; the journal does not follow links"
    else:
        reason = "not a regular file"
    return Unread(printable(f.parts), reason + "; not journaled", f.kind)
