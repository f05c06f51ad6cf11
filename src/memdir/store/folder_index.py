"""A folder's `MEMORY.md` as memdir writes it: the one definition of a folder
index's text and lines.

The Agent Memory convention (docs/study.md, The store) asks a `MEMORY.md` in every memory
directory and lets it index the folder's files and child folders. memdir writes one in the same
shape wherever it makes one (`memdir adopt`, the harness's folder index keeping): frontmatter
with a description, a heading, then one list line per file (`- [name.md](name.md): its description`)
and per memory folder (`- [sub/](sub/MEMORY.md): folder`). Reading is lenient: an index line
written by a model or a person (`- alice.md: ...`, `- Alice: see /memories/people/alice.md`)
counts as an entry of the path it names, relative to the index's folder or in full.
"""

from __future__ import annotations

import re

import yaml

from memdir.store.frontmatter import MEMORY_INDEX, body
from memdir.store.paths import MemoryPath

_ITEM = re.compile(r"^\s*[-*+]\s+")  # a list item: what an index entry is
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
FOLDER = "folder"  # the description of a folder's entry


def entry(name: str, description: str | None) -> str:
    """A file's index line: a link to it and its description."""
    return f"- [{name}]({name}): {description}" if description else f"- [{name}]({name})"


def folder_entry(name: str) -> str:
    """A child memory folder's index line: a link to its own index."""
    return f"- [{name}/]({name}/{MEMORY_INDEX}): {FOLDER}"


def render(
    folder: MemoryPath, files: list[tuple[str, str | None]], folders: list[str], *, what: str = ""
) -> str:
    """The index of `folder`: its files (name, description) then its memory folders, each sorted."""
    title = "Memory" if folder.is_root else folder.name
    about = what or f"Index of {folder.text}: its files and folders"
    lines = [entry(n, d) for n, d in sorted(files)] + [folder_entry(k) for k in sorted(folders)]
    head = "---\n" + yaml.safe_dump({"description": about}, allow_unicode=True, width=10_000) + "---\n"
    return f"{head}# {title}\n\n" + "\n".join(lines) + "\n"


def _mention(target: MemoryPath, at: MemoryPath) -> re.Pattern[str]:
    """`target` named in the index of folder `at`: in full, or relative to `at` (what follows
    the name may be a section, a link's close or a folder's slash, never more of a name)."""
    rel = "/".join(target.parts[len(at.parts) :])
    full = re.escape(target.text)
    return re.compile(rf"(?:{full}|(?<![\w./-]){re.escape(rel)})(?![\w.-])")


def is_entry(line: str, target: MemoryPath, at: MemoryPath) -> bool:
    """Whether `line` of the index of `at` is a list item naming `target` (a path inside `at`)."""
    return bool(_ITEM.match(line)) and _mention(target, at).search(line) is not None


def retarget(line: str, old: MemoryPath, old_at: MemoryPath, new: MemoryPath, new_at: MemoryPath) -> str:
    """`line` of the index of `old_at` made a line of the index of `new_at`: each mention of
    `old` becomes one of `new`, in the same form (in full, or relative to its index's folder)."""
    rel = "/".join(new.parts[len(new_at.parts) :])
    return _mention(old, old_at).sub(lambda m: new.text if m.group(0) == old.text else rel, line)


def is_trivial(text: str) -> bool:
    """An index holding nothing but what memdir writes around entries (frontmatter, headings,
    blank lines): once its last entry goes, nothing a person wrote is lost with it."""
    return all(not ln.strip() or _HEADING.match(ln) for ln in body(text).split("\n"))
