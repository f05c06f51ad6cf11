"""Split curation: one constrained extraction call per chunk, validated, then filed by rule.

docs/curation.md describes the schema, the validation rules and the filer's line forms.
"""

from __future__ import annotations

from typing import Any

from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.errors import MemdirError
from memdir.models import Model
from memdir.stream import Chunk
from memdir.tools.profiles import Harness


async def curate_chunk(
    model: Model, harness: Harness, record: RunRecord | None, ids: dict[str, Any], chunk: Chunk
) -> RoleOutput:
    """Extract the chunk's facts with one model call, validate them, file what holds."""
    raise MemdirError("split curation is not built yet; use --curation agentic for now")


__all__ = ["curate_chunk"]
