"""The conversational study's run folder, laid out over the shared kernel (memdir_study/runfolder.py).

manifest.json                                  the run's settings (resume compares them)
answers.jsonl                                  one row per question asked and judged
calls.jsonl                                    every record line of builds and searches
cells/<benchmark>/<conversation>/<variant>.json  a cell's build marker (built|skipped|aborted)
stores/<benchmark>/<conversation>/<variant>/   the cell's store, readable by `memdir stats`
summary.json, report.md, *.png                 derived from the above (eval/summary.py, report.py)
                                               (every file typed in eval/records.py)
timings.json                                   derived too: the wall times, which summary.json leaves out
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict, cast

from memdir.jsontypes import JsonObject
from memdir.store.atomic import write_atomic
from memdir_study.eval.records import AnswerRow, CorpusProfile
from memdir_study.runfolder import JsonlTable
from memdir_study.variants import BuildChecks, BuildCost

TIMINGS = "timings.json"  # wall times, apart: summary.json is the same for the same cells


class CellMarker(TypedDict, total=False):
    """A cell's build marker (JSON): the runner's `ConversationCell`, field for field, as it was
    left when its build ended; an older marker may lack a later field."""

    benchmark: str
    conversation: str
    variant: str
    status: str
    reason: str | None
    build: BuildCost
    store: JsonObject | None
    checks: BuildChecks
    search_profile: str | None
    corpus: CorpusProfile
    stores_from: dict[str, str] | None


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

    def answer_rows(self) -> list[AnswerRow]:
        """answers.jsonl, typed: read here once, each line checked (a line no run wrote is named
        by its place, and the run stops before summarizing anything)."""
        where = self.answers.path
        return [AnswerRow.from_json(row, f"{where} row {i}") for i, row in enumerate(self.answers.rows(), 1)]

    def add_answer(self, row: AnswerRow) -> None:
        self.answers.append([row.as_json()])

    def repair(self) -> None:
        """Cut both tables' last lines left short by an interruption (those questions are asked
        again), before this run appends anything."""
        self.answers.repair()
        self.calls.repair()

    def save_marker(self, marker: Path, cell: CellMarker) -> None:
        marker.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(marker, json.dumps(cell, indent=2, default=str).encode())

    def read_marker(self, marker: Path) -> CellMarker | None:
        if not marker.exists():
            return None
        return cast(CellMarker, json.loads(marker.read_text()))
