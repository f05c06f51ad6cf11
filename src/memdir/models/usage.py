"""Token usage as an addable value, price cards from a data file, and intrinsic cost bounds.

Usage fields are what a run's cost is reported in (docs/eval.md, "The cost curve"): uncached
input, cached input, output (reasoning is a sub-count of output), calls and wall seconds.
`cache_write` (Anthropic's cache creation) is already inside `input_uncached`; it is kept apart
only so the card can price it if it differs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import TypedDict, cast


class UsageRecord(TypedDict):
    """`Usage` as run records and run folders carry it (JSON), field for field."""

    input_uncached: int
    input_cached: int
    output: int
    reasoning: int
    cache_write: int
    calls: int
    seconds: float


class BoundsRecord(TypedDict):
    """`Bounds` as run folders carry it (JSON)."""

    no_cache: int
    measured: int
    perfect: int
    caching_efficiency: float | None


@dataclass(frozen=True)
class Usage:
    input_uncached: int = 0
    input_cached: int = 0
    output: int = 0
    reasoning: int = 0
    cache_write: int = 0
    calls: int = 0
    seconds: float = 0.0

    @property
    def prompt(self) -> int:
        """The whole prompt of the call(s): p_r in the intrinsic bounds."""
        return self.input_uncached + self.input_cached

    @property
    def reasoning_share(self) -> float | None:
        return reasoning_share(self.reasoning, self.output)

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> UsageRecord:
        return UsageRecord(
            input_uncached=self.input_uncached,
            input_cached=self.input_cached,
            output=self.output,
            reasoning=self.reasoning,
            cache_write=self.cache_write,
            calls=self.calls,
            seconds=round(self.seconds, 6),
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Usage:
        """A usage read back from a record: a field it lacks (an older record's) counts 0."""
        return cls(**{f.name: d.get(f.name, 0) for f in fields(cls)})  # type: ignore[arg-type]


def spent(before: Usage, after: Usage) -> Usage:
    """What a meter counted between two readings, field by field of the readings as recorded
    (seconds rounded), so a session's usage adds up to the records' sums."""
    now, then = cast(Mapping[str, float], after.as_dict()), cast(Mapping[str, float], before.as_dict())
    return Usage.from_dict({k: now[k] - then[k] for k in now})


def reasoning_share(reasoning: float, output: float) -> float | None:
    """Rsn%: the share of output tokens spent reasoning (reasoning is a sub-count of output);
    None when nothing was output. Over several calls it is a ratio of sums, so a cell's share
    weighs each call by its output."""
    return reasoning / output if output else None


@dataclass(frozen=True)
class PriceCard:
    """Dollars per million tokens."""

    name: str
    input_uncached: float
    input_cached: float
    output: float
    cache_write: float | None = None

    def cost(self, u: Usage) -> float:
        write_rate = self.cache_write if self.cache_write is not None else self.input_uncached
        plain = u.input_uncached - u.cache_write
        dollars = plain * self.input_uncached + u.cache_write * write_rate
        dollars += u.input_cached * self.input_cached + u.output * self.output
        return dollars / 1_000_000


@lru_cache(maxsize=1)
def price_cards() -> dict[str, PriceCard]:
    raw = json.loads(resources.files("memdir.models").joinpath("prices.json").read_text(encoding="utf-8"))
    cards: dict[str, PriceCard] = {}
    for name, entry in raw["cards"].items():
        cards[name] = PriceCard(
            name, entry["input_uncached"], entry["input_cached"], entry["output"], entry.get("cache_write")
        )
    return cards


def price_card(model: str) -> PriceCard | None:
    """The card for `provider/model` or bare `model`; None when we have no card for it."""
    cards = price_cards()
    if model in cards:
        return cards[model]
    return cards.get(model.split("/", 1)[-1])


def role_cards(default: str, overrides: dict[str, str], roles: tuple[str, ...]) -> dict[str, PriceCard]:
    """The card each role of a run is priced with: `overrides[role]`, else `default`. The paper
    prices its bills apart (the search and execution bills of its Tables 16-17, each at its
    own model's rates), so a run whose roles use different models names a card per role.
    Raises ValueError naming what to fix: an unknown card or a role the run does not have."""
    strays = sorted(set(overrides) - set(roles))
    if strays:
        raise ValueError(f"no role {', '.join(strays)} to price; this run's roles are {', '.join(roles)}")
    out: dict[str, PriceCard] = {}
    for role in roles:
        name = overrides.get(role, default)
        card = price_card(name)
        if card is None:
            known = ", ".join(sorted(price_cards()))
            raise ValueError(f"no price card {name!r} (for {role}); known cards: {known}")
        out[role] = card
    return out


@dataclass(frozen=True)
class Bounds:
    """Intrinsic compute bounds of one episode (or a sum of episodes), in tokens."""

    no_cache: int
    measured: int
    perfect: int

    @property
    def caching_efficiency(self) -> float | None:
        """Share of the cacheable prompt served from cache; None when nothing was cacheable.

        It can exceed 1 when the episode's first prompt was already cached by earlier calls
        (a system prompt shared across episodes): the bounds assume the episode starts cold.
        """
        denom = self.no_cache - self.perfect
        if denom == 0:
            return None
        return (self.no_cache - self.measured) / denom

    @property
    def measured_over_perfect(self) -> float | None:
        """How many times a perfect cache's bill the run paid (Table 18's measured/perfect);
        None when the perfect bound is 0 (nothing was asked)."""
        return None if self.perfect == 0 else self.measured / self.perfect

    def __add__(self, other: Bounds) -> Bounds:
        return Bounds(
            self.no_cache + other.no_cache, self.measured + other.measured, self.perfect + other.perfect
        )

    def as_dict(self) -> BoundsRecord:
        return BoundsRecord(
            no_cache=self.no_cache,
            measured=self.measured,
            perfect=self.perfect,
            caching_efficiency=self.caching_efficiency,
        )


def episode_bounds(rounds: list[Usage]) -> Bounds:
    """Bounds over an episode's rounds r = 1..R with prompt p_r, cached q_r, output o_r.

    no-cache = sum p_r + sum o_r; measured = sum (p_r - q_r) + sum o_r; perfect = p_R + o_R
    (a perfect cache pays each prompt token once: the last prompt contains all earlier ones).
    """
    if not rounds:
        return Bounds(0, 0, 0)
    out = sum(r.output for r in rounds)
    no_cache = sum(r.prompt for r in rounds) + out
    measured = sum(r.input_uncached for r in rounds) + out
    last = rounds[-1]
    return Bounds(no_cache, measured, last.prompt + last.output)


def cell_bounds(episodes: list[list[Usage]]) -> Bounds:
    """Bounds of a cell: the sum over its episodes (efficiency is then a ratio of sums)."""
    total = Bounds(0, 0, 0)
    for ep in episodes:
        total = total + episode_bounds(ep)
    return total
