"""The writing file tools of the management set: create, str_replace, insert, delete, rename
(view, the reading one, is in `view.py`).

Contracts are those of docs/study.md, Tool contracts. Each error says what to do next, and every
check happens before the single atomic write, so a failed call leaves the store byte-identical.
memdir adds (docs/tools.md): `expected_sha256` on every writer but create (a stale hash is
refused before anything is written), the file's sha256 in each result's data, and descriptions
that teach the store's conventions (docs/conventions.md).
"""

from __future__ import annotations

import re
import stat

from memdir.errors import EditError, FrontmatterError, NotFoundError, PathError
from memdir.store import frontmatter
from memdir.store.folder_index_plan import Event
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.paths import MemoryPath, parse_memory_path
from memdir.store.secrets import SecretHit
from memdir.store.secrets import said as said_secrets
from memdir.tools import outputs, references
from memdir.tools.base import ToolContext, tool
from memdir.tools.folder_index_keeping import keeping, land, reply
from memdir.tools.preconditions import (
    PARAM,
    PARAM_TEXT,
    file_state,
    parse_expected,
    read_checked,
    refuse_for_folder,
    require_current,
    sha256_hex,
)
from memdir.tools.text import human_size, line_of_offset, numbered, occurrences, split_lines

SNIPPET_CONTEXT = 2
MAX_FILE_BYTES = 16 * 1024 * 1024  # keeps one call from flooding the disk; the refusal says what to do

# What the writing tools teach about the store (docs/conventions.md), in words of our own; each
# is added after the tool's base contract, which stays as docs/study.md gives it.
FACT_LINES = """
Write facts the way the store keeps them: end every fact line with its source locator in
brackets, e.g. `- 2023-05-02: Calvin bought a vintage Mustang [S6T5]`, and point to what
another file already holds with `see /memories/people/calvin.md` instead of copying it.
"""
SUPERSEDE = """
When a fact's value changes, supersede it rather than overwrite it: strike the old line
through and give the date it stopped holding, then write the new line above it, each with its
own locator:
- alice | diet: vegan (since 2023-05-02) [S6T5]
- ~~alice | diet: vegetarian~~ (2022-01-10 until 2023-05-02) [S1T4]
Keep the locator at the end of every fact line you rewrite.
"""
NEW_VALUE = """
A new value for a fact the store already holds supersedes the old line (strike it through with
its end date, with str_replace); it is not a second live line.
"""
NOT_DELETED = """
A fact that no longer holds is superseded (struck through with its end date), not deleted.
"""
REFERENCES = """
References to the old path in other files (`see /memories/...`) are rewritten to the new one in
the same step, folders included; a path written any other way is not rewritten: grep for it.
"""


def _md_path(path: str, verb: str) -> MemoryPath:
    mp = parse_memory_path(path)
    if not mp.name.endswith(".md"):
        raise PathError(f"{mp.text}: only .md files can be {verb}; use a path ending in .md")
    return mp


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
    if old_text is not None:
        block = frontmatter.split(old_text)
        if block[0] is not None and frontmatter.split(new_text) == block:
            # A body edit: every rule below reads only the block (and the name), so it finds
            # what it found before, which is allowed; parsing both texts' YAML was most of an
            # edit's time (issue 47, benchmarks/vs_anthropic_memory.py).
            return
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
    notes=(FACT_LINES,),
    params={
        "path": "Where to create it: a path under /memories ending in .md.",
        "file_text": "The whole file, frontmatter first.",
    },
    read_only=False,
    title="Create a memory file",
    idempotent=True,  # a second identical call finds the file there and changes nothing
    output_schema=outputs.FILE_STATE,
)
def create(ctx: ToolContext, path: str, file_text: str) -> str:
    mp = _md_path(path, "created")
    file_text, hits = ctx.store.redact(file_text)
    _check_frontmatter(mp, file_text)
    said = land(
        ctx,
        Event("create", mp, text=file_text),
        lambda: ctx.store.create(mp, file_text),
        lambda: ({mp.text: file_text.encode("utf-8")}, [("create", mp.text, None)]),
    )
    ctx.touch(mp)
    ctx.data = file_state(mp, file_text)
    return f"Created {mp.text} ({len(split_lines(file_text))} lines).{redacted(hits)}{reply(said)}"


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
    notes=(SUPERSEDE,),
    params={
        "path": "The .md file to edit.",
        "old_str": "The exact text to replace; it must be unique.",
        "new_str": "The replacement text (may be empty to delete old_str).",
        PARAM: PARAM_TEXT,
    },
    read_only=False,
    # It rewrites a file in place and may remove text outright (an empty new_str).
    destructive=True,
    title="Replace text in a file",
    extensions=(PARAM,),
    output_schema=outputs.FILE_STATE,
)
def str_replace(
    ctx: ToolContext, path: str, old_str: str, new_str: str, expected_sha256: str | None = None
) -> str:
    expected = parse_expected("str_replace", expected_sha256)
    mp = _md_path(path, "edited")
    text, _ = read_checked(ctx, mp, expected)
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
    new_text, secrets_kept_out = ctx.store.redact(text[:at] + new_str + text[at + len(old_str) :])
    _check_frontmatter(mp, new_text, text)
    said = _rewrite(ctx, mp, text, new_text)
    ctx.data = file_state(mp, new_text)
    first = line_of_offset(new_text, min(at, len(new_text)))
    last = first + new_str.count("\n")
    snippet = _snippet(new_text, first, last) + _after(said) + redacted(secrets_kept_out, True)
    return f"Edited {mp.text} ({where}, line {first}):\n{snippet}"


@tool(
    description="""
        Insert text after line insert_line of a file (0 = at the very start). The valid range is 0 to
        the file's line count; an insert may not land inside the frontmatter, so for a file with
        frontmatter insert_line must be at least the line of its closing '---'.
        """,
    notes=(
        FACT_LINES,
        NEW_VALUE,
    ),
    params={
        "path": "The .md file to edit.",
        "insert_line": "Insert after this line (0 = before the first line).",
        "insert_text": "The text to insert; a final newline is added if missing.",
        PARAM: PARAM_TEXT,
    },
    read_only=False,
    title="Insert lines into a file",
    extensions=(PARAM,),
    output_schema=outputs.FILE_STATE,
)
def insert(
    ctx: ToolContext, path: str, insert_line: int, insert_text: str, expected_sha256: str | None = None
) -> str:
    expected = parse_expected("insert", expected_sha256)
    mp = _md_path(path, "edited")
    text, _ = read_checked(ctx, mp, expected)
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
    insert_text, hits = ctx.store.redact(insert_text)
    block = insert_text if insert_text.endswith("\n") else insert_text + "\n"
    head = "".join(ln + "\n" for ln in lines[:insert_line])
    tail = "".join(ln + "\n" for ln in lines[insert_line:])
    if not text.endswith("\n") and tail:
        tail = tail[:-1]
    new_text, more = ctx.store.redact(head + block + tail)  # a secret its neighbours complete
    hits += more
    _check_frontmatter(mp, new_text, text)
    said = _rewrite(ctx, mp, text, new_text)
    ctx.data = file_state(mp, new_text)
    added = len(split_lines(block))
    return (
        f"Inserted {added} line(s) after line {insert_line} of {mp.text}:\n"
        f"{_snippet(new_text, insert_line + 1, insert_line + added)}{_after(said)}{redacted(hits, True)}"
    )


@tool(
    description="Delete a file, or a folder with everything in it. The root cannot be deleted.",
    notes=(NOT_DELETED,),
    params={"path": "The file or folder to delete.", PARAM: PARAM_TEXT + " Files only."},
    read_only=False,
    destructive=True,
    title="Delete a file or folder",
    idempotent=True,  # a second identical call finds nothing there and changes nothing
    extensions=(PARAM,),
    output_schema=outputs.DELETE,
)
def delete(ctx: ToolContext, path: str, expected_sha256: str | None = None) -> str:
    expected = parse_expected("delete", expected_sha256)
    mp = parse_memory_path(path)
    is_dir = ctx.store.is_dir(mp) if not mp.is_root else True
    if is_dir:
        refuse_for_folder("delete", mp.text, expected)
    elif expected is not None:
        if not ctx.store.exists(mp):
            raise NotFoundError(f"{mp.text} does not exist; nothing was deleted")
        read_checked(ctx, mp, expected)
    gone: list[str] = []

    def target() -> tuple[dict[str, bytes | None], list[tuple[str, str, str | None]]]:
        files = [e.path.text for e in ctx.store.walk(mp) if not e.is_dir] if is_dir else [mp.text]
        return dict.fromkeys(files), [("delete", f, None) for f in files]

    said = land(ctx, Event("delete", mp, is_dir=is_dir), lambda: gone.extend(ctx.store.delete(mp)), target)
    ctx.touch(mp)
    ctx.data = {"path": mp.text, "kind": "directory" if is_dir else "file", "deleted": gone}
    if is_dir:
        return f"Deleted folder {mp.text} and the {len(gone)} file(s) in it.{reply(said)}"
    return f"Deleted {mp.text}.{reply(said)}"


@tool(
    description="""
        Rename or move a file or folder. Missing parent folders are created; the destination must not
        exist. A file keeps its .md extension; a folder cannot become a .md path. After moving a
        file, make its frontmatter name match the new stem.
        """,
    notes=(REFERENCES,),
    params={
        "old_path": "The file or folder to move.",
        "new_path": "Its new path.",
        PARAM: PARAM_TEXT + " Files only.",
    },
    read_only=False,
    # Not destructive: the destination must not exist, so nothing is overwritten, and every byte
    # moved is kept under its new path.
    title="Rename or move a file or folder",
    idempotent=True,  # a second identical call finds old_path gone and changes nothing
    extensions=(PARAM,),
    output_schema=outputs.RENAME,
)
def rename(ctx: ToolContext, old_path: str, new_path: str, expected_sha256: str | None = None) -> str:
    expected = parse_expected("rename", expected_sha256)
    omp = parse_memory_path(old_path)
    nmp = parse_memory_path(new_path)
    st = ctx.store.lstat(omp)  # one walk for both questions (issue 47: per-call cost)
    if st is None:
        raise NotFoundError(f"{omp.text} does not exist; view {omp.parent.text} to find the right name")
    data: bytes | None = None
    digest = ""
    if stat.S_ISDIR(st.st_mode):
        refuse_for_folder("rename", omp.text, expected)
        if nmp.name.endswith(".md"):
            raise PathError(f"{omp.text} is a folder; it cannot become the .md path {nmp.text}")
    elif not (omp.name.endswith(".md") and nmp.name.endswith(".md")):
        raise PathError(f"a file keeps its .md extension; use a new path ending in .md, not {nmp.text}")
    else:
        # Read before moving: a file the store refuses to read (hard-linked, a FIFO, a link) is
        # refused here, with nothing moved, instead of failing after the move.
        data = ctx.store.read_bytes(omp)
        ctx.meter.bytes_read += len(data)
        digest = sha256_hex(data)
        require_current(omp.text, digest, expected)
    refs = references.plan(ctx, omp, nmp)
    said, renamed = _move(ctx, omp, nmp, data, refs)
    ctx.touch(omp)
    ctx.touch(nmp)
    if data is None:
        ctx.data = {"kind": "directory", "old_path": omp.text, "new_path": nmp.text}
        return f"Moved folder {omp.text} to {nmp.text}.{refs.said()}{reply(said)}"
    ctx.data = {"kind": "file", "old_path": omp.text, "new_path": nmp.text, "sha256": digest}
    name = renamed or frontmatter.parse(data.decode("utf-8", "replace")).name
    now = " now" if renamed else ""
    msg = f"Renamed {omp.text} to {nmp.text}. Its frontmatter name is{now} {name!r}"
    if nmp.name != "MEMORY.md" and name != nmp.stem:
        msg += f"; change it to '{nmp.stem}' with str_replace so it matches the file stem."
    else:
        msg += "."
    return msg + refs.said() + reply(said)


def _rewrite(ctx: ToolContext, mp: MemoryPath, text: str, new_text: str) -> list[str]:
    """`mp` rewritten to `new_text`, with its index entry's description kept true."""
    return land(
        ctx,
        Event("modify", mp, text=new_text, old_text=text),
        lambda: ctx.store.write(mp, new_text),
        lambda: ({mp.text: new_text.encode("utf-8")}, [("modify", mp.text, None)]),
    )


def _name_follows(ctx: ToolContext, omp: MemoryPath, nmp: MemoryPath, text: str) -> str | None:
    """With folder index keeping, a moved file whose frontmatter name was its old stem takes the new
    one in the same step, so the store stays valid (`validate`: the name equals the stem); the
    new text, checked as every write is, or None when the name stays."""
    if not keeping(ctx) or omp.stem == nmp.stem:
        return None
    if MEMORY_INDEX in (omp.name, nmp.name) or frontmatter.parse(text).name != omp.stem:
        was = set(frontmatter.validate(text, omp.name))
        errors = [e for e in frontmatter.validate(text, nmp.name) if e not in was]
        if errors:  # e.g. an index (no name) moved to a note's path: the store would be invalid
            raise FrontmatterError(f"{nmp.text}: " + "; ".join(errors) + ". Nothing was moved.")
        return None
    fm_lines = frontmatter.split(text)[1]
    lines = text.split("\n")
    for i in range(1, max(fm_lines - 1, 1)):
        if re.fullmatch(rf"name:\s*['\"]?{re.escape(omp.stem)}['\"]?\s*", lines[i]):
            lines[i] = f"name: {nmp.stem}"
            named = "\n".join(lines)
            _check_frontmatter(nmp, named, text)
            return named
    return None


def redacted(hits: list[SecretHit], own_line: bool = False) -> str:
    """The sentence a reply carries when the write kept secrets out (docs/secrets.md): the model
    is told, so what it reads back is no surprise."""
    if not hits:
        return ""
    lead = "\n" if own_line else " "
    return (
        f"{lead}Redacted {said_secrets(h.kind for h in hits)} before writing: the file holds "
        "[redacted: KIND] in their place; memory never stores secrets."
    )


def _after(said: list[str]) -> str:
    """A reply's index sentence on its own line, after a snippet."""
    return "\n" + reply(said).strip() if said else ""


def _move(
    ctx: ToolContext, omp: MemoryPath, nmp: MemoryPath, data: bytes | None, refs: references.Refs
) -> tuple[list[str], str | None]:
    """`omp` moved to `nmp` (`data`: a file's bytes, None for a folder), indexes and `refs` (the
    references naming it) kept; and the frontmatter name the file took (`_name_follows`), if any."""
    many = bool(refs.texts)  # files beyond the move itself: landed under an intent record
    if data is not None:
        text = data.decode("utf-8", "replace")
        named = _name_follows(ctx, omp, nmp, text)
        event = Event("rename", omp, nmp, text=text)
        own: dict[str, bytes | None] = {omp.text: None, nmp.text: data}
        rows: list[tuple[str, str, str | None]] = [("rename", omp.text, nmp.text)]
        if named is None:
            move = references.around(ctx, refs, lambda: ctx.store.rename(omp, nmp))
            return land(ctx, event, move, lambda: refs.target(own, rows), many=many), None
        own[nmp.text] = named.encode("utf-8")
        rows.append(("modify", nmp.text, None))

        def move_and_name() -> None:
            ctx.store.rename(omp, nmp)
            ctx.store.write(nmp, named)

        named_move = references.around(ctx, refs, move_and_name)
        return land(ctx, event, named_move, lambda: refs.target(own, rows), many=many), nmp.stem
    files = [e.path for e in ctx.store.walk(omp) if not e.is_dir]
    event = Event("rename", omp, nmp, is_dir=True, holds_md=any(f.name.endswith(".md") for f in files))

    def target() -> tuple[dict[str, bytes | None], list[tuple[str, str, str | None]]]:
        out: dict[str, bytes | None] = {}
        moved: list[tuple[str, str, str | None]] = []
        for f in files:
            new = MemoryPath(nmp.parts + f.parts[len(omp.parts) :]).text
            out[f.text], out[new] = None, ctx.store.read_bytes(f)
            moved.append(("rename", f.text, new))
        return refs.target(out, moved)

    move = references.around(ctx, refs, lambda: ctx.store.rename(omp, nmp))
    return land(ctx, event, move, target, many=many), None
