"""forget: words (or a file) removed from the store, every version of its history and everything
derived from it (docs/forget.md); and `run`, the one forget `memdir forget`, `Memory.forget` and
the tool all take.

One step, under the writer lock (so no write is lost or slips in between): the live files lose
the matching lines (`store/redaction.py`, the one rule), the journal is rewritten without them
and pruned (`store/journal/redact.py`), the search index is rebuilt, the ingest ledger learns the
words' digest and the turns they came from (`store/ledger_forgotten.py`), and any other file of
the state folder that holds them loses them (`store/forget_derived.py`). The step's commit
carries the redaction record; when no live file changed, the rewrite adds it as a commit of its
own. Nothing matched anywhere: an error, and nothing changed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from memdir.conventions import locators
from memdir.errors import MemdirError, NotFoundError, ToolError
from memdir.jsontypes import JsonObject
from memdir.store import forget_derived, ingest_ledger, secrets_allow
from memdir.store.digest_key import existing_key, store_key
from memdir.store.journal import Journal
from memdir.store.journal import redact as history
from memdir.store.journal.format import MEMORY_PREFIX
from memdir.store.paths import STATE_DIR
from memdir.store.redaction import Forget, Record, Spans, line_at, new_record
from memdir.store.secrets import scan
from memdir.store.store import Store
from memdir.tools.base import ToolContext, tool


class NothingMatched(MemdirError):
    """No live file, journal version or derived file holds what was to be forgotten."""


@dataclass
class Outcome:
    """What a forget removed (or, with `dry_run`, would remove)."""

    record: Record
    dry_run: bool
    files: dict[str, int] = field(default_factory=dict)  # /memories path -> lines (0: whole file)
    steps: list[int] = field(default_factory=list)  # journal steps rewritten
    history_paths: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)  # state-folder files and what became of them

    def as_dict(self) -> JsonObject:
        return {
            "dry_run": self.dry_run,
            "redaction": self.record.id,
            "digest": self.record.digest,
            "files": dict(self.files),
            "steps": list(self.steps),
            "history_paths": list(self.history_paths),
            "derived": list(self.derived),
        }

    def lines(self) -> list[str]:
        verb = "would go" if self.dry_run else "gone"
        head = "dry run: " if self.dry_run else ""
        out = [f"{head}redaction {self.record.id} (digest {self.record.digest[:16]}...)"]
        for path, n in sorted(self.files.items()):
            out.append(f"  {path}: {'the whole file' if n == 0 else f'{n} line(s)'} {verb}")
        if self.steps:
            shown = ", ".join(str(i) for i in self.steps[:20]) + (" ..." if len(self.steps) > 20 else "")
            files = ", ".join(self.history_paths[:10])
            done = "would be rewritten" if self.dry_run else "rewritten"
            out.append(f"  journal: {len(self.steps)} step(s) {done} ({shown}); files: {files}")
        for name in self.derived:
            out.append(f"  derived: .memdir/{name}")
        return out


def request_for(
    store: Store,
    *,
    text: str | None = None,
    line: str | None = None,
    file: str | None = None,
    secrets: bool = False,
    reason: str = "",
) -> Forget:
    """The request a person's options make: `line` is `PATH:N` (the line is read now), `file` a
    path (`/memories/...` or relative to the root), `secrets` every secret the scanner finds
    that the store's allowlist does not keep (docs/secrets.md)."""
    given = [x for x in (text, line, file) if x is not None]
    if len(given) + secrets != 1:
        raise MemdirError("forget takes exactly one of: a text, --line PATH:N, --file PATH, --secrets")
    if secrets:
        return Forget(matcher=secret_spans(store.root), label="secrets", reason=reason)
    if line is not None:
        path, sep, number = line.rpartition(":")
        if not sep or not number.isdigit():
            raise MemdirError(f"--line takes PATH:N (a file and a line number from 1), not {line!r}")
        mp = store.parse(_memory_path(path))
        try:
            body = store.read_text(mp)
        except NotFoundError:
            raise MemdirError(f"{mp.text} does not exist; --line names a line of a live file") from None
        return Forget(line=line_at(body, int(number), mp.text), reason=reason)
    if file is not None:
        mp = store.parse(_memory_path(file))
        return Forget(file=mp.text.removeprefix(MEMORY_PREFIX), reason=reason)
    return Forget(text=text, reason=reason)


def secret_spans(root: Path) -> Spans:
    """The scanner as a forget matcher: each secret's span, less those the allowlist keeps."""
    allowed = secrets_allow.allowed_in(root)

    def spans(text: str) -> list[tuple[int, int]]:
        return [(h.start, h.end) for h in scan(text) if not allowed(text[h.start : h.end])]

    return spans


def _memory_path(path: str) -> str:
    return path if path.startswith("/memories") else MEMORY_PREFIX + path.lstrip("/")


def run(store: Store, request: Forget, *, dry_run: bool = False, role: str | None = None) -> Outcome:
    """Forget what `request` names (module docstring); `dry_run` says what would go and writes
    nothing. Raises `NothingMatched` when nothing holds it."""
    journal = Journal(store.root)
    # a dry run makes no key: its record is never kept, so any key names it
    key = (existing_key(store.root) or secrets.token_bytes(32)) if dry_run else store_key(store.root)
    out = Outcome(new_record(request, key), dry_run)
    if dry_run:
        _live(store, request, out, write=False)
        found = history.scan(journal, request)
        _history(out, found)
        out.derived = [
            f"{p.relative_to(store.root / STATE_DIR)}: would be cleaned"
            for p in forget_derived.holding(store.root, request.bytes_forms())
        ]
        if not (out.files or out.steps or out.derived):
            raise _nothing(store, request)
        if _has_index(store):
            out.derived.insert(0, "index/: would be rebuilt")
        return out
    with store.step("forget", role=role) as step:
        resumed = history.resume(journal)  # a forget killed while it pruned: finish that first
        cited = _live(store, request, out, write=True)
        found = history.rewrite(journal, request, out.record, live_changed=bool(step.changes))
        cited |= found.cited
        _history(out, found)
        if not (out.files or out.steps):
            derived = [f"{n}: cleaned" for n in forget_derived.sweep(store.root, request.bytes_forms())]
            if resumed:  # what a killed forget had left to prune is what was left to do
                derived.append("journal.git: the pruning a stopped forget left, finished")
            if not derived:
                raise _nothing(store, request)
            out.derived = derived
            return out
        out.record.lines = sum(out.files.values())
        out.record.files = sum(1 for n in out.files.values() if n == 0)
        step.meta.update(out.record.meta())
        out.derived = _rebuild_index(store)
        for i, words in enumerate(request.all_words() or [None]):
            ingest_ledger.forget(store, words, cited if i == 0 else set())
        out.derived += [f"{n}: cleaned" for n in forget_derived.sweep(store.root, request.bytes_forms())]
    return out


def _live(store: Store, request: Forget, out: Outcome, *, write: bool) -> set[str]:
    """The live files' matching lines (removed, with `write`); the locators they cited."""
    cited: set[str] = set()
    for entry in store.files(suffix=""):
        rel = entry.path.text.removeprefix(MEMORY_PREFIX)
        if request.file_goes(rel):
            out.files[entry.path.text] = 0
            if write:
                store.delete(entry.path)
            continue
        try:
            text = store.read_text(entry.path)
        except (MemdirError, UnicodeDecodeError):
            continue  # gone since the walk, or not text
        new, touched = request.apply(text)
        if not touched:
            continue
        out.files[entry.path.text] = touched
        kept = set(new.split("\n"))
        cited.update(locators("\n".join(x for x in text.split("\n") if x not in kept)))
        if write:
            store.write(entry.path, new)
    return cited


def _history(out: Outcome, found: history.Found) -> None:
    out.steps = found.steps
    out.history_paths = sorted(MEMORY_PREFIX + p for p in found.paths)
    out.record.versions = len(found.steps)


def _rebuild_index(store: Store) -> list[str]:
    """The search index built again from the files as they now are (only where one was)."""
    try:
        from memdir.search.index import INDEX_DIR, SearchIndex
    except ModuleNotFoundError:  # a partial install: no index to hold anything
        return []
    if not _has_index(store):
        return []
    SearchIndex.for_store(store).rebuild()
    return [f"{INDEX_DIR}/: rebuilt"]


def _has_index(store: Store) -> bool:
    try:
        from memdir.search.index import SearchIndex
    except ModuleNotFoundError:
        return False
    return SearchIndex.exists_for(store)


def _nothing(store: Store, request: Forget) -> NothingMatched:
    what = {"text": "the text", "line": "the line", "file": "the file"}.get(request.kind, "the match")
    return NothingMatched(
        f"nothing matched: no file of {store.root}, no step of its history and no derived file holds "
        f"{what}; nothing was changed"
    )


@tool(
    description="""
        Forget for good: remove every line holding `text` (or the whole file at `path`) from the
        memory AND from every past version in its history, the search index and the ingest
        record, so no search, history view or revert brings it back. Use it only when the user
        asks you to forget something; to correct a fact, edit it instead. Say in `reason` why
        (kept in the history's redaction record; the text itself is not kept).
        """,
    params={
        "text": "The exact words to forget (at least 4 characters, one line); every line holding them goes.",
        "path": "Instead of text: a /memories file to forget whole, with all its versions.",
        "reason": "Why it is forgotten (e.g. 'the user asked'); recorded, the text is not.",
    },
    read_only=False,
    destructive=True,
    idempotent=True,  # a repeat finds nothing left and changes nothing (it says so, an error)
    title="Forget text in every version",
)
def forget(ctx: ToolContext, text: str | None = None, path: str | None = None, reason: str = "") -> str:
    try:
        if (text is None) == (path is None):
            raise MemdirError("give exactly one of text or path")
        request = request_for(ctx.store, text=text, file=path, reason=reason or "asked by the model")
        out = run(ctx.store, request)
    except MemdirError as exc:
        raise ToolError(str(exc)) from None
    return "Forgotten.\n" + "\n".join(out.lines())
