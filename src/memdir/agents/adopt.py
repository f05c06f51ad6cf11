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
from memdir.agents.adopt_walk import entries, hidden
from memdir.agents.adopt_watch import Saved, checked, present
from memdir.errors import MemdirError
from memdir.store import folder_index, frontmatter, retarget, spec
from memdir.store.frontmatter import KEBAB, MEMORY_INDEX
from memdir.store.operations import operation
from memdir.store.paths import ROOT, MemoryPath
from memdir.store.store import Store
from memdir.stream import BOM

TOOL = "adopt"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_MAX_DESCRIPTION = 200
_BOM = BOM.decode("utf-8")
ROUNDS = 3  # plans made under the writer lock before adopt gives up on notes that keep changing
CHANGED = "changed on disk after the plan was made: planned again from its new bytes, which are kept"


@dataclass
class Adoption:
    """What adopting a folder does (or did): each list holds memory paths, with a reason where
    something is left alone. `seen` holds the digest of every path the plan read or makes (None:
    absent then), so the landing can tell a note saved since from the one it planned."""

    described: list[str] = field(default_factory=list)  # frontmatter added or completed
    renamed: list[tuple[str, str]] = field(default_factory=list)
    indexed: list[str] = field(default_factory=list)  # MEMORY.md made
    misnamed: list[str] = field(default_factory=list)  # stems validate refuses, kept
    left: list[tuple[str, str]] = field(default_factory=list)  # (path, why) not touched
    texts: dict[str, str] = field(default_factory=dict)  # path -> the new text
    removed: list[str] = field(default_factory=list)  # old paths of renamed notes
    unmarked: list[str] = field(default_factory=list)  # a byte order mark hid the frontmatter
    retargeted: list[str] = field(default_factory=list)  # `see` references to renamed notes
    replanned: list[str] = field(default_factory=list)  # saved by someone else meanwhile
    seen: dict[str, str | None] = field(default_factory=dict)
    rename: bool = False

    @property
    def changes(self) -> int:
        return len(self.texts) + len(self.removed)

    def lines(self) -> list[str]:
        out = [f"add frontmatter: {p}" for p in self.described]
        out += [f"rename: {a} -> {b}" for a, b in self.renamed]
        out += [f"make index: {p}" for p in self.indexed]
        out += [
            f"drop byte order mark: {p} (it hid the note's frontmatter from every reader)"
            for p in self.unmarked
        ]
        out += [
            f"rewrite references: {p} (its 'see /memories/...' lines name renamed notes)"
            for p in self.retargeted
        ]
        out += [f"planned again: {p} ({CHANGED})" for p in self.replanned]
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
    out = Adoption(rename=rename)
    folders: dict[MemoryPath, list[tuple[str, str]]] = {ROOT: []}  # folder -> (entry, description)
    subfolders: dict[MemoryPath, list[MemoryPath]] = {ROOT: []}
    governed = spec.governed_dirs(store)
    found, out.left = entries(store)
    taken = {mp.text for mp, _ in found}
    texts: dict[str, str] = {}  # every markdown text read, as read
    for mp, is_dir in found:
        if is_dir:
            if not spec.is_governed(mp, governed):
                folders.setdefault(mp, [])
                subfolders.setdefault(mp, [])
                subfolders.setdefault(mp.parent, []).append(mp)
            continue
        if spec.is_governed(mp, governed) or mp.name == MEMORY_INDEX:
            if rename and mp.name.endswith(".md"):  # no adoption of its own, but references
                _read(store, mp, out, texts)
            continue
        if not mp.name.endswith(".md"):
            out.left.append((mp.text, "not a markdown file"))
            continue
        entry = _note(store, mp, rename, taken, out, texts)
        if entry is not None:
            folders.setdefault(mp.parent, []).append(entry)
    out.left += [(h, "hidden: no memory path reaches it") for h in hidden(store, [ROOT, *subfolders])]
    if out.renamed:
        _retarget(store, out, texts)
    for folder in sorted(folders, key=lambda m: m.parts):
        index = folder.child(MEMORY_INDEX)
        if store.exists(index) or (not folders[folder] and not _holds_notes(folder, folders)):
            continue
        out.indexed.append(index.text)
        out.seen[index.text] = None
        kids = sorted(subfolders.get(folder, []), key=lambda m: m.parts)
        out.texts[index.text] = _index(folder, folders[folder], [k for k in kids if _holds_notes(k, folders)])
    return out


def _read(store: Store, mp: MemoryPath, out: Adoption, texts: dict[str, str]) -> str | None:
    """The note's text, its digest kept in `out.seen`; None (and listed) when it cannot be read."""
    try:
        data = store.read_bytes(mp)
        text = data.decode("utf-8")
    except (MemdirError, UnicodeDecodeError) as exc:
        why = f"{mp.text} is not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
        out.left.append((mp.text, f"unreadable: {why}"))
        return None
    out.seen[mp.text] = landing.sha256(data)
    texts[mp.text] = text
    return text


def _note(
    store: Store, mp: MemoryPath, rename: bool, taken: set[str], out: Adoption, texts: dict[str, str]
) -> tuple[str, str] | None:
    """The note's index entry (file name, description), planning its frontmatter and rename.
    A byte order mark an editor put first is dropped (no reader finds frontmatter behind it);
    the lines adopt adds end as the note's first line does (CRLF or LF)."""
    read = _read(store, mp, out, texts)
    if read is None:
        return None
    text = read.removeprefix(_BOM)
    eol = "\r\n" if text.split("\n", 1)[0].endswith("\r") else "\n"
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
            out.seen[target.text] = None
            name = kebab(stem)
        else:
            out.misnamed.append(mp.text)
    description = fm.description or describe(frontmatter.body(text), stem)
    if fm.present:
        new_text = _completed(text, fm, name, description, eol)
    else:
        new_text = frontmatter.dump(name, description).replace("\n", eol) + text
    where = mp.parent.child(f"{name}.md").text
    if new_text != read or where != mp.text:
        out.texts[where] = new_text
        if new_text != text:
            out.described.append(where)
        if text != read:
            out.unmarked.append(where)
    return (f"{name}.md", description)


def _completed(text: str, fm: frontmatter.Frontmatter, name: str, description: str, eol: str) -> str:
    """`text` with the keys its block lacks put right after the opening fence, every other byte kept."""
    block = frontmatter.dump(name, description).splitlines(keepends=True)[1:-1]  # the key lines
    wanted = [ln for ln in block if (ln.startswith("name:") and fm.name is None)
              or (ln.startswith("description:") and fm.description is None)]  # fmt: skip
    first_end = text.index("\n") + 1
    return text[:first_end] + "".join(wanted).replace("\n", eol) + text[first_end:]


def _retarget(store: Store, out: Adoption, texts: dict[str, str]) -> None:
    """Every `see /memories/...` reference to a renamed note, in any note of the store, made to
    name its new path, in the same step (`store/retarget.py`): on the text adopt plans for a note
    it changes anyway, on the text as read for any other."""
    moves = dict(out.renamed)
    planned = {p: out.texts.get(moves.get(p, p), t) for p, t in texts.items()}
    changed = set(out.texts)
    for p, new in retarget.plan(store, moves, planned).items():
        where = moves.get(p, p)
        out.texts[where] = new
        if where not in changed:
            out.retargeted.append(where)


def _holds_notes(folder: MemoryPath, folders: dict[MemoryPath, list[tuple[str, str]]]) -> bool:
    """A memory directory: a folder holding notes, or one above such a folder (`spec`'s rule)."""
    return any(f.is_within(folder) and notes for f, notes in folders.items())


def _index(folder: MemoryPath, notes: list[tuple[str, str]], kids: list[MemoryPath]) -> str:
    what = "Root index of this memory (adopted notes)" if folder.is_root else f"Index of {folder.text}"
    return folder_index.render(folder, list(notes), [k.name for k in kids], what=what)


def adopt(store: Store, adoption: Adoption) -> Adoption:
    """Land `adoption` as one journaled step (landing's whole-or-nothing write); returns what
    landed. Under the writer lock every path the plan read or makes is read again, and each
    note is compared with those bytes once more just before it is replaced: a note someone saved
    since the plan was made (an editor takes no lock) is planned again from what was saved, and
    listed, and a save made during the landing puts the landing back whole (the save kept) and
    it starts again, so a save is never replaced by a text planned from the bytes before it
    (docs/reliability.md). After ROUNDS plans, notes that keep changing stop it, unchanged."""
    if not adoption.changes:
        return adoption
    replanned: set[str] = set()
    moved: list[str] = []
    with operation(store.root, TOOL, f"adopt {store.root.name}"), store.step(TOOL) as step:
        for _ in range(ROUNDS):
            now = {p: present(store, p) for p in adoption.seen}
            moved = sorted(p for p, d in adoption.seen.items() if now[p][0] != d)
            if not moved:
                adoption.replanned = sorted(replanned)
                if not adoption.changes:
                    return adoption
                recorded = len(step.changes)
                try:
                    _land(store, adoption, {p: data for p, (_, data) in now.items()})
                    return adoption
                except Saved as exc:  # the landing was put back, the save kept: plan again
                    del step.changes[recorded:]
                    moved = [exc.path]
            replanned.update(moved)
            adoption = plan(store, rename=adoption.rename)
    raise MemdirError(
        f"{len(moved)} note(s) kept changing while adopt ran ({', '.join(moved[:5])}): nothing was "
        "changed; run adopt again once they are saved"
    )


def _land(store: Store, adoption: Adoption, now: dict[str, bytes | None]) -> None:
    """The plan as landing's file operations, from the bytes just checked. A renamed note is a
    move then a rewrite to landing, so it keeps its mode (a 0644 note stays 0644, as a
    rewrite in place does) and the journal records the rename, which `memdir revert` moves back."""
    new = {p: t.encode("utf-8") for p, t in adoption.texts.items()}
    current = {p: landing.sha256(b) for p in [*new, *adoption.removed] if (b := now.get(p)) is not None}
    target = {p: d for p, d in current.items() if p not in adoption.removed}
    target.update({p: landing.sha256(b) for p, b in new.items()})
    ops = landing.plan(current, target, dict(adoption.renamed))
    old = {p: b for p in ops.old_side if (b := now.get(p)) is not None}
    with checked(store, now, old):
        landing.apply(store, ops, {p: new[p] for p in ops.needed}, old)
