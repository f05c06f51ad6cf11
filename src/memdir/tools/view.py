"""view: a file with line numbers, or a folder's entries up to LIST_DEPTH levels down.

The text is the base contract's (docs/study.md, Tool contracts: a file with line numbers, frontmatter
first; a folder as full paths with sizes, a folder's size counting everything inside it, each
file with its [description: ...]). memdir adds the same outcome as data: for a file its sha256
(the value the writers take as `expected_sha256`), line and byte counts; for a folder its
entries as fields (docs/tools.md).
"""

from __future__ import annotations

from memdir.conventions import one_line
from memdir.errors import EditError, NotFoundError
from memdir.jsontypes import JsonObject
from memdir.store import descriptions
from memdir.store.listing_walk import LevelWalk, Seen, walk_levels
from memdir.store.paths import PREFIX, MemoryPath
from memdir.store.safefs import Unread
from memdir.store.store import Store
from memdir.tools import outputs
from memdir.tools.base import ToolContext, tool
from memdir.tools.preconditions import file_state, read_checked
from memdir.tools.text import human_size, nameable, numbered, split_lines

LIST_DEPTH = 3
# Bounds that keep one call from flooding the model; each refusal says what to do.
MAX_VIEW_BYTES = 2 * 1024 * 1024
MAX_LIST_ENTRIES = 1000
MAX_UNREAD_SHOWN = 5  # findings of the walk (a folder too deep, a name not UTF-8) a listing names


# Line ranges that mean "all of it": a folder viewed with one of these is listed without a note.
FULL_RANGES = {(1, -1), (1, None), (None, -1), (0, -1)}


@tool(
    description="""
    View a file with line numbers, or list a directory.
    A file: its text with line numbers (the frontmatter occupies the first lines); narrow with
    start_line/end_line (1-indexed, inclusive, end_line -1 = to the end).
    A directory: entries up to 3 levels below it as full paths with sizes (a folder's size counts
    everything inside it), each file with its [description: ...].
    """,
    params={
        "path": "A memory path: /memories or a file or folder below it.",
        "start_line": "First line to show (files only; 1-indexed).",
        "end_line": "Last line to show, inclusive (files only; -1 = end of file).",
        "show_sha256": "Also end the text with the file's sha256, the value writers take as "
        "expected_sha256 (files only; default false).",
    },
    read_only=True,
    title="View a file or folder",
    extensions=("show_sha256",),
    output_schema=outputs.VIEW,
)
def view(
    ctx: ToolContext,
    path: str,
    start_line: int | None = None,
    end_line: int | None = None,
    show_sha256: bool = False,
) -> str:
    mp, disk = ctx.store.resolve(path)
    if not disk.exists():
        hint = "; to make a new file, use create" if mp.text.endswith(".md") else ""
        raise NotFoundError(f"{mp.text} does not exist; view {mp.parent.text} to see what is there{hint}")
    if disk.is_dir():
        listing, ctx.data = list_dir(ctx, mp)
        if (start_line, end_line) != (None, None) and (start_line, end_line) not in FULL_RANGES:
            # Small models fill every parameter in; the listing is still what they need.
            return f"Note: {mp.text} is a folder; start_line and end_line apply to files only.\n{listing}"
        return listing
    text, digest = read_checked(ctx, mp)
    shown, first, last = _view_file(mp, text, start_line, end_line)
    ctx.data = {"kind": "file", **file_state(mp, text, digest), "start_line": first, "end_line": last}
    return f"{shown}\nsha256: {digest}" if show_sha256 else shown


def _view_file(
    mp: MemoryPath, text: str, start_line: int | None, end_line: int | None
) -> tuple[str, int, int]:
    """The base contract's text of a file view and the lines it shows (0, 0 for an empty file)."""
    lines = split_lines(text)
    total = len(lines)
    if start_line is None and end_line is None:
        if len(text) > MAX_VIEW_BYTES:
            raise EditError(
                f"{mp.text} is {human_size(len(text.encode()))}, too large to view whole; view it in ranges "
                f"with start_line and end_line (it has {total} lines), or grep it"
            )
        if not lines:
            return f"{mp.text} (empty file)", 0, 0
        return f"{mp.text} ({total} lines)\n{numbered(lines, 1)}", 1, total
    first = 1 if start_line is None else start_line
    last = total if end_line is None or end_line == -1 else end_line
    if first < 1 or first > max(total, 1):
        raise EditError(f"start_line {first} is out of range; {mp.text} has {total} lines (1-{total})")
    if last < first or last > total:
        raise EditError(
            f"end_line {end_line} is out of range; use a line from {first} to {total}, or -1 for the end"
        )
    chosen = lines[first - 1 : last]
    size = sum(len(ln) + 1 for ln in chosen)
    if size > MAX_VIEW_BYTES:
        hint = "narrow the range" if last > first else "grep shows a clipped view of it"
        raise EditError(
            f"lines {first}-{last} of {mp.text} hold {human_size(size)}, too much to show; {hint}"
        )
    return f"{mp.text} (lines {first}-{last} of {total})\n{numbered(chosen, first)}", first, last


def list_dir(ctx: ToolContext, top: MemoryPath) -> tuple[str, JsonObject]:
    """The listing's text and its data (outputs.VIEW, the directory form): one walk of the
    subtree (store/listing_walk.py), path objects only for the entries shown, descriptions
    from the store's cache where it keeps one (store/descriptions.py)."""
    store = ctx.store
    if store.is_dir(top):
        walk = walk_levels(store.safe, top.parts, top.text, LIST_DEPTH)
    else:  # gone since view looked: an empty listing, as an empty walk gives
        walk = LevelWalk(totals={top.parts: 0})
    totals, unread = walk.totals, walk.unread
    entries: list[tuple[MemoryPath, str, Seen]] = []  # (path, its text, what the walk saw)
    unnamed = 0
    for e in walk.entries:
        mp = MemoryPath(e.parts)
        if nameable(mp):
            entries.append((mp, "/".join((PREFIX, *e.parts)), e))  # the text is mp.text
        elif nameable(mp.parent):  # a name no path can spell (text.nameable): counted, not shown
            unnamed += 1
    hidden = max(0, len(entries) - MAX_LIST_ENTRIES)
    shown = entries[:MAX_LIST_ENTRIES]
    descs = _descriptions(store, top, shown, {t for _, t, e in entries if not e.is_dir})
    out = [f"{human_size(totals[top.parts])}\t{top.text}/"]
    rows: list[JsonObject] = []
    for (mp, text, e), desc in zip(shown, descs, strict=True):
        size = totals[mp.parts] if e.is_dir else e.size
        line = f"{human_size(size)}\t{text}/" if e.is_dir else f"{human_size(size)}\t{text}"
        desc = one_line(desc) if desc else desc  # one line, also from an older cache
        if desc:
            line += f"  [description: {desc}]"
        out.append(line)
        rows.append(
            {
                "path": text,
                "kind": "directory" if e.is_dir else "file",
                "size": size,
                "description": desc or None,
            }
        )
    data: JsonObject = {
        "kind": "directory",
        "path": top.text,
        "size": totals[top.parts],
        "entries": rows,
        "entries_not_shown": hidden + unnamed,
        "not_read": len(unread),
    }
    return _listing_text(top, out, unread, unnamed, hidden), data


def _descriptions(
    store: Store, top: MemoryPath, shown: list[tuple[MemoryPath, str, Seen]], files_met: set[str]
) -> list[str | None]:
    """The description of each shown entry (None for folders and files other than .md).
    `files_met` (every file the walk met on the listed levels) lets the cache drop rows of
    files gone."""
    files = [
        (mp, text, (e.size, e.mtime_ns, e.ctime_ns, e.ino))
        for mp, text, e in shown
        if not e.is_dir and text.endswith(".md")
    ]
    cache = descriptions.cache_for(store)
    if cache is None:
        found = [descriptions.read_description(store, mp) for mp, _, _ in files]
    else:
        found = cache.describe(store, files)
        cache.prune(top, LIST_DEPTH, files_met)
    by_path = {text: d for (_, text, _), d in zip(files, found, strict=True)}
    return [by_path.get(text) for _, text, _ in shown]


def _listing_text(top: MemoryPath, out: list[str], unread: list[Unread], unnamed: int, hidden: int) -> str:
    header = f"Directory {top.text}: entries up to {LIST_DEPTH} levels deep; sizes include all contents."
    if len(out) == 1 and not unnamed and not unread:
        return f"{header}\n{out[0]}\n(empty)"
    for u in unread[:MAX_UNREAD_SHOWN]:
        out.append(f"... not read: {u}")
    if len(unread) > MAX_UNREAD_SHOWN:
        out.append(f"... {len(unread) - MAX_UNREAD_SHOWN} more entries not read for these reasons")
    if unnamed:
        out.append(
            f"... {unnamed} entries not shown: their names hold characters memory paths refuse "
            "(a newline, a backslash, ...); they were written outside the tools, so rename them there"
        )
    if hidden:
        out.append(
            f"... {hidden} more entries not shown (listing stops at {MAX_LIST_ENTRIES}); "
            "view a subfolder, or grep / search for what you need"
        )
    return header + "\n" + "\n".join(out)
