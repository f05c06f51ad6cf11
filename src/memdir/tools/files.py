"""The file tools of the management set: view, create, str_replace, insert, delete, rename.

Contracts are those of docs/study.md, Tool contracts. Each error says what to do next, and every
check happens before the single atomic write, so a failed call leaves the store byte-identical.
"""

from __future__ import annotations

from memdir.errors import EditError, FrontmatterError, NotFoundError, PathError, ToolError
from memdir.store import frontmatter
from memdir.store.paths import MemoryPath, parse_memory_path
from memdir.store.safefs import Unread
from memdir.tools.base import ToolContext, tool
from memdir.tools.text import human_size, line_of_offset, nameable, numbered, occurrences, split_lines

LIST_DEPTH = 3
HEAD_BYTES = 16384  # enough for any frontmatter a listing shows (parsed up to 4,096 characters)
SNIPPET_CONTEXT = 2
# Bounds that keep one call from flooding the model or the disk; each refusal says what to do.
MAX_VIEW_BYTES = 2 * 1024 * 1024
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_LIST_ENTRIES = 1000
MAX_UNREAD_SHOWN = 5  # findings of the walk (a folder too deep, a name not UTF-8) a listing names


def _md_path(path: str, verb: str) -> MemoryPath:
    mp = parse_memory_path(path)
    if not mp.name.endswith(".md"):
        raise PathError(f"{mp.text}: only .md files can be {verb}; use a path ending in .md")
    return mp


def _description(ctx: ToolContext, mp: MemoryPath) -> str | None:
    """The description of a file the listing walk found, reading only its head, through the
    store's link-safe reader (a folder swapped for a link mid-listing cannot lead out); a
    hard-linked, linked or unreadable file gets none."""
    try:
        data = ctx.store.safe.read(mp.parts, mp.text, limit=HEAD_BYTES)
    except ToolError:
        return None
    try:
        head = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a head cut inside a character is fine; other bad bytes are not
        if len(data) < HEAD_BYTES or exc.start < len(data) - 3:
            return None
        head = data[: exc.start].decode("utf-8")
    return frontmatter.parse(head[:4096]).description


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
    },
    read_only=True,
)
def view(ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    mp, disk = ctx.store.resolve(path)
    if not disk.exists():
        hint = "; to make a new file, use create" if mp.text.endswith(".md") else ""
        raise NotFoundError(f"{mp.text} does not exist; view {mp.parent.text} to see what is there{hint}")
    if disk.is_dir():
        listing = _list_dir(ctx, mp)
        if (start_line, end_line) != (None, None) and (start_line, end_line) not in FULL_RANGES:
            # Small models fill every parameter in; the listing is still what they need.
            return f"Note: {mp.text} is a folder; start_line and end_line apply to files only.\n{listing}"
        return listing
    text = ctx.read_text(mp)
    lines = split_lines(text)
    total = len(lines)
    if start_line is None and end_line is None:
        if len(text) > MAX_VIEW_BYTES:
            raise EditError(
                f"{mp.text} is {human_size(len(text.encode()))}, too large to view whole; view it in ranges "
                f"with start_line and end_line (it has {total} lines), or grep it"
            )
        return f"{mp.text} ({total} lines)\n{numbered(lines, 1)}" if lines else f"{mp.text} (empty file)"
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
    return f"{mp.text} (lines {first}-{last} of {total})\n{numbered(chosen, first)}"


def _list_dir(ctx: ToolContext, top: MemoryPath) -> str:
    sizes: dict[tuple[str, ...], int] = {top.parts: 0}
    entries: list[tuple[MemoryPath, bool]] = []
    unnamed = 0
    unread: list[Unread] = []
    for e in ctx.store.walk(top, unread=unread):
        rel_depth = len(e.path.parts) - len(top.parts)
        if e.is_dir:
            sizes.setdefault(e.path.parts, 0)
        else:
            for k in range(len(top.parts), len(e.path.parts)):
                key = e.path.parts[:k]
                sizes[key] = sizes.get(key, 0) + e.size
            sizes[e.path.parts] = e.size
        if rel_depth > LIST_DEPTH:
            continue
        if nameable(e.path):
            entries.append((e.path, e.is_dir))
        elif nameable(e.path.parent):  # a name no path can spell (text.nameable): counted, not shown
            unnamed += 1
    entries.sort(key=lambda pe: pe[0].parts)
    hidden = max(0, len(entries) - MAX_LIST_ENTRIES)
    out = [f"{human_size(sizes[top.parts])}\t{top.text}/"]
    for mp, is_dir in entries[:MAX_LIST_ENTRIES]:
        line = f"{human_size(sizes.get(mp.parts, 0))}\t{mp.text}{'/' if is_dir else ''}"
        if not is_dir and mp.name.endswith(".md"):
            desc = _description(ctx, mp)
            if desc:
                line += f"  [description: {desc}]"
        out.append(line)
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


FRONTMATTER_KEYS = ("name", "description", "metadata")


def _new_frontmatter_keys(new_text: str, old_text: str | None) -> list[str]:
    """A write may not add a top-level frontmatter key beyond name, description and metadata
    (docs/study.md, The store: free-form keys live under metadata). The local model, appending a
    fact with str_replace anchored on the frontmatter, put `- Max: beagle ... [S1T1]` inside it,
    where every listing shows it as a key and no fact reader finds it. Keys a file already had
    are left alone, so a file written elsewhere stays editable."""
    had = set(frontmatter.parse(old_text).data) if old_text is not None else set()
    added = [k for k in frontmatter.parse(new_text).data if k not in FRONTMATTER_KEYS and k not in had]
    if not added:
        return []
    return [
        f"frontmatter would gain {added[0]!r}, which is not one of name, description, metadata: fact "
        "lines go below the closing '---' (anchor str_replace on the body, or use insert), other "
        "fields under 'metadata:'"
    ]


def _check_frontmatter(mp: MemoryPath, new_text: str, old_text: str | None = None) -> None:
    """Every write passes here last: size bound, then the frontmatter rules."""
    size = len(new_text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise EditError(
            f"{mp.text} would be {human_size(size)}, over the {human_size(MAX_FILE_BYTES)} per-file limit; "
            "split the content into several files. Nothing was written."
        )
    errors = frontmatter.validate(new_text, mp.name)
    if old_text is not None:
        before = set(frontmatter.validate(old_text, mp.name))
        errors = [e for e in errors if e not in before]
    errors += _new_frontmatter_keys(new_text, old_text)
    if errors:
        raise FrontmatterError(f"{mp.text}: " + "; ".join(errors) + ". Nothing was written.")


@tool(
    description="""
    Create a new memory file. Fails if it exists (edit it with str_replace or insert instead).
    Missing parent folders are created. The text must open with frontmatter:
    ---
    name: <the file stem, kebab-case>
    description: <one line saying what the file holds>
    ---
    An optional `metadata:` mapping may follow description, as indented key: value lines.
    """,
    params={
        "path": "Where to create it: a path under /memories ending in .md.",
        "file_text": "The whole file, frontmatter first.",
    },
    read_only=False,
)
def create(ctx: ToolContext, path: str, file_text: str) -> str:
    mp = _md_path(path, "created")
    _check_frontmatter(mp, file_text)
    ctx.store.create(mp, file_text)
    ctx.touch(mp)
    return f"Created {mp.text} ({len(split_lines(file_text))} lines)."


def _snippet(text: str, first: int, last: int) -> str:
    lines = split_lines(text)
    lo = max(1, first - SNIPPET_CONTEXT)
    hi = min(len(lines), last + SNIPPET_CONTEXT)
    return numbered(lines[lo - 1 : hi], lo)


@tool(
    description="""
    Replace one exact occurrence of old_str with new_str in a file.
    old_str must occur exactly once in the body (text after the frontmatter); if the body has no
    match, the frontmatter is searched instead, so a field such as description: can be edited by
    anchoring on a unique substring of it. Copy old_str exactly, whitespace included.
    """,
    params={
        "path": "The .md file to edit.",
        "old_str": "The exact text to replace; it must be unique.",
        "new_str": "The replacement text (may be empty to delete old_str).",
    },
    read_only=False,
)
def str_replace(ctx: ToolContext, path: str, old_str: str, new_str: str) -> str:
    mp = _md_path(path, "edited")
    text = ctx.read_text(mp)
    if old_str == "":
        raise EditError("old_str is empty; copy the exact text you want to replace from a view of the file")
    _, fm_lines = frontmatter.split(text)
    body_start = sum(len(ln) + 1 for ln in text.split("\n")[:fm_lines]) if fm_lines else 0
    hits = [body_start + i for i in occurrences(text[body_start:], old_str)]
    where = "body"
    if not hits and fm_lines:
        hits = [i for i in occurrences(text[:body_start], old_str) if i + len(old_str) <= body_start]
        where = "frontmatter"
    if not hits:
        raise EditError(
            f"old_str was not found in {mp.text}; view the file and copy the text exactly, "
            "whitespace and line breaks included"
        )
    if len(hits) > 1:
        lines = ", ".join(str(line_of_offset(text, h)) for h in hits[:20])
        raise EditError(
            f"old_str occurs {len(hits)} times in the {where} of {mp.text}, at lines {lines}; "
            "include more surrounding context to make it unique"
        )
    at = hits[0]
    new_text = text[:at] + new_str + text[at + len(old_str) :]
    _check_frontmatter(mp, new_text, text)
    ctx.store.write(mp, new_text)
    first = line_of_offset(new_text, at)
    last = first + new_str.count("\n")
    return f"Edited {mp.text} ({where}, line {first}):\n{_snippet(new_text, first, last)}"


@tool(
    description="""
    Insert text after line insert_line of a file (0 = at the very start). The valid range is 0 to
    the file's line count; an insert may not land inside the frontmatter, so for a file with
    frontmatter insert_line must be at least the line of its closing '---'.
    """,
    params={
        "path": "The .md file to edit.",
        "insert_line": "Insert after this line (0 = before the first line).",
        "insert_text": "The text to insert; a final newline is added if missing.",
    },
    read_only=False,
)
def insert(ctx: ToolContext, path: str, insert_line: int, insert_text: str) -> str:
    mp = _md_path(path, "edited")
    text = ctx.read_text(mp)
    lines = split_lines(text)
    total = len(lines)
    _, fm_lines = frontmatter.split(text)
    lowest = fm_lines
    if insert_line < 0 or insert_line > total:
        raise EditError(
            f"insert_line {insert_line} is out of range; {mp.text} has {total} lines, use 0-{total}"
        )
    if insert_line < lowest:
        raise EditError(
            f"insert_line {insert_line} falls inside the frontmatter (lines 1-{fm_lines}) of {mp.text}; "
            f"use {lowest} to {total} (edit frontmatter fields with str_replace)"
        )
    if insert_text == "":
        raise EditError("insert_text is empty; nothing to insert")
    block = insert_text if insert_text.endswith("\n") else insert_text + "\n"
    head = "".join(ln + "\n" for ln in lines[:insert_line])
    tail = "".join(ln + "\n" for ln in lines[insert_line:])
    if not text.endswith("\n") and tail:
        tail = tail[:-1]
    new_text = head + block + tail
    _check_frontmatter(mp, new_text, text)
    ctx.store.write(mp, new_text)
    added = len(split_lines(block))
    return (
        f"Inserted {added} line(s) after line {insert_line} of {mp.text}:\n"
        f"{_snippet(new_text, insert_line + 1, insert_line + added)}"
    )


@tool(
    description="Delete a file, or a folder with everything in it. The root cannot be deleted.",
    params={"path": "The file or folder to delete."},
    read_only=False,
    destructive=True,
)
def delete(ctx: ToolContext, path: str) -> str:
    mp = parse_memory_path(path)
    is_dir = ctx.store.is_dir(mp) if not mp.is_root else True
    gone = ctx.store.delete(mp)
    ctx.touch(mp)
    if is_dir:
        return f"Deleted folder {mp.text} and the {len(gone)} file(s) in it."
    return f"Deleted {mp.text}."


@tool(
    description="""
    Rename or move a file or folder. Missing parent folders are created; the destination must not
    exist. A file keeps its .md extension; a folder cannot become a .md path. After moving a
    file, make its frontmatter name match the new stem.
    """,
    params={"old_path": "The file or folder to move.", "new_path": "Its new path."},
    read_only=False,
)
def rename(ctx: ToolContext, old_path: str, new_path: str) -> str:
    omp = parse_memory_path(old_path)
    nmp = parse_memory_path(new_path)
    if not ctx.store.exists(omp):
        raise NotFoundError(f"{omp.text} does not exist; view {omp.parent.text} to find the right name")
    data: bytes | None = None
    if ctx.store.is_dir(omp):
        if nmp.name.endswith(".md"):
            raise PathError(f"{omp.text} is a folder; it cannot become the .md path {nmp.text}")
    elif not (omp.name.endswith(".md") and nmp.name.endswith(".md")):
        raise PathError(f"a file keeps its .md extension; use a new path ending in .md, not {nmp.text}")
    else:
        # Read before moving: a file the store refuses to read (hard-linked, a FIFO, a link) is
        # refused here, with nothing moved, instead of failing after the move.
        data = ctx.store.read_bytes(omp)
        ctx.meter.bytes_read += len(data)
    ctx.store.rename(omp, nmp)
    ctx.touch(omp)
    ctx.touch(nmp)
    if data is None:
        return f"Moved folder {omp.text} to {nmp.text}."
    name = frontmatter.parse(data.decode("utf-8", "replace")).name
    msg = f"Renamed {omp.text} to {nmp.text}. Its frontmatter name is {name!r}"
    if nmp.name != "MEMORY.md" and name != nmp.stem:
        msg += f"; change it to '{nmp.stem}' with str_replace so it matches the file stem."
    else:
        msg += "."
    return msg
