"""Agents: roles over a store through a tool profile, driven by a model or an offline baseline policy.

- The loop: `loop.py` (the async tool loop: round and output caps, compaction, repeated calls
  stopped with a reason, episodes that wrote or opened nothing marked), `record.py` (the JSONL
  run record, scrubbed of secrets), `output.py` (`RoleOutput`, what every role call returns),
  `answer.py` (the answering role's answer, read tolerantly).
- Roles: `roles.py` + `prompts/*.md` (prompts put together from shared `_*.md` blocks; the
  product's settings; a caller with other settings passes its own `RoleSettings`); `run.py`
  (one call per unit of work);
  `baselines.py` (who plays a role, chosen once: `policy(role, model, plays)` gives the model's
  play or the offline baseline with the same signature; `require_model` refuses, with the
  reason, a role no baseline plays); `offline/` (the no-model curator, lexical searcher and
  option chooser, metered through the same harness and labelled baselines).
- Writing: `ingest.py` (a stream into a store, naming the chunks that changed nothing);
  `strategy.py` (the ingest strategy, `--strategy dump|auto`: a verbatim dump while small, curation
  past `SWITCH_KB`, derived from the cost curve; docs/eval.md) over `dump_format.py` (the
  dump's session files, one format for every writer of a verbatim dump);
  `curation.py` + `split/` (`--curation auto|agentic|split`; split curation is one schema-held
  extraction call per chunk, checked against the turns and filed by the offline curator's own
  filing in one journaled step; docs/curation.md); `feedback.py` (`--feedback health`: the
  findings an episode introduced, sent back for one capped extra round) and `mend_gate.py`
  (a round or agentic episode that loses a cited locator, breaks frontmatter or writes raw
  turns into an index is undone whole; docs/health.md).
- Reading: `read_search.py` (the top sections by search, then one schema-held call citing the
  lines it was shown: the local model's default in `ask` and `Memory.ask`).
- Restructuring: `restructure.py` (reorganization, preserve or condense; a move-only pass
  brings its own role settings); `consolidate.py` (a reorganization of a live store on a
  private working copy, landed as one step only if its gates hold: `cost_cap.py`, no sourced
  fact lost, no new `check` finding, the store unchanged meanwhile); `revert.py` (the store as
  before one journaled step, as a new step); `adopt.py` (a folder of notes made a valid memory in
  place; `adopt_walk.py` what it finds and leaves alone, `adopt_watch.py` a note saved while it
  lands kept); `landing.py` writes their changes in one step, `change_summary.py` describes them
  (docs/consolidate.md).
"""

from memdir.agents.answer import ParsedAnswer, parse_answer
from memdir.agents.consolidate import ConsolidationReport, consolidate
from memdir.agents.cost_cap import CostCap
from memdir.agents.curation import CURATIONS, Curation
from memdir.agents.ingest import IngestResult, NoOpWarning, ingest
from memdir.agents.loop import Episode, run_loop
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord, read_record
from memdir.agents.restructure import reorganize
from memdir.agents.revert import RevertReport, revert
from memdir.agents.roles import ROLES, Role, get_role, render
from memdir.agents.run import (
    answer_many,
    answer_question,
    choose_option,
    manage_chunk,
)

__all__ = [
    "CURATIONS",
    "ROLES",
    "ConsolidationReport",
    "CostCap",
    "Curation",
    "Episode",
    "IngestResult",
    "NoOpWarning",
    "ParsedAnswer",
    "RevertReport",
    "Role",
    "RoleOutput",
    "RunRecord",
    "answer_many",
    "answer_question",
    "choose_option",
    "consolidate",
    "get_role",
    "ingest",
    "manage_chunk",
    "parse_answer",
    "read_record",
    "render",
    "reorganize",
    "revert",
    "run_loop",
]
