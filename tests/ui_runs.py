"""A small eval run folder for the UI tests, laid out as eval/folder.py describes: a manifest,
answers.jsonl with citations, report.md with a plot, and one cell's store built from the
generated benchmark's sample (so its locators name real turns)."""

from __future__ import annotations

import json
from pathlib import Path

from ui_helpers import build_store

RUN = "study/generated"
CELL = ("generated", "gen-s42", "agent-curated")
PNG = (  # a 1x1 PNG: the report's plot
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4"
    b"\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
)


def build_run(runs: Path) -> Path:
    out = runs / RUN
    build_store(out / "stores" / CELL[0] / CELL[1] / CELL[2])
    (out / "manifest.json").write_text(json.dumps({"benchmark": "generated", "variants": [CELL[2]]}))
    row = {
        "benchmark": CELL[0],
        "conversation": CELL[1],
        "variant": CELL[2],
        "question_id": "gen-s42-q1",
        "category": "single-hop",
        "question": "What is Alice's job now?",
        "gold": "principal",
        "answer": "She is a principal.",
        "citations": ["/memories/people/alice.md:10", "/memories/people/bob.md:3"],
        "citations_not_found": ["/memories/people/bob.md:3"],
        "correctness": 1.0,
        "f1": 0.5,
    }
    (out / "answers.jsonl").write_text(json.dumps(row) + "\n" + '{"cut line\n')
    (out / "report.md").write_text(
        "# generated: the conversational study\n\n"
        "| variant | correct |\n|---|---|\n| agent-curated | 100 |\n\n"
        "![correctness.png](correctness.png)\n"
    )
    (out / "correctness.png").write_bytes(PNG)
    return out


SKILL_RUN = "skills/alfworld"


def build_skill_run(runs: Path) -> tuple[Path, str]:
    """A skill run folder (skills/folder.py): one chain's store and a task row naming the
    journal snapshot after it; returns the folder and that commit."""
    from memdir.store.journal import Journal

    out = runs / SKILL_RUN
    store = out / "stores" / "curated-skills" / "chain-1"
    build_store(store)
    head = Journal(store).head()
    assert head is not None
    (out / "manifest.json").write_text(json.dumps({"protocol": "full"}))
    row = {
        "variant": "curated-skills",
        "chain": 1,
        "index": 0,
        "family": "pick",
        "task": "put a mug on the desk",
    }
    (out / "tasks.jsonl").write_text(
        json.dumps({**row, "success": True, "steps": 7, "snapshot": head}) + "\n"
    )
    return out, head
