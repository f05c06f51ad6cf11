"""A journal whose head cannot be read, put back in working order.

Power loss can leave the journal's ref naming a commit whose object never reached the disk, a
ref or HEAD file that is empty or holds garbage (a new file's bytes not yet written), or
snapshot objects gone. Objects are fsynced before the ref moves (`tree.py`), so a step
can no longer publish a commit the disk does not hold, but a journal damaged before, or by
hand, must still not stop the store: `repair`, run by whoever next lands the step log
(`catch_up.catch_up`, under the journal lock), finds the newest commit whose objects and
first-parent history are whole, points the ref at it (or, with none, lets the next commit be a
new root), and leaves a note. The next writer (`observer.py`) commits the files as they
are then as a `recovered` step whose message carries the note, warns once with it, and drops
it, so the damage is reported once, and in the history itself (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pygit2

from memdir.store.atomic import write_atomic
from memdir.store.journal.log import HEADER, RECORDS
from memdir.store.safefs import private_dirs

NOTE = "memdir-damage"  # what the last repair found and did, until a writer commits it
DEFAULT_BRANCH = "refs/heads/master"


def damage(repo: pygit2.Repository) -> str | None:
    """What is wrong with HEAD, or None when it names a commit whose snapshot can be read (or
    no commit yet)."""
    try:
        if repo.head_is_unborn:
            return None
        oid = repo.head.target
    except pygit2.GitError as exc:
        return f"its head cannot be read ({exc})"
    if not isinstance(oid, pygit2.Oid):
        return f"its head names {oid!r}, not a commit"
    commit = repo.get(oid)
    if not isinstance(commit, pygit2.Commit):
        return f"its head names commit {oid}, which is missing from its objects"
    if not isinstance(repo.get(commit.tree_id), pygit2.Tree):
        return f"the snapshot of its head commit {oid} (tree {commit.tree_id}) is missing"
    return None


def repair(repo: pygit2.Repository, git_dir: Path) -> str | None:
    """Put a damaged head back on the newest whole commit (the journal lock held); the note
    saying what was wrong and what was done, or None when nothing was."""
    what = damage(repo)
    if what is None:
        return None
    branch = _branch(git_dir)
    tip = newest_whole(repo)
    ref = git_dir / branch
    private_dirs(ref.parent)
    if tip is None:
        with contextlib.suppress(FileNotFoundError):
            ref.unlink()
        done = "no whole commit was left, so its history starts again with a new root commit"
    else:
        write_atomic(ref, f"{tip.id}\n".encode())
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(tip.commit_time))
        done = f"its head was reset to {tip.id} ({when} UTC), the newest whole commit"
        last = last_committed(git_dir)
        if last == str(tip.id):
            done += ", the last step landed: no step was lost"
        else:
            done += "; the steps made after it are lost from the history"
    if _head_text(git_dir) != f"ref: {branch}":
        write_atomic(git_dir / "HEAD", f"ref: {branch}\n".encode())
    note = f"the journal was damaged: {what}; {done}; the files as they are now are in a recovered step"
    write_atomic(git_dir / NOTE, note.encode())
    return note


def last_committed(git_dir: Path) -> str | None:
    """The commit the step log's header names as the last one committed, if any."""
    try:
        with open(git_dir / RECORDS, "rb") as fh:
            head = fh.read(HEADER.size)
    except OSError:
        return None
    if len(head) < HEADER.size:
        return None
    landing: bytes = HEADER.unpack(head)[2]
    return landing.hex() if any(landing) else None


def take_note(git_dir: Path) -> str | None:
    """The note a repair left, if any (the caller commits it, then calls `drop_note`)."""
    try:
        return (git_dir / NOTE).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None


def drop_note(git_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(git_dir / NOTE)


def newest_whole(repo: pygit2.Repository) -> pygit2.Commit | None:
    """The newest commit whose snapshot and first-parent history can all be read: among the
    commits no other commit names as its parent, newest first, the first whole one."""
    commits: list[pygit2.Commit] = []
    for oid in repo.odb:
        with contextlib.suppress(pygit2.GitError, ValueError):
            obj = repo.get(oid)
            if isinstance(obj, pygit2.Commit):
                commits.append(obj)
    parents = {p for c in commits for p in c.parent_ids}
    tips = sorted(
        (c for c in commits if c.id not in parents), key=lambda c: (c.commit_time, str(c.id)), reverse=True
    )
    good: set[pygit2.Oid] = set()
    for tip in [*tips, *sorted(commits, key=lambda c: c.commit_time, reverse=True)]:
        if _whole(repo, tip, good):
            return tip
    return None


def _whole(repo: pygit2.Repository, commit: pygit2.Commit, good: set[pygit2.Oid]) -> bool:
    """Can `commit`'s snapshot and every first parent's be read? `good` holds the commits
    known to be whole, so each history is walked once."""
    seen: list[pygit2.Oid] = []
    c: pygit2.Commit | None = commit
    ok = False
    while c is not None:
        if c.id in good:
            ok = True
            break
        if not isinstance(repo.get(c.tree_id), pygit2.Tree):
            break
        seen.append(c.id)
        if not c.parent_ids:
            ok = True
            break
        parent = repo.get(c.parent_ids[0])
        c = parent if isinstance(parent, pygit2.Commit) else None
    if ok:
        good.update(seen)
    return ok


def _head_text(git_dir: Path) -> str:
    try:
        return (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _branch(git_dir: Path) -> str:
    """The branch HEAD names, or the one branch there is, or git's default."""
    text = _head_text(git_dir)
    if text.startswith("ref: refs/heads/") and "\n" not in text and ".." not in text:
        return text.removeprefix("ref: ")
    heads = git_dir / "refs" / "heads"
    names = sorted(p.name for p in heads.iterdir() if p.is_file()) if heads.is_dir() else []
    return f"refs/heads/{names[0]}" if len(names) == 1 else DEFAULT_BRANCH
