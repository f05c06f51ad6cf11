"""The folder index plan: the `MEMORY.md` changes one write needs so the store stays a valid
memory.

The Agent Memory convention wants a `MEMORY.md` in every memory directory (docs/study.md, The
store; `spec.validate`'s `dir-index`), but the base contract's file tools write only the file
they are given: `create /memories/places/lisbon.md` left `/memories/places` without a folder
index, so an agent made an invalid store with its first new folder. This plans, before the
write, what the folder indexes must become once it lands (`tools/folder_index_keeping.py` lands
both in one step):

- a folder the write makes a memory directory gets a `MEMORY.md` listing what it holds
  (`folder_index.render`), and the nearest index above it an entry for it;
- a file or folder created or moved into a folder with an index gets an entry there, unless
  the index already names it; the root's index is core memory and gets none (the core block
  lists the root's folders itself, `spec.context`);
- an entry naming a moved path is moved with it (the line kept, its mentions retargeted), and
  one naming a removed path goes, in every index above it; a folder's own indexes retarget
  their mentions of paths under it when it moves;
- a file's changed description is carried into its entry when the entry is memdir's own line;
- a folder left holding only an index with nothing but headings goes too, upwards; a memory
  directory's index is not removed while the folder holds anything else (the write is refused).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from memdir.errors import EditError, MemdirError
from memdir.store import folder_index, frontmatter
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.paths import MemoryPath
from memdir.store.store import Store


@dataclass(frozen=True)
class Event:
    """The write about to happen: `text` is a created or rewritten file's new text, `old_text`
    a rewritten file's present one; `holds_md` says a folder holds markdown (a memory folder)."""

    kind: Literal["create", "modify", "delete", "rename"]
    path: MemoryPath
    new: MemoryPath | None = None
    is_dir: bool = False
    text: str | None = None
    old_text: str | None = None
    holds_md: bool = True


@dataclass
class Upkeep:
    """What the indexes become: `writes` maps an index (by its path before the write) to its
    new text, None for one removed; `prune` the folders removed after the write, deepest
    first; `said` one line per change, for the tool's reply."""

    writes: dict[str, str | None] = field(default_factory=dict)
    prune: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.writes and not self.prune


def _index(folder: MemoryPath) -> MemoryPath:
    return folder.child(MEMORY_INDEX)


def _chain(folder: MemoryPath) -> list[MemoryPath]:
    """`folder` and every folder above it, the root last."""
    out = [folder]
    while not out[-1].is_root:
        out.append(out[-1].parent)
    return out


def _description(text: str | None) -> str | None:
    return frontmatter.parse(text).description if text is not None else None


class _Planner:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.lines: dict[MemoryPath, list[str] | None] = {}  # folder -> its index's lines now
        self.before: dict[MemoryPath, list[str] | None] = {}
        self.out = Upkeep()

    def index(self, folder: MemoryPath) -> list[str] | None:
        if folder not in self.lines:
            mp = _index(folder)
            try:
                text = self.store.read_text(mp) if self.store.exists(mp) else None
            except MemdirError:
                text = None  # unreadable: left alone, as if absent (validate reports it)
            self.before[folder] = self.lines[folder] = None if text is None else text.split("\n")
        return self.lines[folder]

    def put(self, folder: MemoryPath, lines: list[str] | None, said: str) -> None:
        self.index(folder)
        self.lines[folder] = lines
        self.out.said.append(said)

    # -- what a folder holds ----------------------------------------------------------------
    def holds_other(self, folder: MemoryPath, gone: set[str]) -> bool:
        """Whether `folder` holds an entry (hidden ones too) besides `gone` and its index;
        stops at the first, so a big folder costs one entry."""
        if not self.store.is_dir(folder):
            return False
        skip = gone | {MEMORY_INDEX}
        for f in self.store.safe.scan(folder.parts, folder.text, hidden=True):
            if len(f.parts) == len(folder.parts) + 1 and f.parts[-1] not in skip:
                return True
        return False

    def listing(self, folder: MemoryPath) -> tuple[list[tuple[str, str | None]], list[str]]:
        """The files (with descriptions) and memory folders `folder` holds now, for a new index."""
        files: list[tuple[str, str | None]] = []
        folders: set[str] = set()
        if not self.store.is_dir(folder):
            return files, []
        depth = len(folder.parts) + 1
        for e in self.store.files(folder):
            if len(e.path.parts) == depth and e.path.name != MEMORY_INDEX:
                try:
                    files.append((e.path.name, _description(self.store.read_text(e.path))))
                except MemdirError:
                    files.append((e.path.name, None))
            elif len(e.path.parts) > depth:
                folders.add(e.path.parts[depth - 1])
        return files, sorted(folders)

    # -- the events ------------------------------------------------------------------------
    def arrive(self, q: MemoryPath, is_dir: bool, text: str | None, moved: list[str]) -> None:
        """`q` comes into being: every folder above it without an index gets one, and the
        nearest index above those an entry (the `moved` lines of its old entry, or a new one)."""
        child, child_dir, desc = q, is_dir, _description(text)
        if q.name == MEMORY_INDEX and not is_dir:  # the folder's own index: it lists nothing
            child, child_dir, desc = q.parent, True, None
            if child.is_root:
                return
        folder = child.parent
        while not folder.is_root:
            lines = self.index(folder)
            if lines is not None:
                if not any(folder_index.is_entry(ln, child, folder) for ln in lines):
                    add = moved or [
                        folder_index.folder_entry(child.name)
                        if child_dir
                        else folder_index.entry(child.name, desc)
                    ]
                    self.put(folder, _append(lines, add), f"listed {child.name} in {_index(folder).text}")
                return
            files, folders = self.listing(folder)
            if child_dir:
                folders = sorted({*folders, child.name})
            elif all(n != child.name for n, _ in files):
                files.append((child.name, desc))
            text_new = folder_index.render(folder, files, folders)
            self.put(folder, text_new.split("\n"), f"made {_index(folder).text}")
            child, child_dir, desc, moved = folder, True, None, []
            folder = folder.parent

    def withdraw(self, p: MemoryPath, keep: MemoryPath | None = None) -> None:
        """`p` goes from its folder: the entries naming it go from every index above it, and a
        folder left with nothing but a bare index goes too, upwards (never one holding `keep`)."""
        going = p.name == MEMORY_INDEX
        stays = keep is not None and keep.is_within(p.parent)  # an index renamed within its folder
        if going and (stays or self.holds_other(p.parent, {p.name})):
            raise EditError(
                f"{p.text} is the index of {p.parent.text}, a memory directory, which needs one while it "
                "holds anything; rewrite the index with str_replace, or delete the folder. Nothing was "
                "changed."
            )
        if not going:  # an index's own entries above it name its folder: they go with the folder
            self.drop_entries(p)
        self.withdraw_empty(p.parent, {p.name}, keep, index_going=going)

    def drop_entries(self, p: MemoryPath) -> None:
        for a in _chain(p.parent):
            lines = self.index(a)
            if lines is None or (a == p.parent and p.name == MEMORY_INDEX):
                continue
            kept = [ln for ln in lines if not folder_index.is_entry(ln, p, a)]
            if len(kept) != len(lines):
                self.put(a, kept, f"removed the entry of {p.name} from {_index(a).text}")

    def move(self, p: MemoryPath, q: MemoryPath, is_dir: bool, text: str | None) -> None:
        """`p` becomes `q`: entries naming it are retargeted where `q` is still inside their
        folder and moved to `q`'s folder from `p`'s own; indexes inside a moved folder retarget
        their full-path mentions of what moved with them."""
        f, g = p.parent, q.parent
        if p.name == MEMORY_INDEX or q.name == MEMORY_INDEX:  # an index moved: its folder loses it
            self.withdraw(p, keep=q)
            self.arrive(q, is_dir, text, [])
            return
        moved: list[str] = []
        for a in _chain(f):
            lines = self.index(a)
            if lines is None:
                continue
            out: list[str] = []
            for ln in lines:
                if not folder_index.is_entry(ln, p, a):
                    out.append(ln)
                elif q.is_within(a) and (a != f or f == g):
                    out.append(folder_index.retarget(ln, p, a, q, a))
                elif a == f:
                    moved.append(folder_index.retarget(ln, p, f, q, g))
            if out != lines:
                how = "retargeted" if q.is_within(a) and (a != f or f == g) else "moved"
                self.put(a, out, f"{how} the entry of {p.name} in {_index(a).text}")
        if is_dir:
            self.inner(p, q)
        self.arrive(q, is_dir, text, [] if g.is_root else moved)
        if f != g:
            self.withdraw_empty(f, {p.name}, q)

    def withdraw_empty(
        self, folder: MemoryPath, gone: set[str], keep: MemoryPath | None, *, index_going: bool = False
    ) -> None:
        """Remove `folder` once `gone` left it with nothing but a bare index (or, `index_going`,
        its index is what goes), then the same for the folder above, never one holding `keep`."""
        while not folder.is_root and (keep is None or not keep.is_within(folder)):
            if self.holds_other(folder, gone):
                return
            lines = None if index_going else self.index(folder)
            if lines is not None:
                if not folder_index.is_trivial("\n".join(lines)):
                    return
                self.put(folder, None, f"removed {_index(folder).text}: its folder held nothing else")
            self.out.prune.append(folder.text)
            self.out.said.append(f"removed the empty folder {folder.text}")
            self.drop_entries(folder)
            gone, index_going = {folder.name}, False
            folder = folder.parent

    def inner(self, p: MemoryPath, q: MemoryPath) -> None:
        """The indexes inside a moved folder: full-path mentions of `p/...` read `q/...`."""
        prefix = re.compile(re.escape(p.text) + r"(?=/|(?![\w.-]))")
        for e in self.store.files(p):
            if e.path.name != MEMORY_INDEX:
                continue
            lines = self.index(e.path.parent)
            if lines is None:
                continue
            out = [prefix.sub(q.text, ln) for ln in lines]
            if e.path.parent == p:  # the moved folder's own index: a heading of its name follows it
                out = [f"# {q.name}" if ln == f"# {p.name}" else ln for ln in out]
            if out != lines:
                moved = MemoryPath(q.parts + e.path.parts[len(p.parts) :])
                self.put(e.path.parent, out, f"retargeted the paths in {moved.text}")

    def describe(self, p: MemoryPath, old_text: str | None, text: str | None) -> None:
        """A changed description carried into the entry memdir wrote for the file."""
        old, new = _description(old_text), _description(text)
        if old == new or p.name == MEMORY_INDEX:
            return
        lines = self.index(p.parent)
        if lines is None:
            return
        mine = folder_index.entry(p.name, old)
        out = [folder_index.entry(p.name, new) if ln == mine else ln for ln in lines]
        if out != lines:
            self.put(p.parent, out, f"updated the description of {p.name} in {_index(p.parent).text}")

    def result(self) -> Upkeep:
        for folder, lines in self.lines.items():
            if lines != self.before.get(folder):
                self.out.writes[_index(folder).text] = None if lines is None else "\n".join(lines)
        # A folder's index made and then removed in the same plan never existed: nothing to say.
        self.out.said = list(dict.fromkeys(self.out.said))
        return self.out


def _append(lines: list[str], add: list[str]) -> list[str]:
    """`lines` (a file split at newlines) with `add` after its last non-blank line."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return [*lines[:end], *add, *lines[end:]] if end < len(lines) else [*lines, *add, ""]


def plan(store: Store, event: Event) -> Upkeep:
    """What the indexes must become for `event` to leave the store valid (nothing written);
    an EditError when the event would take a needed index away."""
    p = _Planner(store)
    if event.path.is_root or (event.new is not None and event.new.is_root):
        return Upkeep()  # refused by the write itself
    if (event.kind == "create") == store.exists(event.path) or (event.new and store.exists(event.new)):
        return Upkeep()  # a create of what exists, or a change of what does not: refused too
    if event.kind == "create":
        p.arrive(event.path, False, event.text, [])
    elif event.kind == "modify":
        p.describe(event.path, event.old_text, event.text)
    elif event.kind == "delete":
        p.withdraw(event.path)
    elif event.new is not None:
        if event.is_dir and not event.holds_md:
            return Upkeep()
        p.move(event.path, event.new, event.is_dir, event.text)
    return p.result()


def after(store: Store, changes: list[tuple[str, str, str | None]]) -> Upkeep:
    """What the indexes must become after writes made outside the file tools (the shell's),
    which land before they can be planned: entries naming a path gone are dropped, a path
    that came gets its entry (and its folders their indexes), and a memory directory whose
    index went gets a new one. Empty folders are left as the writes left them."""
    p = _Planner(store)
    gone = [c[1] for c in changes if c[0] in ("delete", "rename")]
    came = [c[2] or c[1] for c in changes if c[0] in ("create", "rename", "modify")]
    for path in gone:
        mp = store.parse(path)
        if mp.name != MEMORY_INDEX and not store.exists(mp):
            p.drop_entries(mp)
    for path in came:
        mp = store.parse(path)
        if mp.name.endswith(".md") and store.exists(mp) and not store.is_dir(mp):
            p.arrive(mp, False, _read(store, mp), [])
    for path in gone:
        mp = store.parse(path)
        if mp.name == MEMORY_INDEX and not store.exists(mp):
            first = next((e.path for e in store.files(mp.parent) if e.path.parent == mp.parent), None)
            if first is not None:  # the folder still holds notes: it needs an index again
                p.arrive(first, False, _read(store, first), [])
            elif not any(True for _ in store.files(mp.parent)):  # no longer a memory directory
                p.drop_entries(mp.parent)
    return p.result()


def _read(store: Store, mp: MemoryPath) -> str | None:
    try:
        return store.read_text(mp)
    except MemdirError:
        return None
