"""The merge of three states of a store's files: the base both sides last agreed on, this
store's files (ours) and the remote's (theirs), each {memory path: blob id}.

A path only one side changed takes that side's bytes."""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.sync.remote import SyncError, SyncRepo


@dataclass
class Merged:
    """The merged files ({memory path: blob id}, every blob in the sync repository) and what
    the merge had to decide: fact lines kept, files with both versions of a line, keys whose
    values both sides changed."""

    files: dict[str, str]
    kept: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)


def merge(
    repo: SyncRepo, base: dict[str, str], ours: dict[str, str], theirs: dict[str, str], *, trusted: bool
) -> Merged:
    out: dict[str, str] = {}
    for path in sorted(base.keys() | ours.keys() | theirs.keys()):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        if o == t or t == b:
            chosen = o
        elif o == b:
            chosen = t
        else:
            raise SyncError(f"both sides changed {path}")
        if chosen is not None:
            out[path] = chosen
    return Merged(out)
