"""A sync in a real process killed with SIGKILL at its Nth write point (for tests/sync/).

The process counts write points with a Python audit hook (an event before each file opened for
writing, rename, removal, new folder and process start: git's fetch and push), armed just
before the sync, and sends itself SIGKILL at the Nth, before that operation runs; with N = 0
it counts them, lets the sync finish and writes the count to POINTS. memdir's code runs
unchanged.

    python tests/sync_kills.py ROOT N POINTS
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
EVENTS = {"os.rename", "os.remove", "os.rmdir", "os.mkdir", "subprocess.Popen", "os.truncate"}


def main() -> None:
    root, kill_at, points_file = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    from memdir.sync import sync

    seen = 0

    def hook(event: str, args: tuple[Any, ...]) -> None:
        nonlocal seen
        if event == "open":
            mode, flags = args[1], args[2]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & WRITE_FLAGS
            )
            if not writing:
                return
        elif event not in EVENTS:
            return
        seen += 1
        if seen == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)
    sync(root)
    if kill_at == 0:
        points_file.write_text(str(seen))


if __name__ == "__main__":
    main()
