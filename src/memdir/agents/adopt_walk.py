"""What `memdir adopt` finds in a folder of notes, and what it leaves alone and why.

The walk is the store's own (`SafeRoot.scan`: descriptors, no link followed), and every entry it
does not adopt is named with a reason, never passed over unsaid: a link (to a file or a folder),
a FIFO or device, a file with other hard links (`paths.unplain`, the one wording for them), a
folder too deep, a name that is not UTF-8, or one no memory path can spell (a newline in it,
shown escaped on its one line of output). One such name no longer stops the adoption of the rest.
"""

from __future__ import annotations

from memdir.errors import MemdirError, PathError
from memdir.store.paths import ROOT, MemoryPath, parse_memory_path, unplain
from memdir.store.safefs import printable, unread
from memdir.store.store import Store


def entries(store: Store) -> tuple[list[tuple[MemoryPath, bool]], list[tuple[str, str]]]:
    """(path, is a folder) of each folder and plain file a link-safe walk finds, and (path, why)
    of everything else, what is below a folder no memory path can spell included."""
    found: list[tuple[MemoryPath, bool]] = []
    left: list[tuple[str, str]] = []
    barred: list[tuple[str, ...]] = []
    for f in store.safe.scan((), ROOT.text):
        if any(f.parts[: len(b)] == b for b in barred):
            continue
        shown = shown_path(printable(f.parts))
        finding = unread(f)
        if finding is not None:
            left.append((shown, finding.reason))
            continue
        if f.kind not in ("dir", "file") or (f.kind == "file" and f.nlink > 1):
            st = store.safe.lstat(f.parts, shown)
            left.append(
                (shown, (unplain(st) if st is not None else None) or "gone while adopt read the folder")
            )
            continue
        try:
            mp = parse_memory_path(ROOT.text + "".join("/" + p for p in f.parts))
        except PathError as exc:
            why = str(exc).rsplit(": ", 1)[-1]
            left.append((shown, f"its name: {why}; rename it outside memdir to adopt it"))
            barred.append(f.parts)
            continue
        found.append((mp, f.kind == "dir"))
    return found, left


def shown_path(text: str) -> str:
    """`text` on one line: a character that is not printable (a newline in a name) escaped."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def hidden(store: Store, dirs: list[MemoryPath]) -> list[str]:
    """Hidden entries (a leading '.'), outside `.memdir/`, that no memory path can name."""
    found = []
    for folder in sorted(set(dirs), key=lambda m: m.parts):
        try:
            names = sorted(f.parts[-1] for f in store.safe.scan(folder.parts, folder.text, hidden=True) if
                           len(f.parts) == len(folder.parts) + 1 and f.parts[-1].startswith("."))  # fmt: skip
        except (MemdirError, OSError):
            continue
        found += [f"{folder.text}/{n}" for n in names if not (folder.is_root and n == ".memdir")]
    return found
