"""The journal: one git commit per writing tool call, so a store's whole history can be replayed.

It lives in `<root>/.memdir/journal.git` with the memory root as its work tree; hidden names
(`.memdir` itself included) are excluded, so the journal holds exactly what agents can see, and
agents never see the journal. Like the index it is derived: the files are the truth.

We drive the git CLI (about 12 ms per commit here; dulwich and GitPython were slower) with a
clean environment, so a user's git config, hooks or `GIT_*` variables cannot change what is
recorded. Each commit message names the tool and carries trailers:

    Memdir-Tool: str_replace
    Memdir-Role: manage          (step meta `role`, when given)
    Memdir-Chunk: 12             (step meta `chunk`, when given)
    Memdir-Task: 7               (step meta `task`, when given)
    Memdir-Meta-<key>: value     (any other scalar meta the caller passed)
    Memdir-Change: modify<TAB>/memories/people/alice.md
    Memdir-Change: rename<TAB>/memories/a.md<TAB>/memories/b.md
    Memdir-Skipped: /memories/x.md<TAB>this file has 2 hard links; ...   (not journaled, and why)

The first step on a store without a journal first commits the store as it is (tool
`baseline`, step 0), so every later step is a true difference. A step stages only the paths it
changed, except the first step of a process, every 100th step and the step after a failed
commit, which stage the whole tree: an edit made outside the tools (by hand, not through the
shell tool, which reports its changes) is folded into such a step rather than into every one.

The journal never reads through a link: it stages only plain files (regular, one link) that a
bounded, link-safe walk of the store finds (`SafeRoot.scan`); a file hard-linked from outside
(another tenant's, say), a symlink, a FIFO, a folder below MAX_DEPTH levels or a name that is
not UTF-8 is left out of the commit and named in a `Memdir-Skipped` trailer. (git then reads
the files it is given by path; a link made in the instant between the walk and git's read is
the one window left.)
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import stat
import subprocess
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.errors import MemdirError
from memdir.store.paths import STATE_DIR
from memdir.store.safefs import Found, SafeRoot, Unread, printable, unread

if TYPE_CHECKING:
    from memdir.store.store import Step, Store

JOURNAL_DIR = "journal.git"
BASELINE = "baseline"
META_KEYS = ("role", "chunk", "task")
GC_EVERY = 256
FULL_EVERY = 100  # steps between whole-tree stagings (they catch edits made outside the tools)
MEMORY_PREFIX = "/memories/"
_IDENTITY = {"name": "memdir", "email": "memdir@localhost"}


@dataclass(frozen=True)
class FileChange:
    kind: str
    path: str
    new_path: str | None = None


@dataclass
class JournalStep:
    """One commit of the journal: step 0 is the baseline, then one per writing tool call."""

    index: int
    commit: str
    time: int
    tool: str
    meta: dict[str, str] = field(default_factory=dict)
    changes: list[FileChange] = field(default_factory=list)
    raw: list[tuple[str, str, str]] = field(default_factory=list)  # (status, blob sha, path parts)
    skipped: list[Unread] = field(default_factory=list)  # entries left out of the commit, and why

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.index,
            "commit": self.commit,
            "time": self.time,
            "tool": self.tool,
            **{k: v for k, v in self.meta.items()},
            "changes": [[c.kind, c.path, *([c.new_path] if c.new_path else [])] for c in self.changes],
            **({"skipped": [[u.path, u.reason] for u in self.skipped]} if self.skipped else {}),
        }


def _clean_env(git_dir: Path, work_tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME=_IDENTITY["name"],
        GIT_AUTHOR_EMAIL=_IDENTITY["email"],
        GIT_COMMITTER_NAME=_IDENTITY["name"],
        GIT_COMMITTER_EMAIL=_IDENTITY["email"],
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


def message(step: Step, skipped: list[Unread] | None = None) -> str:
    """The commit message of a step: a subject line, then trailers (see the module docstring)."""
    n = len(step.changes)
    lines = [f"{step.tool}: {n} change{'s' if n != 1 else ''}", "", f"Memdir-Tool: {_one_line(step.tool)}"]
    for key in META_KEYS:
        if key in step.meta:
            lines.append(f"Memdir-{key.capitalize()}: {_one_line(step.meta[key])}")
    for key, value in sorted(step.meta.items()):
        if key not in META_KEYS and isinstance(value, str | int | float | bool):
            lines.append(f"Memdir-Meta-{_one_line(key).replace(' ', '-')}: {_one_line(value)}")
    for c in step.changes:
        lines.append("Memdir-Change: " + "\t".join([c.kind, c.path, *([c.new_path] if c.new_path else [])]))
    lines.extend(_skipped_lines(skipped or []))
    return "\n".join(lines) + "\n"


def _skipped_lines(skipped: list[Unread]) -> list[str]:
    return [f"Memdir-Skipped: {_one_line(u.path)}\t{_one_line(u.reason)}" for u in skipped]


def parse_message(index: int, commit: str, time: int, body: str) -> JournalStep:
    step = JournalStep(index, commit, time, "?")
    for line in body.split("\n"):
        key, sep, value = line.partition(": ")
        if not sep or not key.startswith("Memdir-"):
            continue
        name = key.removeprefix("Memdir-")
        if name == "Tool":
            step.tool = value
        elif name == "Change":
            kind, path, *rest = value.split("\t")
            step.changes.append(FileChange(kind, path, rest[0] if rest else None))
        elif name == "Skipped":
            path, _, reason = value.partition("\t")
            step.skipped.append(Unread(path, reason))
        elif name.startswith("Meta-"):
            step.meta[name.removeprefix("Meta-")] = value
        else:
            step.meta[name.lower()] = value
    return step


class Journal:
    """The git history of one memory root."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.git_dir = self.root / STATE_DIR / JOURNAL_DIR

    @property
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def git(self, *args: str, stdin: str | None = None) -> str:
        data = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
        return self._git(args, data).decode("utf-8", "replace")

    def _git(self, args: tuple[str, ...], stdin: bytes | None) -> bytes:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=false", "-c", "safe.directory=*", *args],
            input=stdin,
            capture_output=True,
            env=_clean_env(self.git_dir, self.root),
            cwd=self.root,
            check=False,
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise MemdirError(f"journal: git {args[0]} failed: {err}")
        return proc.stdout

    def ensure(self) -> None:
        """Create the journal and commit the store as it is now as step 0 (the baseline)."""
        if self.exists:
            return
        self.git_dir.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q")
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_text(".*\n", encoding="utf-8")
        skipped = self._stage_all()
        baseline = f"{BASELINE}: the store before its first journaled step\n\nMemdir-Tool: {BASELINE}\n"
        baseline += "".join(line + "\n" for line in _skipped_lines(skipped))
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-F", "-", stdin=baseline)

    def _stage_all(self) -> list[Unread]:
        """Stage the whole tree: exactly the plain files a bounded, link-safe walk finds; every
        other tracked path leaves the index. Returns what was left out, and why."""
        keep: list[str] = []
        skipped: list[Unread] = []
        for f in SafeRoot(self.root).scan((), "/memories"):
            if f.kind == "file" and f.nlink == 1:
                keep.append("/".join(f.parts))
            elif f.kind != "dir":
                skipped.append(_why_skipped(f))
        tracked = {p for p in self._git(("ls-files", "-z"), None).split(b"\0") if p}
        wanted = {os.fsencode(p) for p in keep}
        self._update_index(["--force-remove"], sorted(tracked - wanted))
        # Unchanged files are not read again: update-index compares each file's stat data first.
        self._update_index(["--add", "--remove"], sorted(wanted))
        return skipped

    def _stage_changed(self, step: Step) -> list[Unread]:
        """Stage only the paths `step` changed: a plain file is added, a gone one removed, and
        anything else (made a link or a FIFO meanwhile) removed from the index and reported."""
        safe = SafeRoot(self.root)
        rel = sorted({p.removeprefix(MEMORY_PREFIX) for c in step.changes for p in (c.path, c.new_path) if p})
        add: list[bytes] = []
        drop: list[bytes] = []
        skipped: list[Unread] = []
        for r in rel:
            parts = tuple(r.split("/"))
            try:
                st = safe.lstat(parts, MEMORY_PREFIX + r)
            except MemdirError:  # a parent is a link or a file now
                drop.append(os.fsencode(r))
                skipped.append(Unread(printable(parts), "leads through a link or a file; not journaled"))
                continue
            if st is None or (stat.S_ISREG(st.st_mode) and st.st_nlink == 1):
                add.append(os.fsencode(r))  # a gone path: update-index --remove drops it
            elif stat.S_ISDIR(st.st_mode):
                continue
            else:
                drop.append(os.fsencode(r))
                skipped.append(_why_skipped(_found(parts, st)))
        self._update_index(["--force-remove"], drop)
        # update-index, not `add`: a path the journal never saw and that is gone again
        # (written by hand, then deleted by a tool) is skipped instead of failing the step.
        self._update_index(["--add", "--remove"], add)
        return skipped

    def _update_index(self, flags: list[str], paths: list[bytes]) -> None:
        if paths:
            self._git(("update-index", *flags, "-z", "--stdin"), b"\0".join(paths))

    def record(self, step: Step, *, full: bool = True) -> None:
        """Commit `step`. `full` stages the whole tree (folding in edits made outside the tools);
        otherwise only the paths the step changed are staged, which keeps a step's cost
        independent of the store's size (a whole-tree `git add` took ~0.6 s at 50,000 files)."""
        self.ensure()
        skipped = self._stage_all() if full else self._stage_changed(step)
        # Plumbing instead of `git commit`: commit refreshes the stat data of every tracked file
        # (86 ms at 50,000 files here) and runs a housekeeping child; write-tree uses the index
        # as staged (32 ms for the three calls). The housekeeping check runs on about one step
        # in GC_EVERY instead.
        tree = self.git("write-tree").strip()
        commit = self.git("commit-tree", tree, "-p", "HEAD", "-F", "-", stdin=message(step, skipped)).strip()
        self.git("update-ref", "HEAD", commit)
        if random.random() < 1 / GC_EVERY:
            self.git("gc", "--auto", "--quiet")

    def head(self) -> str | None:
        """The commit of the newest step: the id of the store's snapshot as it is now."""
        if not self.exists:
            return None
        try:
            return self.git("rev-parse", "--verify", "-q", "HEAD").strip() or None
        except MemdirError:
            return None

    def steps(self, *, raw: bool = False) -> list[JournalStep]:
        """Every step, oldest first; with `raw`, each step's file blobs changed (for replay)."""
        if not self.exists:
            return []
        args = ["log", "--reverse", "--first-parent", "--format=%x1e%H%x00%ct%x00%B%x00", "-z"]
        if raw:
            args += ["--raw", "--no-renames", "--no-abbrev", "-r", "--root"]
        try:
            out = self.git(*args)
        except MemdirError:
            return []  # a journal with no commit yet
        steps: list[JournalStep] = []
        for record in out.split("\x1e")[1:]:
            items = record.split("\x00")
            step = parse_message(len(steps), items[0], int(items[1]), items[2])
            rest = [it.lstrip("\n") for it in items[3:]]
            rest = [it for it in rest if it]
            for meta, path in zip(rest[0::2], rest[1::2], strict=False):
                fields = meta.split()
                step.raw.append((fields[4], fields[3], path))
            steps.append(step)
        return steps

    def files_at(self, commit: str) -> dict[str, str]:
        """{path relative to the root: blob sha} of every file in the snapshot `commit` names."""
        out = self._git(("ls-tree", "-r", "-z", "--full-tree", commit), None)
        files: dict[str, str] = {}
        for entry in out.split(b"\x00"):
            if not entry:
                continue
            head, _, path = entry.partition(b"\t")
            mode, kind, sha = head.split()
            if kind == b"blob" and mode != b"120000":  # links are never followed, so never replayed
                files[path.decode("utf-8", "surrogateescape")] = sha.decode()
        return files

    def blobs(self, shas: list[str]) -> Iterator[tuple[str, bytes]]:
        """(sha, content) for each blob, through one `git cat-file --batch` process."""
        if not shas:
            return
        proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_clean_env(self.git_dir, self.root),
            cwd=self.root,
        )
        assert proc.stdin is not None and proc.stdout is not None
        feed = proc.stdin

        def write() -> None:  # a thread, so neither pipe can fill up and block the other side
            feed.write("".join(s + "\n" for s in shas).encode())
            feed.close()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        for sha in shas:
            header = proc.stdout.readline().split()
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            yield sha, data
        writer.join()
        proc.wait()


def _found(parts: tuple[str, ...], st: os.stat_result) -> Found:
    if stat.S_ISLNK(st.st_mode):
        return Found(parts, "link")
    if stat.S_ISREG(st.st_mode):
        return Found(parts, "file", st.st_size, st.st_mtime_ns, st.st_nlink)
    return Found(parts, "other")


def _why_skipped(f: Found) -> Unread:
    """Why an entry the walk met is not journaled."""
    found = unread(f)
    if found is not None:
        return found
    if f.kind == "file":
        reason = f"this file has {f.nlink} hard links and may be shared with something outside the store"
    elif f.kind == "link":
        reason = "a symbolic link; the journal does not follow links"
    else:
        reason = "not a regular file"
    return Unread(printable(f.parts), reason + "; not journaled", f.kind)


class JournalObserver:
    """Commits one step per writing tool call; opens nothing until the first write."""

    def __init__(self, store: Store) -> None:
        self.journal = Journal(store.root)
        # The first step of each process, every FULL_EVERY-th step after it, and the step after
        # a failure stage the whole tree; the others only their own paths.
        self._since_full = FULL_EVERY

    def before_step(self, store: Store, step: Step) -> None:
        if not self.journal.exists:
            self.journal.ensure()

    def on_step(self, store: Store, step: Step) -> None:
        # The write has already happened; a journal failure must not turn it into a failed
        # tool call. The next step then stages the whole tree, so the change is folded in there.
        full = self._since_full >= FULL_EVERY
        try:
            self.journal.record(step, full=full)
            self._since_full = 0 if full else self._since_full + 1
        except (MemdirError, OSError) as exc:
            self._since_full = FULL_EVERY
            warnings.warn(f"journal: step {step.tool!r} not recorded: {exc}", stacklevel=2)


class _NoJournal:
    def on_step(self, store: Store, step: Step) -> None:
        return None


_warned = False


@functools.lru_cache(maxsize=1)
def _git() -> str | None:
    return shutil.which("git")


def observer(store: Store) -> JournalObserver | _NoJournal:
    """The factory `tools/wiring.py` hands a store: a journal, or nothing (one warning) without git."""
    global _warned
    if _git() is None:
        if not _warned:
            warnings.warn("git is not installed: store steps are not journaled", stacklevel=2)
            _warned = True
        return _NoJournal()
    return JournalObserver(store)
