"""`memdir adopt`: an existing folder of markdown notes made a valid memory in place.

What the Agent Memory convention asks (`store/spec.py`, `store/frontmatter.py`) is added and
nothing else changes: a `name`/`description` frontmatter block on each note that has none (the
name is the file stem; the description the note's first heading, else its first non-empty line),
the missing keys put at the top of a block that lacks them, and a `MEMORY.md` index in every
memory directory that has none (its notes with their descriptions, then its folders). Every
line a note had stays as it was, after the frontmatter.

A file stem that is not kebab-case (`Travel Plans.md`) is kept by default and reported:
renaming would break every link the user's other tools hold to it, and a rename should be the
user's choice (`rename=True`, `--rename`, makes it). Left alone and reported: hidden entries,
files that are not markdown, a note whose frontmatter is broken (rewriting it could lose what
the user meant), a note whose `name` already differs from its stem, and folders governed by a
`SKILL.md`. All changes land as one journaled step through `agents/landing.py` (the consolidate
path: written whole or not at all), so `memdir revert` undoes an adoption in one go.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from memdir.agents import landing
from memdir.errors import MemdirError
from memdir.store import folder_index, frontmatter, spec
from memdir.store.frontmatter import KEBAB, MEMORY_INDEX
from memdir.store.operations import operation
from memdir.store.paths import ROOT, MemoryPath
from memdir.store.safefs import Unread
from memdir.store.store import Store

TOOL = "adopt"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_MAX_DESCRIPTION = 200


@dataclass
class Adoption:
    """What adopting a folder does (or did): each list holds memory paths, with a reason where
    something is left alone."""

    described: list[str] = field(default_factory=list)  # frontmatter added or completed
    renamed: list[tuple[str, str]] = field(default_factory=list)
    indexed: list[str] = field(default_factory=list)  # MEMORY.md made
    misnamed: list[str] = field(default_factory=list)  # stems validate refuses, kept
    left: list[tuple[str, str]] = field(default_factory=list)  # (path, why) not touched
    texts: dict[str, str] = field(default_factory=dict)  # path -> the new text
    removed: list[str] = field(default_factory=list)  # old paths of renamed notes

    @property
    def changes(self) -> int:
        return len(self.texts) + len(self.removed)

    def lines(self) -> list[str]:
        out = [f"add frontmatter: {p}" for p in self.described]
        out += [f"rename: {a} -> {b}" for a, b in self.renamed]
        out += [f"make index: {p}" for p in self.indexed]
        out += [
            f"kept name: {p} (not kebab-case, so validate refuses it; renaming would break links to "
            "it: rename it yourself, or adopt with --rename)"
            for p in self.misnamed
        ]
        out += [f"left alone: {p} ({why})" for p, why in self.left]
        return out


def kebab(stem: str) -> str:
    """`Travel Plans (2024)` -> `travel-plans-2024`: lowercase ASCII words joined by '-'."""
    ascii_stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_stem.lower()).strip("-")


def describe(body: str, stem: str) -> str:
    """The note's first heading, else its first non-empty line, as one trimmed line."""
    for line in body.splitlines():
        if not line.strip() or line.strip() in ("---", "***"):
            continue
        m = _HEADING.match(line)
        text = " ".join((m[1] if m else line).split()).strip(" #*-_>")
        if text:
            return text[:_MAX_DESCRIPTION]
    return f"Notes: {stem}"


def plan(store: Store, *, rename: bool = False) -> Adoption:
    """What adoption would change, computed from the files alone (nothing written)."""
    out = Adoption()
    folders: dict[MemoryPath, list[tuple[str, str]]] = {ROOT: []}  # folder -> (entry, description)
    subfolders: dict[MemoryPath, list[MemoryPath]] = {ROOT: []}
    governed = spec.governed_dirs(store)
    unread: list[Unread] = []
    taken = {e.path.text for e in store.walk(unread=unread)}
    for e in store.walk():
        mp = e.path
        if spec.is_governed(mp, governed):
            continue
        if e.is_dir:
            folders.setdefault(mp, [])
            subfolders.setdefault(mp, [])
            subfolders.setdefault(mp.parent, []).append(mp)
            continue
        if not mp.name.endswith(".md"):
            out.left.append((mp.text, "not a markdown file"))
            continue
        if mp.name == MEMORY_INDEX:
            continue
        entry = _note(store, mp, rename, taken, out)
        if entry is not None:
            folders.setdefault(mp.parent, []).append(entry)
    out.left += [(u.path, u.reason) for u in unread]
    out.left += [(h, "hidden: no memory path reaches it") for h in _hidden(store)]
    for folder in sorted(folders, key=lambda m: m.parts):
        index = folder.child(MEMORY_INDEX)
        if store.exists(index) or (not folders[folder] and not _holds_notes(folder, folders)):
            continue
        out.indexed.append(index.text)
        kids = sorted(subfolders.get(folder, []), key=lambda m: m.parts)
        out.texts[index.text] = _index(folder, folders[folder], [k for k in kids if _holds_notes(k, folders)])
    return out


def _note(
    store: Store, mp: MemoryPath, rename: bool, taken: set[str], out: Adoption
) -> tuple[str, str] | None:
    """The note's index entry (file name, description), planning its frontmatter and rename."""
    try:
        text = store.read_text(mp)
    except MemdirError as exc:
        out.left.append((mp.text, f"unreadable: {exc}"))
        return None
    stem = mp.name[:-3]
    fm = frontmatter.parse(text)
    if not fm.present and (broken := frontmatter.broken_fence(text)) is not None:
        out.left.append((mp.text, f"broken frontmatter: {broken}"))
        return None
    desc = fm.data.get("description")
    odd_name = fm.name is not None and fm.name != stem
    odd_desc = desc is not None and (not isinstance(desc, str) or fm.description != desc or not desc.strip())
    if fm.problems or odd_name or odd_desc:
        why = fm.problems[0] if fm.problems else (
            f"its name {fm.name!r} differs from the stem" if odd_name
            else "its description is not one line of text"
        )  # fmt: skip
        out.left.append((mp.text, f"frontmatter left as written: {why}"))
        return None
    name = stem
    if not KEBAB.match(stem):
        target = mp.parent.child(f"{kebab(stem)}.md") if kebab(stem) else None
        if rename and fm.name is None and target is not None and target.text not in taken:
            taken.add(target.text)
            out.renamed.append((mp.text, target.text))
            out.removed.append(mp.text)
            name = kebab(stem)
        else:
            out.misnamed.append(mp.text)
    description = fm.description or describe(frontmatter.body(text), stem)
    if fm.present:
        new_text = _completed(text, fm, name, description)
    else:
        new_text = frontmatter.dump(name, description) + text
    where = mp.parent.child(f"{name}.md").text
    if new_text != text or where != mp.text:
        out.texts[where] = new_text
        if new_text != text:
            out.described.append(where)
    return (f"{name}.md", description)


def _completed(text: str, fm: frontmatter.Frontmatter, name: str, description: str) -> str:
    """`text` with the keys its block lacks put right after the opening fence, every other byte kept."""
    block = frontmatter.dump(name, description).splitlines(keepends=True)[1:-1]  # the key lines
    wanted = [ln for ln in block if (ln.startswith("name:") and fm.name is None)
              or (ln.startswith("description:") and fm.description is None)]  # fmt: skip
    first_end = text.index("\n") + 1
    return text[:first_end] + "".join(wanted) + text[first_end:]


def _holds_notes(folder: MemoryPath, folders: dict[MemoryPath, list[tuple[str, str]]]) -> bool:
    """A memory directory: a folder holding notes, or one above such a folder (`spec`'s rule)."""
    return any(f.is_within(folder) and notes for f, notes in folders.items())


def _index(folder: MemoryPath, notes: list[tuple[str, str]], kids: list[MemoryPath]) -> str:
    what = "Root index of this memory (adopted notes)" if folder.is_root else f"Index of {folder.text}"
    return folder_index.render(folder, list(notes), [k.name for k in kids], what=what)


def _hidden(store: Store) -> list[str]:
    """Hidden entries (a leading '.'), outside `.memdir/`, that no memory path can name."""
    found = []
    for folder in [ROOT, *(e.path for e in store.walk() if e.is_dir)]:
        _, disk = store.resolve(folder)
        try:
            names = sorted(p.name for p in disk.iterdir() if p.name.startswith("."))
        except OSError:
            continue
        found += [f"{folder.text}/{n}" for n in names if not (folder.is_root and n == ".memdir")]
    return found


def adopt(store: Store, adoption: Adoption) -> None:
    """Land `adoption` as one journaled step (landing's whole-or-nothing write)."""
    if not adoption.changes:
        return
    new = {p: t.encode("utf-8") for p, t in adoption.texts.items()}
    with operation(store.root, TOOL, f"adopt {store.root.name}"), store.step(TOOL):
        paths = [*new, *adoption.removed]
        current = {p: landing.sha256(store.read_bytes(p)) for p in paths if store.exists(p)}
        target = {p: d for p, d in current.items() if p not in adoption.removed}
        target.update({p: landing.sha256(b) for p, b in new.items()})
        ops = landing.plan(current, target)
        landing.apply(store, ops, {p: new[p] for p in ops.needed}, landing.read(store, ops.old_side))
