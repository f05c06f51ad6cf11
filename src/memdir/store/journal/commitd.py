"""The committer process: lands the step logs of the journals a writer process names.

Why a process and not a thread: a step's commit is mostly libgit2 writing new files and Python
between those calls, and a thread doing it took the GIL back from the writer's thread at each of
its many small system calls (opens, stats, closes), which made a plain write in the same process
several times slower (benchmarks/journal_overhead.py; figures:
benchmarks/results/2026-12-06-docstring-figures.md, "store/journal/commitd.py"). A process of
its own shares nothing with the writer but the log and the journal lock, and runs on the other
core.

A writer process starts one committer, lazily, at its first logged step, and writes the git
dir of each step it logs to the committer's stdin (`poke`); the committer lands that journal's
log (`catch_up.commit_pending`). At end of input (the writer exited, or was killed) it lands
what it was told about and ends, so nothing waits on a writer that is gone. If no committer can
run, `poke` says so and the writer lands the step itself, as before the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pygit2

log = logging.getLogger(__name__)

_lock = threading.Lock()
_child: subprocess.Popen[bytes] | None = None
_CODE = "import sys; sys.path.insert(0, sys.argv[1]); from memdir.store.journal.commitd import main; main()"


def poke(git_dir: Path) -> bool:
    """Have the committer land `git_dir`'s log; False when no committer runs here."""
    global _child
    line = os.fsencode(str(git_dir)) + b"\n"
    with _lock:
        for _ in range(2):  # a committer found dead is started once more
            if _child is None or _child.poll() is not None:
                _child = _spawn()
                if _child is None:
                    return False
            assert _child.stdin is not None
            try:
                _child.stdin.write(line)
                _child.stdin.flush()
                return True
            except (BrokenPipeError, OSError):
                _child = None
    return False


def stop(timeout: float = 30.0) -> None:
    """End this process's committer, if one runs: its input closed, it lands what it was told
    and exits; waited for up to `timeout` s, then killed (a kill loses nothing: the step log
    stays for the next lander). A later `poke` starts a new one, so stopping is never wrong,
    only a process start more."""
    global _child
    with _lock:
        child, _child = _child, None
    if child is None:
        return
    if child.stdin is not None:
        with contextlib.suppress(OSError):
            child.stdin.close()
    try:
        child.wait(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _spawn() -> subprocess.Popen[bytes] | None:
    package_parent = str(Path(__file__).resolve().parents[3])
    try:
        return subprocess.Popen(
            [sys.executable, "-c", _CODE, package_parent],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            close_fds=True,
        )
    except OSError as exc:
        log.warning("journal: no committer process (%s); steps are committed in the call", exc)
        return None


def _forget_after_fork() -> None:
    global _child, _lock
    _child, _lock = None, threading.Lock()  # the parent's committer, not this process's


os.register_at_fork(after_in_child=_forget_after_fork)


def main() -> None:
    """The committer's loop: one git dir per line of stdin."""
    from memdir.store.journal.catch_up import commit_pending
    from memdir.store.private import tighten_umask

    tighten_umask()  # its own process: all it makes (libgit2's objects, git's packs) is private
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the writer; stdin's end stops us
    repos: dict[str, pygit2.Repository] = {}
    for raw in sys.stdin.buffer:
        git_dir = os.fsdecode(raw.rstrip(b"\n"))
        try:
            repo = repos.get(git_dir)
            if repo is None:
                if len(repos) >= 64:  # a tenant server's many stores: keep descriptors bounded
                    repos.pop(next(iter(repos))).free()
                repo = repos[git_dir] = pygit2.Repository(git_dir)
            commit_pending(Path(git_dir), repo=repo)
        except Exception as exc:  # the next lander (a writer, a reader) lands what this missed
            print(f"journal: step not recorded: {exc}", file=sys.stderr, flush=True)
            stale = repos.pop(git_dir, None)
            if stale is not None:
                stale.free()
