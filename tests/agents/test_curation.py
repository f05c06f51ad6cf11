"""Which curation a chunk gets (agents/curation.py): auto, agentic or split, per model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_helpers import new_store
from memdir.agents import ingest
from memdir.agents.curation import resolve
from memdir.errors import MemdirError
from memdir.models import get_model
from memdir.models.base import Model, OfflineModel
from memdir.models.scripted import ScriptedAPI
from memdir.stream import Turn

TURNS = [Turn("S1T1", "Alice", "I became vegan last week.", "2023-05-09")]


def test_auto_is_split_for_the_local_model_and_agentic_for_others() -> None:
    local = Model(ScriptedAPI([], "x"), "local/qwen2.5-coder-1.5b")
    cloud = Model(ScriptedAPI([], "x"), "openai/gpt-5.4-mini")
    assert resolve("auto", local) == "split" and resolve("agentic", local) == "agentic"
    assert resolve("auto", cloud) == "agentic" and resolve("split", cloud) == "split"
    assert resolve("auto", OfflineModel()) == "offline" == resolve("agentic", OfflineModel())


def test_split_with_the_offline_model_and_unknown_values_are_refused_before_any_write(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    before = sorted(p.name for p in (tmp_path / "mem").iterdir())
    with pytest.raises(MemdirError, match="split curation needs a model"):
        asyncio.run(ingest(get_model("offline"), store, TURNS, curation="split"))
    with pytest.raises(MemdirError, match="choose one of auto, agentic, split"):
        asyncio.run(ingest(get_model("offline"), store, TURNS, curation="smart"))  # type: ignore[arg-type]
    assert sorted(p.name for p in (tmp_path / "mem").iterdir()) == before
