"""The one file lock (store/oslock.py): exclusive across processes and threads, reentrant in
a thread, and a clear error at its timeout that leaves the lock usable."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import flock_held
from memdir.store.oslock import LockTimeout, OsLock
from waits import HANG_GUARD_S, wait_until


def test_another_process_holding_the_file_times_the_lock_out_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    with (
        flock_held(path),
        pytest.raises(LockTimeout, match=r"stayed locked by another writer for 0\.05 s; wait"),
    ):
        OsLock(path, timeout=0.05).acquire()
    lock = OsLock(path, timeout=0.05)  # let go: the same file locks at once
    with lock:
        assert lock.held


def test_a_lock_taken_here_excludes_another_process(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    probe = (
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
        "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)"
    )
    with OsLock(path):
        held = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True)
    assert held.returncode != 0 and "BlockingIOError" in held.stderr
    free = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True)
    assert free.returncode == 0, free.stderr


def test_reentrant_within_a_thread_and_let_go_only_by_the_outermost_release(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    lock = OsLock(path)
    with lock, lock:
        assert lock.held
    assert not lock.held
    with pytest.raises(RuntimeError, match="not locked by this thread"):
        lock.release()
    with flock_held(path):  # really let go: another holder gets the file
        pass


def test_a_second_thread_waits_for_the_first_and_gets_it_when_let_go(tmp_path: Path) -> None:
    lock = OsLock(tmp_path / "writer.lock")
    order: list[str] = []
    lock.acquire()

    def second() -> None:
        with lock:
            order.append("second")

    t = threading.Thread(target=second)
    t.start()
    time.sleep(0.05)  # give the second thread the chance to (wrongly) get in
    order.append("first")
    lock.release()
    t.join(HANG_GUARD_S)
    assert order == ["first", "second"]


def test_two_locks_on_one_file_in_one_thread_exclude_each_other(tmp_path: Path) -> None:
    """Two holders (two stores opened on one root) are two writers, as two processes are."""
    path = tmp_path / "writer.lock"
    with OsLock(path), pytest.raises(LockTimeout):
        OsLock(path, timeout=0.05).acquire()


def test_a_wait_on_another_process_ends_soon_after_it_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    got = threading.Event()
    holder = flock_held(path)
    holder.__enter__()

    def waiter() -> None:
        with OsLock(path, timeout=HANG_GUARD_S):
            got.set()

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.05)
    assert not got.is_set()
    holder.__exit__(None, None, None)
    wait_until(got.is_set, "the waiter to get the lock")
    t.join(HANG_GUARD_S)
