"""What every variant builder shares: the build context (with its tool set), the build
outcome, and the build cost read off the run record.

A builder turns one sample (a conversation) into one store folder, or into nothing for
closed-book, and says what that cost. Costs come from the record the roles write (one
`episode` line per model episode, one `offline_step` line per offline policy step), priced
with the run's price card, so a model-built and an offline-built store are accounted alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from memdir.agents.record import RecordLine, RunRecord, effort
from memdir.analytics.integrity import FactDiffRecord
from memdir.errors import MemdirError
from memdir.models import Model, PriceCard
from memdir.store.store import Store
from memdir.tools.profiles import TOOL_SETS
from memdir_study.bench.types import Sample


class VariantUnavailable(MemdirError):
    """This variant cannot be built with these settings (e.g. it needs a model); the reason is
    recorded in the cell instead of a result."""


@dataclass
class BuildContext:
    sample: Sample
    store_dir: Path  # the store folder this variant writes (absent for closed-book)
    model: Model  # the builder model
    record: RunRecord
    tool_set: str = "center"  # a TOOL_SETS name: the builder's and search's profiles
    price_card: PriceCard | None = None
    progress: Callable[[int, int], None] | None = None  # (units done, units in all), for a bar

    def tick(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)

    def profiles(self) -> tuple[str, str]:
        if self.tool_set not in TOOL_SETS:
            raise MemdirError(f"unknown tool set {self.tool_set!r}; choose one of {', '.join(TOOL_SETS)}")
        return TOOL_SETS[self.tool_set]


class BuildCost(TypedDict, total=False):
    """A build's cost as its cell's marker and summary.json carry it (`build_cost`); a cell
    that was never built carries none of it."""

    tool_calls: int
    model_calls: int
    bytes_read: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float
    seconds: float


class FoldersMoved(TypedDict):
    """The foldered variant's check: every file moved, none changed (`roles.verify_moves`)."""

    verified: bool
    files: int
    moved: int
    moves: dict[str, str]


class BuildChecks(TypedDict, total=False):
    """What a variant's build verified, by the variant that checks it (JSON, in its marker)."""

    foldering: FoldersMoved
    diff_facts: FactDiffRecord
    split_curation: dict[str, int]


@dataclass
class Built:
    """A built variant: its store (None for closed-book), the profile search uses over it, and
    the checks the build ran (foldering verification, diff --facts)."""

    variant: str
    store: Store | None
    search_profile: str | None
    checks: BuildChecks = field(default_factory=lambda: BuildChecks())


def build_cost(entries: list[RecordLine], card: PriceCard | None, seconds: float) -> BuildCost:
    """Tool calls, tokens by category and dollars over a build's record lines (`record.effort`,
    the same sum as a question's search cost)."""
    done = effort(entries)
    usage, calls, bytes_read = done.usage, done.tool_calls, done.bytes_read
    return {
        "tool_calls": calls,
        "model_calls": usage.calls,
        "bytes_read": bytes_read,
        "input_tokens": usage.input_uncached,
        "cached_tokens": usage.input_cached,
        "output_tokens": usage.output,
        "reasoning_tokens": usage.reasoning,
        "cost_usd": round(card.cost(usage), 6) if card else 0.0,
        "seconds": round(seconds, 3),
    }
