"""The merge of three states of a store's files, fact by fact (docs/sync.md): the base both
sides last agreed on, this store's files (ours) and the remote's (theirs), each {memory path:
blob id}, into the files both sides will hold.

Per path: a path only one side changed takes that side (a removal on the remote only when its
history is `trusted`: it descends from the base, so it was not force-pushed over this store's
past); a file one side removed and the other edited stays, edited; a file both sides edited is
merged line by line (`lines.py`), then its keys put on one timeline (`keyed.py`). Then every
fact this store held is checked for in the result (`keep.py`) and, when both sides changed
files, the folder indexes are regenerated from the merged ones (`indexes.py`). Each step leaves
a file alone that it has no reason to change, and a merge of files that already hold the
other side's changes changes nothing, so a sync stopped after landing merges to the same files the next time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memdir.conventions import fact_identity
from memdir.sync.indexes import is_index, regenerate
from memdir.sync.keep import keep
from memdir.sync.keyed import settle
from memdir.sync.lines import merge_lines
from memdir.sync.remote import SyncRepo


@dataclass
class Merged:
    """The merged files ({memory path: blob id}, every blob in the sync repository) and what
    the merge had to decide: fact lines kept, files with both versions of a line, keys whose
    values both sides changed."""

    files: dict[str, str]
    kept: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)


def _text(repo: SyncRepo, blob: str | None) -> str | None:
    if blob is None:
        return ""
    try:
        return repo.blob(blob).decode("utf-8")
    except UnicodeDecodeError:
        return None


def merge(
    repo: SyncRepo,
    root: Path,
    base: dict[str, str],
    ours: dict[str, str],
    theirs: dict[str, str],
    *,
    trusted: bool,
) -> Merged:
    out = Merged({})
    for path in sorted(base.keys() | ours.keys() | theirs.keys()):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        if o == t or t == b:
            chosen = o
        elif o == b:
            chosen = t if t is not None or trusted or o is None else _untrusted(repo, path, o, out)
        elif o is None or t is None or is_index(path):
            chosen = t if o is None else o  # an edit outlives a removal; an index is regenerated
        else:
            chosen = _lines(repo, path, b, o, t, out)
        if chosen is not None:
            out.files[path] = chosen
    _keep(repo, ours, out)
    # only a merge of two sides' changes needs new indexes: one side's are right for its files
    regenerate(root, ours, out.files, repo.blob, repo.put_blob, both=ours != base and theirs != base)
    return out


def _untrusted(repo: SyncRepo, path: str, o: str, out: Merged) -> str:
    """A file a rewritten remote history lacks stays, and its facts are reported kept."""
    text = _text(repo, o) or ""
    out.kept += [f"{path}: {line.strip()}" for line in text.split("\n") if fact_identity(line)]
    return o


def _lines(repo: SyncRepo, path: str, b: str | None, o: str, t: str, out: Merged) -> str:
    """`path` merged line by line; this store's bytes when one side is not UTF-8 text."""
    texts = [_text(repo, b), _text(repo, o), _text(repo, t)]
    if any(x is None for x in texts):
        return o
    zb, zo, zt = (x.split("\n") for x in texts if x is not None)
    merged = merge_lines(zb, zo, zt)
    lines, keys = settle(merged.lines)
    if merged.conflicts:
        out.conflicts.append(path)
    out.superseded += [f"{path}: {k}" for k in keys]
    return repo.put_blob("\n".join(lines).encode("utf-8"))


def _keep(repo: SyncRepo, ours: dict[str, str], out: Merged) -> None:
    """Put back the facts of this store the merge would drop (`keep.py`)."""
    changed = {p for p, sha in ours.items() if out.files.get(p) != sha and not is_index(p)}
    mine = {p: x for p in changed if (x := _text(repo, ours[p])) is not None}
    now = {p: x for p in changed if p in out.files and (x := _text(repo, out.files[p])) is not None}
    before = dict(now)

    def unchanged() -> dict[str, str]:
        return {
            p: x for p, sha in out.files.items() if p not in changed and (x := _text(repo, sha)) is not None
        }

    out.kept = sorted([*out.kept, *keep(mine, now, unchanged)])
    for path, text in now.items():
        if before.get(path) != text:
            # a kept live value beside the remote's new one: the later stays live (`keyed.py`)
            lines, keys = settle(text.split("\n"))
            out.superseded += [f"{path}: {k}" for k in keys]
            out.files[path] = repo.put_blob("\n".join(lines).encode("utf-8"))
