"""Agents: roles over a store through a tool profile, driven by a model or an offline baseline policy."""

from memdir.agents.answer import Answer, parse_answer
from memdir.agents.consolidate import ConsolidationReport, consolidate
from memdir.agents.cost_cap import CostCap
from memdir.agents.curation import CURATIONS, Curation
from memdir.agents.ingest import IngestResult, NoOpWarning, ingest
from memdir.agents.loop import Episode, run_loop
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord, read_record
from memdir.agents.restructure import FolderingError, folder, reorganize, verify_moves
from memdir.agents.revert import RevertReport, revert
from memdir.agents.roles import ROLES, Role, get_role, render
from memdir.agents.run import (
    choose_option,
    closed_book,
    guidance,
    manage_chunk,
    search,
    search_many,
)

__all__ = [
    "CURATIONS",
    "ROLES",
    "Answer",
    "ConsolidationReport",
    "CostCap",
    "Curation",
    "Episode",
    "FolderingError",
    "IngestResult",
    "NoOpWarning",
    "RevertReport",
    "Role",
    "RoleOutput",
    "RunRecord",
    "choose_option",
    "closed_book",
    "consolidate",
    "folder",
    "get_role",
    "guidance",
    "ingest",
    "manage_chunk",
    "parse_answer",
    "read_record",
    "render",
    "reorganize",
    "revert",
    "run_loop",
    "search",
    "search_many",
    "verify_moves",
]
