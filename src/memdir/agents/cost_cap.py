"""A cost cap over a whole agent run: tokens, dollars and wall seconds (docs/consolidate.md).

The tool loop caps rounds and output per episode; a consolidation must also stop when what it
spent passes an operator's budget, across all its passes. :class:`CappedModel` stands in for
the model: before each call it refuses once the budget is spent (or the time is up), it bounds
each call by the seconds left, and after each call it stops the run as soon as that call passed
the cap, so the tool calls of a reply that broke the budget never run.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TypedDict

from memdir.errors import MemdirError
from memdir.models import ChatMessage, GenerateConfig, Model, ModelError, ModelOutput, ToolInfo, Usage
from memdir.models.usage import PriceCard


class CostCapRecord(TypedDict):
    """A cap as run records and manifests say it (JSON)."""

    max_tokens: int | None
    max_usd: float | None
    max_seconds: float | None
    price_card: str | None


@dataclass(frozen=True)
class CostCap:
    """The most a run may spend; None leaves that dimension open. Tokens are the whole prompt
    (cached or not) plus output; dollars are priced with `card`, or the model's own card."""

    max_tokens: int | None = None
    max_usd: float | None = None
    max_seconds: float | None = None
    card: PriceCard | None = None

    def as_dict(self) -> CostCapRecord:
        return {
            "max_tokens": self.max_tokens,
            "max_usd": self.max_usd,
            "max_seconds": self.max_seconds,
            "price_card": self.card.name if self.card else None,
        }


class CapReached(ModelError):
    """The run spent its budget; it stops here and nothing it did may land."""


def tokens(u: Usage) -> int:
    """What a token cap counts: every prompt token (cached too) and every output token."""
    return u.input_uncached + u.input_cached + u.output


class CappedModel(Model):
    """`inner`'s provider, settings and retries, metered against `cap` from construction on.

    It keeps its own usage and call log (the loop reads both); :meth:`fold_into` adds them to
    the caller's model afterwards, so what the run cost shows where the caller looks.
    """

    def __init__(self, inner: Model, cap: CostCap, card: PriceCard | None) -> None:
        super().__init__(inner.api, inner.name, inner.config, inner.retry, inner.on_call)
        if cap.max_usd is not None and card is None:
            raise MemdirError(
                f"a dollar cap needs prices, and there is no price card for {inner.name!r}; "
                "name one (--price-card) or cap tokens instead"
            )
        self.cap = cap
        self.card = card
        self.start = time.monotonic()
        self.end: float | None = None  # set by finish(): the clock stops with the run
        self.reached: str | None = None  # what stopped the run, in words

    @property
    def seconds(self) -> float:
        return (self.end if self.end is not None else time.monotonic()) - self.start

    def finish(self) -> None:
        """Stop the clock; a run that ended over a cap (its last tool calls ran out the time,
        say) is marked as stopped by it."""
        self.end = time.monotonic()
        why = self.over()
        if self.reached is None and why is not None:
            self.reached = why

    @property
    def cost_usd(self) -> float | None:
        return self.card.cost(self.usage) if self.card else None

    def over(self) -> str | None:
        """Which cap the spending so far has passed, in words; None while within every cap."""
        c = self.cap
        used = tokens(self.usage)
        if c.max_tokens is not None and used > c.max_tokens:
            return f"{used:,} tokens, over the cap of {c.max_tokens:,}"
        cost = self.cost_usd
        if c.max_usd is not None and cost is not None and cost > c.max_usd:
            return f"${cost:.4f}, over the cap of ${c.max_usd:.4f}"
        if c.max_seconds is not None and self.seconds >= c.max_seconds:
            return f"{self.seconds:.1f} s, at or over the cap of {c.max_seconds:g} s"
        return None

    def _stop(self, why: str) -> CapReached:
        self.reached = f"{why}; stopped after {self.usage.calls} model call(s)"
        return CapReached(f"cost cap: {self.reached}")

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo] | None = None,
        config: GenerateConfig | None = None,
    ) -> ModelOutput:
        why = self.over()
        if why is not None:
            raise self._stop(why)
        left = None if self.cap.max_seconds is None else self.cap.max_seconds - self.seconds
        try:
            out = await asyncio.wait_for(super().generate(messages, tools, config), left)
        except TimeoutError:  # the wrapper turns its own timeouts into ModelError: this one is ours
            why = f"a model call was still running at the cap of {self.cap.max_seconds:g} s"
            raise self._stop(why) from None
        why = self.over()
        if why is not None:
            raise self._stop(why)
        return out

    def fold_into(self, model: Model) -> None:
        """Add this run's usage and calls to `model`'s totals."""
        model.usage = model.usage + self.usage
        model.calls.extend(self.calls)
