"""Sharding a folder over the fanout cap (docs/study.md, design rule 2): the offline curator's
mend of a `fanout` finding.

The folder's files move into subfolders by a rule a reader can follow from the names alone, the
curator's own filing categories first: a day file (`2023-05-01.md`) by its year, or inside a year
folder by its month, as the curator itself sends days a level down; an undated `session-N.md` by
the curator's bucket of 25 sessions; any other file by the first word of its name. A group too
big for one subfolder goes by the finer category (the month; the first two words), then in runs
of names. A file alone in its category stays. When that leaves the folder over the cap, every
file goes in runs of names instead. Its subfolders are kept as they are: the curator files into
them by name, and moving them would cut that path.

Each new subfolder gets a `MEMORY.md` listing its files (the folder index's own lines for them,
moved), the folder's index names the subfolders instead, and every `see` reference to a moved
file is pointed at its new path, in whichever file holds it (docs/conventions.md,
Cross-references).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from memdir.agents.offline.edits import Edits
from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.retarget import retarget_line

ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
SESSION = re.compile(r"session-(\d+)")
SESSIONS_PER_BUCKET = 25  # the curator's buckets of undated days (curator.day_of)
NAME_CHARS = 30  # of each end of a run's name, `first-to-last`
Taken = dict[str, frozenset[str] | None]
"""A folder's entries: a subfolder's name -> the names in it; a file's name -> None."""


def category(stem: str, folder: str) -> tuple[str, str | None]:
    """(the subfolder a file of this stem goes to, a finer one for when that one is too full)."""
    if ISO_DAY.fullmatch(stem):
        return (stem[:7], None) if folder == stem[:4] else (stem[:4], stem[:7])
    m = SESSION.fullmatch(stem)
    if m:
        lo = (int(m.group(1)) - 1) // SESSIONS_PER_BUCKET * SESSIONS_PER_BUCKET + 1
        return f"sessions-{lo}-{lo + SESSIONS_PER_BUCKET - 1}", None
    words = [w for w in re.split(r"[^a-z0-9]+", stem.lower()) if w]
    if not words:
        return "other", None
    return words[0], "-".join(words[:2]) if len(words) > 1 else None


def _stem(name: str) -> str:
    return name.removesuffix(".md")


def _runs(names: list[str], room: int, key: str | None) -> dict[str, list[str]]:
    """`names` cut into runs of at most `room`: `key-1`, `key-2`, ... or, with no key, each run
    named by its first and last names."""
    out: dict[str, list[str]] = {}
    for i in range(0, len(names), room):
        part = names[i : i + room]
        ends = [re.sub(r"[^a-z0-9]+", "-", _stem(n).lower()).strip("-")[:NAME_CHARS] for n in part]
        span = ends[0] if ends[0] == ends[-1] else f"{ends[0]}-to-{ends[-1]}"
        out[f"{key}-{i // room + 1}" if key else span] = part
    return out


def _groups(names: list[str], folder: str, room: int) -> dict[str, list[str]]:
    """The category groups of two or more files, each at most `room`."""
    coarse: dict[str, list[str]] = defaultdict(list)
    for n in names:
        coarse[category(_stem(n), folder)[0]].append(n)
    out: dict[str, list[str]] = {}
    for key, members in coarse.items():
        fine: dict[str, list[str]] = defaultdict(list)
        for n in members:
            fine[(category(_stem(n), folder)[1] if len(members) > room else None) or key].append(n)
        for sub, part in fine.items():
            if len(part) > room:
                out.update(_runs(part, room, sub))
            elif len(part) > 1:
                out[sub] = part
    return out


def _fits(have: frozenset[str] | None, names: list[str], cap: int) -> bool:
    """Whether `names` may join an existing subfolder: a folder, no name clash, under the cap."""
    return have is not None and not have & set(names) and len(have | {MEMORY_INDEX}) + len(names) <= cap


def _place(groups: dict[str, list[str]], taken: Taken, cap: int) -> dict[str, list[str]]:
    """Each group's subfolder: its own name when free or when it fits the existing folder of
    that name, else the name with `-2`, `-3`, ..."""
    out: dict[str, list[str]] = {}
    for key in sorted(groups):
        sub, n = key, 1
        while sub in out or (sub in taken and not _fits(taken[sub], groups[key], cap)):
            n += 1
            sub = f"{key}-{n}"
        out[sub] = groups[key]
    return out


def plan(names: list[str], folder: str, cap: int, taken: Taken) -> dict[str, list[str]] | None:
    """subfolder -> the files of `names` (the folder's movable files) moved into it, bringing
    the folder (whose entries are `taken`) to at most `cap` entries; None when no plan does."""
    room = cap - 1  # a new subfolder holds its MEMORY.md too
    if room < 1:
        return None
    for groups in (_groups(names, folder, room), _runs(sorted(names), room, None)):
        chosen = _place(groups, taken, cap)
        moved = sum(len(v) for v in chosen.values())
        if len(taken) - moved + sum(1 for s in chosen if s not in taken) <= cap:
            return chosen
    return None


@dataclass
class Shard:
    """What a shard did: old path -> new path of each moved file; references pointed anew."""

    moved: dict[str, str] = field(default_factory=dict)
    refs: int = 0
    error: str | None = None
    note: str = ""


def shard_folder(ed: Edits, folder: str, cap: int) -> Shard:
    """Shard `folder` under `cap` entries (the rule above). A refused call stops the moves; the
    index and the references are still brought in line with what did move."""
    rows = ed.listing(folder)
    if rows is None:
        return Shard(error=f"could not list {folder} whole")
    inside: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        parent, _, name = str(r["path"]).rpartition("/")
        inside[parent].add(name)
    direct = [r for r in rows if str(r["path"]).rpartition("/")[0] == folder]
    taken: Taken = {}
    for r in direct:
        name = str(r["path"]).rpartition("/")[2]
        taken[name] = frozenset(inside[str(r["path"])]) if r["kind"] == "directory" else None
    names = sorted(n for n, v in taken.items() if v is None and n.endswith(".md") and n != MEMORY_INDEX)
    chosen = plan(names, folder.rpartition("/")[2], cap, taken)
    if chosen is None:
        dirs = sum(1 for v in taken.values() if v is not None)
        return Shard(
            error=f"moving its {len(names)} file(s) leaves it over {cap}: {dirs} entries are folders"
        )
    described = {str(r["path"]).rpartition("/")[2]: str(r.get("description") or "") for r in direct}
    index = ed.lines(f"{folder}/{MEMORY_INDEX}")
    entries = _entry_lines(index or [], names)
    out = Shard()
    done: dict[str, list[str]] = {}  # subfolder -> the files that did move into it
    for sub, members in chosen.items():
        listed = [
            line
            for n in members
            for line in ([index[i] for i in entries[n]] if index and n in entries else [_entry(n, described)])
        ]
        out.error = _sub_index(ed, f"{folder}/{sub}", _title(index, folder), members, listed, taken)
        for n in members:
            old, new = f"{folder}/{n}", f"{folder}/{sub}/{n}"
            out.error = out.error or ed.call("rename", old_path=old, new_path=new)
            if out.error:
                break
            out.moved[old] = new
            done.setdefault(sub, []).append(n)
        if out.error:
            break
    if index is not None and done:
        out.error = _folder_index(ed, folder, index, entries, done) or out.error
    out.refs, err = retarget(ed, folder, out.moved)
    out.error = out.error or err
    subs = ", ".join(f"{s}/" for s in done)
    out.note = f"moved {len(out.moved)} file(s) into {subs}; {out.refs} reference line(s) pointed anew"
    return out


def _entry_lines(index: list[str], names: list[str]) -> dict[str, list[int]]:
    """The folder index's lines that list each of `names` (`- NAME: ...`, a link, or its path)."""
    out: dict[str, list[int]] = {}
    for n in names:
        rx = re.compile(rf"^\s*[-*+]\s+[\[`]*(?:/memories\S*/)?{re.escape(n)}(?![\w.-])")
        out[n] = [i for i, ln in enumerate(index) if rx.match(ln)]
    return {n: v for n, v in out.items() if v}


def _entry(name: str, described: dict[str, str]) -> str:
    desc = described.get(name, "")
    return f"- {name}: {desc}" if desc else f"- {name}"


def _span(members: list[str]) -> str:
    first, last = _stem(members[0]), _stem(members[-1])
    return f"{len(members)} file(s), {first} to {last}" if len(members) > 1 else f"1 file, {first}"


def _title(index: list[str] | None, folder: str) -> str:
    """What the folder's index calls it (its first heading), else its name."""
    return next((ln[2:].strip() for ln in index or [] if ln.startswith("# ")), folder.rpartition("/")[2])


def _sub_index(
    ed: Edits, sub: str, title: str, members: list[str], listed: list[str], taken: Taken
) -> str | None:
    """The subfolder's MEMORY.md: made with the moved files' lines, or those lines added to it."""
    path = f"{sub}/{MEMORY_INDEX}"
    name = sub.rpartition("/")[2]
    have = taken.get(name)
    if have is not None and MEMORY_INDEX in have:
        lines = ed.lines(path)
        if lines is None:
            return f"could not read {path}"
        return ed.call("insert", path=path, insert_line=len(lines), insert_text="\n".join(listed))
    text = (
        f"---\ndescription: {title}, {name}: {_span(members)}, moved here when the folder above passed "
        f"the fanout cap\n---\n# {title}, {name}\n\n" + "\n".join(listed) + "\n"
    )
    return ed.call("create", path=path, file_text=text)


def _folder_index(
    ed: Edits,
    folder: str,
    index: list[str],
    entries: dict[str, list[int]],
    chosen: dict[str, list[str]],
) -> str | None:
    """The folder's MEMORY.md: the moved files' lines give way to one line per new subfolder."""
    moved = [n for members in chosen.values() for n in members]
    changes: dict[int, list[str]] = {i: [] for n in moved for i in entries.get(n, [])}
    added = [
        f"- {sub}/: {_span(members)}"
        for sub, members in chosen.items()
        if not any(re.match(rf"^\s*[-*+]\s+[\[`]*{re.escape(sub)}/", ln) for ln in index)
    ]
    path = f"{folder}/{MEMORY_INDEX}"
    if changes:
        changes[min(changes)] = added
        return ed.rewrite(path, index, changes)
    if added:
        return ed.call("insert", path=path, insert_line=len(index), insert_text="\n".join(added))
    return None


MAX_GREPS = 5  # rounds of grep when one stops short at its result cap
_REGEX_SPECIAL = re.compile(r"([\\.^$|?*+()\[\]{}])")


def retarget(ed: Edits, folder: str, moved: dict[str, str]) -> tuple[int, str | None]:
    """Point every `see` reference to a moved file at its new path, in every file that has one.
    Returns (lines rewritten, the first error)."""
    if not moved:
        return 0, None
    pattern = r"[Ss]ee\s+" + _REGEX_SPECIAL.sub(r"\\\1", folder) + r"/[^/\s]+\.md"
    done: set[str] = set()
    rewritten = 0
    for _ in range(MAX_GREPS):
        matches, truncated = ed.grep(pattern)
        paths = sorted({str(m["path"]) for m in matches} - done)
        for path in paths:
            done.add(path)
            lines = ed.lines(path)
            if lines is None:
                continue
            changes = {i: [new] for i, ln in enumerate(lines) if (new := retarget_line(ln, moved)) != ln}
            err = ed.rewrite(path, lines, changes)
            if err is not None:
                return rewritten, err
            rewritten += len(changes)
        if not truncated or not paths:
            break
    return rewritten, None
