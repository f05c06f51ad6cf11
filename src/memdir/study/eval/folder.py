"""The conversational study's run folder, laid out over the shared kernel (agents/runfolder.py).

manifest.json                                  the run's settings (resume compares them)
answers.jsonl                                  one row per question asked and judged
calls.jsonl                                    every record line of builds and searches
cells/<benchmark>/<conversation>/<variant>.json  a cell's build marker (built|skipped|aborted)
stores/<benchmark>/<conversation>/<variant>/   the cell's store, readable by `memdir stats`
summary.json, report.md, *.png                 derived from the above (eval/summary.py, report.py)
timings.json                                   derived too: the wall times, which summary.json leaves out
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypedDict

from memdir.store.atomic import write_atomic
from memdir.study.runfolder import JsonlTable

TIMINGS = "timings.json"  # wall times, apart: summary.json is the same for the same cells


class AnswerRow(TypedDict):
    """One line of answers.jsonl (docs/eval.md, The run folder): a question asked of one cell,
    its answer and every score; summary.json is computed from these alone."""

    benchmark: str
    conversation: str
    variant: str
    question_id: str
    order: int
    category: str
    question: str
    gold: str
    answer: str
    citations: list[str]
    correctness: float | None
    attribution: float | None
    f1: float
    lexical_support: float | None
    citations_not_found: list[str]
    evidence_hit: float | None
    defective: bool
    search: dict[str, Any]
    judge: dict[str, Any]


class RunFolder:
    """The files of one run: its two tables, and where each cell keeps its marker and store."""

    def __init__(self, out: Path, *, create: bool = True) -> None:
        """`create=False` reads a folder's layout without making it (the UI, a copied run)."""
        self.out = out
        self.manifest = out / "manifest.json"
        self.answers = JsonlTable(out / "answers.jsonl")
        self.calls = JsonlTable(out / "calls.jsonl")
        if create:
            out.mkdir(parents=True, exist_ok=True)

    def store_dir(self, benchmark: str, conversation: str, variant: str) -> Path:
        return self.out / "stores" / benchmark / conversation / variant

    def marker(self, benchmark: str, conversation: str, variant: str) -> Path:
        return self.out / "cells" / benchmark / conversation / f"{variant}.json"

    def repair(self) -> None:
        """Cut both tables' last lines left short by an interruption (those questions are asked
        again), before this run appends anything."""
        self.answers.repair()
        self.calls.repair()

    def save_marker(self, marker: Path, cell: dict[str, Any]) -> None:
        marker.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(marker, json.dumps(cell, indent=2, default=str).encode())

    def read_marker(self, marker: Path) -> dict[str, Any] | None:
        if not marker.exists():
            return None
        saved: dict[str, Any] = json.loads(marker.read_text())
        return saved
