"""The feedback round on the real local model (docs/health.md): a scripted episode plants a
dangling reference, then the local model gets the feedback turn as the continuation of that
conversation, and the run record shows what it mended.

    PYTHONPATH=src python benchmarks/feedback_round_local.py [DIR]    # needs `make local-model`
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts src/ on sys.path)

from memdir.agents import RunRecord
from memdir.agents.feedback import baseline, mend
from memdir.agents.roles import get_role
from memdir.agents.run import run_role
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.store import spec
from memdir.store.moves import MoveLog
from memdir.stream import Turn, chunk_stream
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

root = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memdir-feedback-")) / "store"
store = open_store(root, create=True, init=True)
chunk = chunk_stream([Turn("S1T1", "Alice", "My dog Rex is a beagle.", "2024-05-02")])[0]
text = (
    "---\nname: alice\ndescription: Alice and her pets\n---\n# Alice\n"
    "- Alice has a beagle named Rex [S1T1]; see /memories/pets/rex.md\n"
)
role = get_role("management")
harness = Harness(store, role.profile or "manage", role=role.name, chunk=1)
record = RunRecord(root.parent / "record.jsonl")
ids = {"chunk": 1}
moved = MoveLog()  # the renames of the episode and its feedback round
store.observers.append(moved)
before = baseline(store, "health")
scripted = get_model(
    "scripted", script=[call("create", path="/memories/alice.md", file_text=text), answer("filed")]
)
ep = asyncio.run(
    run_role(
        scripted,
        harness,
        role,
        record,
        ids,
        core_memory=spec.context(store).text,
        chunk=chunk.render(),
        chunk_id=1,
    )
)
local = get_model("local")
t = time.perf_counter()
extra = asyncio.run(mend(local, harness, role, record, ids, ep, before, moved))
print("seconds", round(time.perf_counter() - t, 1))
for e in record.entries:
    if e["kind"] in ("feedback", "feedback_result") or (e["kind"] == "model_call" and e.get("feedback")):
        print(
            json.dumps(
                {
                    k: e.get(k)
                    for k in (
                        "kind",
                        "introduced",
                        "mended",
                        "remaining",
                        "rounds",
                        "tool_calls",
                        "writes",
                        "reply",
                        "usage",
                    )
                }
            )[:600]
        )
print(store.read_text("/memories/alice.md"))
