"""The Python API's edges (issue 34, item 12): what `import memdir` offers, a Memory's lifetime
(`close`, the committer process), the model set once, and `add` over the ingest ledger; over
the real store, journal and committer process."""

from __future__ import annotations

import subprocess
import sys

import memdir


def test_the_api_types_import_from_the_package_lazily() -> None:
    from memdir import AddResult, Answer, MemdirError, NoOpWarning, SearchHit
    from memdir.agents.ingest import NoOpWarning as ingest_warning
    from memdir.api.results import AddResult as home

    assert AddResult is home and ingest_warning is NoOpWarning and issubclass(NoOpWarning, UserWarning)
    assert {"AddResult", "Answer", "MemdirError", "NoOpWarning", "SearchHit"} <= set(memdir.__all__)
    assert {Answer.__name__, SearchHit.__name__, MemdirError.__name__} <= set(dir(memdir))
    # `import memdir` alone loads none of them (the CLI's version string stays cheap)
    code = "import sys, memdir; print(sorted(m for m in sys.modules if m.startswith('memdir')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "['memdir']"
