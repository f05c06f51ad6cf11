"""The Agent Memory directory convention: what a valid memory is, and what core memory loads.

Core memory is every markdown file directly in the root; it is always in the prompt, so its
size is a budget. Every memory directory carries a `MEMORY.md` so an agent that reaches the
directory finds its index. Cross-references (`see /memories/...`) must point at something.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from memdir.errors import PathError, ToolError
from memdir.store import frontmatter
from memdir.store.boundary import NOTE, neutralise
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.paths import ROOT, MemoryPath, parse_memory_path
from memdir.store.safefs import Reader, Unread
from memdir.store.store import Entry, Store
from memdir.tokens import count_tokens

Parts = tuple[str, ...]

DEFAULT_CORE_BUDGET = 30_000
# The most entries a folder should hold (docs/study.md, design rule 2), as `memdir check` reports.
DEFAULT_FANOUT_CAP = 50
XREF = re.compile(r"\b[Ss]ee\s+(/memories(?:/[^\s)\]>,;`'\"]*)?)")
GOVERNED_MARKER = "SKILL.md"


@dataclass(frozen=True)
class Violation:
    path: str
    rule: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "rule": self.rule, "message": self.message}


@dataclass
class Report:
    violations: list[Violation] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.violations


def lines_containing(text: str, needle: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line of `text.split("\\n")` that holds `needle`, found
    without splitting the text: a rule that matches only such lines then costs a substring
    search on a file without any (a 50 MB core file, 100,000 notes without a reference)."""
    pos = text.find(needle)
    lineno, counted = 1, 0
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        lineno += text.count("\n", counted, start)
        counted = start
        yield lineno, text[start:end]
        pos = text.find(needle, end)


def xrefs(text: str) -> list[tuple[int, str]]:
    """(line number, target memory path) of every `see /memories/...` in `text`."""
    found: list[tuple[int, str]] = []
    for lineno, line in lines_containing(text, "/memories"):
        for m in XREF.finditer(line):
            found.append((lineno, m.group(1).rstrip(".:!?")))
    return found


class Seen(NamedTuple):
    """An entry of a walk, kept without `Store.walk`'s disk path: its Entry, Path and MemoryPath
    take about a kilobyte per entry (benchmarks/results/2026-12-06-docstring-figures.md,
    "store/spec.py"), while the rules need only the path (made again when asked for), the kind,
    the size and the mtime."""

    parts: Parts
    is_dir: bool
    size: int
    mtime_ns: int

    @property
    def path(self) -> MemoryPath:
        return MemoryPath(self.parts)


@dataclass
class Walk:
    """One walk of a store that every rule reading it shares: `validate`, `context`'s core
    budget and `memdir check` each used to walk the store (and read every file) on its own,
    six walks per check. Entries are `Store.walk`'s; `texts` holds `.md` texts a caller has
    already read (decoded with errors replaced, as every rule here reads them), so `health`
    hands over the texts it read and no file is read twice. A path the walk saw exists; one it
    did not see is asked of the store, so a link or a hidden name gets the answer it always got.
    """

    entries: Sequence[Seen | Entry]  # `Store.walk`'s entries are taken too (kept as `Seen`)
    unread: list[Unread]
    texts: Mapping[Parts, str] = field(default_factory=dict)
    seen: list[Seen] = field(init=False, repr=False)
    _seen: set[Parts] = field(default_factory=set, repr=False)
    _dirs: set[Parts] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self.seen = [
            e if isinstance(e, Seen) else Seen(e.path.parts, e.is_dir, e.size, e.mtime_ns)
            for e in self.entries
        ]
        self.entries = self.seen
        self._seen = {e.parts for e in self.seen}
        self._dirs = {e.parts for e in self.seen if e.is_dir}
        self._seen.add(())
        self._dirs.add(())

    @property
    def md_files(self) -> list[Seen]:
        """The `.md` files, sorted by memory path (`Store.files`)."""
        found = [e for e in self.seen if not e.is_dir and e.parts[-1].endswith(".md")]
        return sorted(found, key=lambda e: e.parts)

    def exists(self, store: Store, mp: MemoryPath) -> bool:
        return mp.parts in self._seen or store.exists(mp)

    def is_dir(self, store: Store, mp: MemoryPath) -> bool:
        if mp.parts in self._dirs:
            return True
        return mp.parts not in self._seen and store.is_dir(mp)

    def text(self, store: Store, mp: MemoryPath, reader: Reader | None = None) -> str:
        """The file's text; raises ToolError as `Store.read_bytes` does. With a `reader`
        (`SafeRoot.reader`), a walk over many files opens each folder once."""
        known = self.texts.get(mp.parts)
        if known is not None:
            return known
        if reader is not None and not mp.is_root:
            return reader.read(mp.parts, mp.text).decode("utf-8", errors="replace")
        return store.read_bytes(mp).decode("utf-8", errors="replace")


def walk(store: Store, texts: Mapping[Parts, str] | None = None) -> Walk:
    unread: list[Unread] = []
    entries = [Seen(e.path.parts, e.is_dir, e.size, e.mtime_ns) for e in store.walk(unread=unread)]
    return Walk(entries, unread, texts if texts is not None else {})


def governing(e: Seen | Entry) -> MemoryPath | None:
    """The root-level folder this entry puts under another format (Agent Skills: a `SKILL.md`
    anywhere inside it), if it does."""
    parts = e.path.parts
    if not e.is_dir and parts[-1] == GOVERNED_MARKER and len(parts) >= 2:
        return MemoryPath(parts[:1])
    return None


def governed_dirs(store: Store, walked: Walk | None = None) -> set[MemoryPath]:
    """Root-level folders governed by another format (Agent Skills: a `SKILL.md` inside)."""
    found = (governing(e) for e in (walked.seen if walked is not None else store.walk()))
    return {g for g in found if g is not None}


def is_governed(mp: MemoryPath, governed: set[MemoryPath]) -> bool:
    return any(mp.is_within(g) for g in governed)


def file_violations(store: Store, walked: Walk, entry: Seen, text: str) -> Iterator[Violation]:
    """The frontmatter and cross-reference violations of one file (`validate`, per file), so a
    caller that reads each file once for its own rules can run these on the same text."""
    for msg in frontmatter.validate(text, entry.path.name):
        yield Violation(entry.path.text, "frontmatter", msg)
    for lineno, target in xrefs(text):
        try:
            exists = walked.exists(store, parse_memory_path(target))
        except PathError:
            exists = False
        if not exists:
            yield Violation(
                f"{entry.path.text}:{lineno}", "dangling-xref", f"'see {target}' points at nothing"
            )


def tree_violations(
    store: Store,
    walked: Walk,
    md_folders: Iterable[MemoryPath],
    governed: set[MemoryPath],
    unread: list[Unread],
) -> list[Violation]:
    """The store-wide rules of `validate`: the root's MEMORY.md, the entries no walk reads, and
    a MEMORY.md in every memory directory (a folder holding markdown, or one above it);
    `md_folders` are the folders that hold `.md` files."""
    out: list[Violation] = []
    if not walked.exists(store, ROOT.child(MEMORY_INDEX)):
        out.append(
            Violation("/memories", "root-index", "the root has no MEMORY.md; run 'memdir init' or create it")
        )
    memory_dirs: set[MemoryPath] = set()
    for parent in md_folders:
        if is_governed(parent, governed):
            continue
        while not parent.is_root and parent not in memory_dirs:
            memory_dirs.add(parent)
            parent = parent.parent
    for u in unread:  # a folder too deep for any walk, a name no path can spell: never read
        out.append(Violation(u.path, "unread", u.reason))
    for d in sorted(memory_dirs, key=lambda m: m.parts):
        if not walked.exists(store, d.child(MEMORY_INDEX)):
            out.append(Violation(d.text, "dir-index", f"memory directory {d.text} has no MEMORY.md"))
    return out


TEXT_SNIFF = 64 * 1024  # a file whose first 64 KiB are UTF-8 is text a tool would be asked to edit
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")  # no text holds these; \t \n \f \r it may


def text_not_memory(store: Store, walked: Walk, governed: set[MemoryPath]) -> Iterator[Violation]:
    """Text files that are not `.md` (an SDK helper's `notes.txt`): `view` shows them but
    `str_replace` and `insert` refuse them, so a store holding one is not one the tools can
    keep. Other files (a photo, an archive: not UTF-8, or holding control codes) are no one's
    text and are left be."""
    for e in walked.seen:
        if e.is_dir or e.parts[-1].endswith(".md") or is_governed(e.path, governed):
            continue
        try:
            head = store.safe.read(e.parts, e.path.text, TEXT_SNIFF)
        except ToolError:
            continue
        try:
            shown = codecs.getincrementaldecoder("utf-8")().decode(head, final=len(head) < TEXT_SNIFF)
        except UnicodeDecodeError:
            continue
        if _CONTROL.search(shown):  # UTF-8 by chance (a NUL, a C1 code): bytes, not text
            continue
        name = frontmatter.memory_name(e.parts[-1])
        target = e.path.parent.child(name) if name else None
        if target is None:
            fix = "give it a memory file name (kebab-case .md) and frontmatter"
        elif walked.exists(store, target):
            fix = f"its memory file name is taken by {target.text}: merge the two, or give it another name"
        else:
            fix = f"give it a memory file name ({target.text}) and frontmatter"
        yield Violation(
            e.path.text,
            "not-memory",
            f"a text file that is not .md: the tools show it but cannot edit it; {fix}, or move it "
            "out of the store (an Anthropic SDK helper's folder is converted when memdir.Memory "
            "opens it, docs/serving.md)",
        )


def validate(store: Store, walked: Walk | None = None) -> Report:
    """Every violation of the convention and of the frontmatter rules, in path order."""
    walked = walked if walked is not None else walk(store)
    governed = governed_dirs(store, walked)
    md = walked.md_files
    report = Report(tree_violations(store, walked, {e.path.parent for e in md}, governed, walked.unread))
    report.violations.extend(text_not_memory(store, walked, governed))
    for entry in md:
        if is_governed(entry.path, governed):
            continue
        try:
            text = walked.text(store, entry.path)
        except ToolError as exc:
            report.violations.append(unreadable(entry, exc))
            continue
        report.violations.extend(file_violations(store, walked, entry, text))
    report.violations.sort(key=lambda v: (v.path, v.rule))
    return report


def unreadable(entry: Seen, exc: ToolError) -> Violation:
    return Violation(entry.path.text, "unreadable", str(exc))


@dataclass
class CoreContext:
    text: str
    tokens: int
    budget: int

    @property
    def over_budget(self) -> bool:
        return self.tokens > self.budget


def _opening(text: str, max_lines: int = 8) -> str:
    """A child directory's MEMORY.md as the core block shows it: its description and its first
    non-blank lines, found one `find` at a time, so a huge index is never split whole."""
    desc = frontmatter.parse(text).description
    body: list[str] = []
    at = frontmatter.body_start(text)
    while at <= len(text) and len(body) < max_lines:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        line = text[at:end]
        if line.strip():
            body.append(line)
        at = end + 1
    head = [f"description: {desc}"] if desc else []
    return neutralise("\n".join(head + body))


_PIECE = 1 << 18  # characters of core memory tokenized at a time (`core_tokens`): ~65k ids, ~2.5 MB
# A line start where o200k's pre-tokenizer always cuts: after a newline, before a printable ASCII
# character other than "/" and space. No piece of its pattern holds a newline followed by
# anything but whitespace or "/" (the newline-ended alternatives stop there, the others hold no
# newline), so counting the text on either side of such a cut adds up to counting it whole.
_TOKEN_CUT = re.compile(r"\n(?=[!-.0-~])")


def _core_files(store: Store, walked: Walk) -> list[Seen]:
    core = [e for e in walked.md_files if len(e.parts) == 1]
    core.sort(key=lambda e: (e.parts[0] != MEMORY_INDEX, e.parts[0]))
    return core


def _opened(path: str, body: str, size: int) -> Iterator[str]:
    """A `<memory_file>` element of the core block up to its body's end, in pieces of at most
    `size` characters of the body, so a 50 MB core file is never copied whole (`body.rstrip()`
    would copy it). The body is shown inside the data boundary (store/boundary.py): neutralised,
    which copies it only when it holds a lookalike."""
    body = neutralise(body)
    end = len(body)
    while end and body[end - 1].isspace():
        end -= 1
    yield f'<memory_file path="{neutralise(path)}">\n'
    for lo in range(0, end, size):
        yield body[lo : min(lo + size, end)]


def _core_texts(store: Store, walked: Walk) -> Iterator[tuple[str, str]]:
    for e in _core_files(store, walked):
        try:
            yield e.path.text, walked.text(store, e.path)
        except ToolError:
            continue  # a linked or vanished file is not core memory


def _count_in_pieces(parts: Iterable[str], piece: int) -> int:
    """Tokens of the concatenation of `parts`, tokenized about `piece` characters at a time,
    cut only at `_TOKEN_CUT`."""
    total, pending, scanned = 0, "", 0
    for part in parts:
        pending += part
        if len(pending) < piece:
            continue
        cut = None
        for m in _TOKEN_CUT.finditer(pending, scanned):  # the last cut: pieces near `piece` long
            cut = m.start() + 1
        scanned = max(0, len(pending) - 1)  # a newline at the very end waits for its next character
        if cut is not None:
            total += count_tokens(pending[:cut])
            pending, scanned = pending[cut:], max(0, scanned - cut)
    return total + count_tokens(pending)


def core_file_tokens(path: str, body: str, *, piece: int = _PIECE) -> int:
    """One core file's share of `core_tokens`: its element up to the newline before its
    closing tag. The core block always cuts (`_TOKEN_CUT`) before a `</memory_file>` and
    before a `<memory_file`, so the shares and the closing tags add up to the block's count in
    any order (`core_total`), and `check` counts each core file while it holds its text."""
    return _count_in_pieces(itertools.chain(_opened(path, body, piece), ["\n"]), piece)


def core_file_tokens_at_least(path: str, head: str, *, piece: int = _PIECE) -> int:
    """A lower bound of `core_file_tokens(path, body)` from `head`, the start of a body too big
    to read whole (the UI's gauge reads a bounded part of core memory): the element's opening
    and `head` up to its last `_TOKEN_CUT`. The body's count splits exactly there, and what
    follows the cut in the body starts with a printable character, so it only adds tokens."""
    end = len(head)
    while (end := head.rfind("\n", 0, end)) >= 0 and not _TOKEN_CUT.match(head, end):
        pass
    kept = head[: end + 1] if end >= 0 else ""
    return _count_in_pieces([f'<memory_file path="{neutralise(path)}">\n', neutralise(kept)], piece)


def core_total(shares: list[int]) -> int:
    """The core block's tokens from its files' `core_file_tokens`: each closing tag, with the
    newline that joins it to the next element, or without one after the last."""
    if not shares:
        return 0
    return sum(shares) + (len(shares) - 1) * count_tokens("</memory_file>\n") + count_tokens("</memory_file>")


def _core_pieces(store: Store, walked: Walk, size: int = _PIECE) -> Iterator[str]:
    """The core-memory block (`context`'s `<memory_file>` elements joined by newlines)."""
    for i, (path, body) in enumerate(_core_texts(store, walked)):
        if i:
            yield "\n"
        yield from _opened(path, body, size)
        yield "\n</memory_file>"


def core_tokens(store: Store, walked: Walk | None = None, *, piece: int = _PIECE) -> int:
    """Tokens of core memory, as `context(...).tokens` counts them, in bounded memory: the
    tokenizer's list of ids for a 50 MB file alone holds ~12 million Python ints (~450 MB), so
    the text is counted piece by piece, cut only where the tokenizer cuts anyway (`_TOKEN_CUT`);
    a test holds the sum equal to the count of the whole text."""
    walked = walked if walked is not None else walk(store)
    return core_total([core_file_tokens(p, b, piece=piece) for p, b in _core_texts(store, walked)])


def context(store: Store, budget: int = DEFAULT_CORE_BUDGET, walked: Walk | None = None) -> CoreContext:
    """The prompt block a conforming harness loads: core memory, then the child directories,
    after the data boundary's note (store/boundary.py), every file's text neutralised."""
    walked = walked if walked is not None else walk(store)
    parts: list[str] = []
    core_block = "".join(_core_pieces(store, walked))
    parts.append("<core_memory>\n" + core_block + "\n</core_memory>")
    governed = governed_dirs(store, walked)
    children = sorted(
        (e for e in walked.seen if e.is_dir and len(e.path.parts) == 1 and not is_governed(e.path, governed)),
        key=lambda e: e.path.name,
    )
    listing: list[str] = []
    for d in children:
        index = d.path.child(MEMORY_INDEX)
        if walked.exists(store, index):
            opening = _opening(store.read_text(index))
            listing.append(f'<memory_directory path="{d.path.text}">\n{opening}\n</memory_directory>')
        elif any(True for _ in store.files(d.path)):
            listing.append(f'<memory_directory path="{d.path.text}">\n(no MEMORY.md)\n</memory_directory>')
    if listing:
        parts.append(
            "<memory_directories>\nExternal memory, not loaded; open a directory's MEMORY.md to descend.\n"
            + "\n".join(listing)
            + "\n</memory_directories>"
        )
    text = NOTE + "\n" + "\n".join(parts) + "\n"
    return CoreContext(text, count_tokens(core_block), budget)


INIT_INDEX = """---
description: Root index of this memory; core memory, always loaded. List the folders here.
---
# Memory

This is the root of a memory store. Markdown files directly here are core memory and are always
loaded; put detail in folders, each with its own MEMORY.md that indexes its files.
"""


def init(store: Store) -> bool:
    """Make `store` a valid empty memory; returns False when MEMORY.md already existed."""
    index = ROOT.child(MEMORY_INDEX)
    if store.exists(index):
        return False
    with store.step("init"):
        store.create(index, INIT_INDEX)
    return True
