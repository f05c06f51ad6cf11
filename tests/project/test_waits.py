"""The waiting helpers the other tests rely on (tests/waits.py): each tells apart what it waits
for from what it must not take for it, or a test built on it would pass on anything."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys

import pytest
from tests.waits import listens, processes_with, wait_until

LISTEN = (
    "import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
    "print(s.getsockname()[1], flush=True); sys.stdin.read()"
)


def test_listens_names_the_process_that_holds_the_port() -> None:
    mine = socket.socket()
    mine.bind(("127.0.0.1", 0))
    mine.listen()
    child = subprocess.Popen(
        [sys.executable, "-c", LISTEN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        theirs = int(child.stdout.readline())  # its readiness line: it listens from then on
        port = mine.getsockname()[1]
        assert listens(os.getpid(), port) and not listens(child.pid, port)
        assert listens(child.pid, theirs) and not listens(os.getpid(), theirs)
        mine.close()
        assert not listens(os.getpid(), port)
    finally:
        mine.close()
        child.kill()
        child.wait()


def test_processes_with_sees_a_named_process_until_it_ends() -> None:
    name = f"memdir-waits-{secrets.token_hex(4)}"
    proc = subprocess.Popen(["bash", "-c", f'exec -a "{name}" sleep 600'])
    try:
        assert wait_until(lambda: processes_with(name), "the named process to start") == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
    assert processes_with(name) == []


def test_wait_until_returns_the_value_or_fails_naming_what_it_waited_for() -> None:
    looks: list[int] = []

    def third_look() -> int:
        looks.append(1)
        return len(looks) if len(looks) >= 3 else 0

    assert wait_until(third_look, "three looks") == 3
    with pytest.raises(AssertionError, match="waiting for a thing that never comes"):
        wait_until(lambda: False, "a thing that never comes", timeout=0.2)
