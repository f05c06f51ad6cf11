"""The model settings of the paper's Table 11, per role of the conversational study: each role's
reasoning effort (the agents high, the judge low), the judge's temperature 0, and the price card
each role's bill is priced with (docs/study.md, Configuration of record (Table 11)).

A model that plays two roles is one provider client: each role gets its own `Model` over that
client, with its own settings, so the builder's effort never reaches the judge's calls. A model
without a reasoning control is sent no effort (`ModelAPI.takes_reasoning_effort`); the manifest
says, per role, what was asked and whether the model takes it.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memdir.errors import MemdirError
from memdir.models import REASONING_EFFORTS, Model, PriceCard, role_cards

ROLES = ("builder", "search", "judge")
AGENTS = ("builder", "search")
# The study's reasoning effort per role (Table 11); None: none is sent.
STUDY_EFFORT: dict[str, str | None] = {"builder": "high", "search": "high", "judge": "low"}
EFFORTS = REASONING_EFFORTS
JUDGE_TEMPERATURE = 0.0
IN_FLIGHT = 8  # questions a cell answers at once, unless a model that answers or judges is local


def default_in_flight(asking: list[Model]) -> int:
    """Questions at once when none is asked for: one when a model that answers or judges is the
    local model, whose one server keeps one prompt's prefix cache; eight interleaved questions
    defeated it (benchmarks/results/2026-12-06-curation-split-local-model.md, "The reply keyed
    by turn, and the study's agentic curator beside it")."""
    from memdir.agents.curation import is_local

    return 1 if any(is_local(m) for m in asking) else IN_FLIGHT


def check_efforts(efforts: dict[str, str | None]) -> dict[str, str | None]:
    """`efforts` over the study's, refused with what to write when a role or level is unknown."""
    strays = sorted(set(efforts) - set(ROLES))
    bad = sorted(f"{r}={e}" for r, e in efforts.items() if e is not None and e not in EFFORTS)
    if strays or bad:
        raise MemdirError(
            f"unknown reasoning effort {', '.join(strays + bad)}: give LEVEL or ROLE=LEVEL with ROLE one "
            f"of {', '.join(ROLES)} (or agents) and LEVEL one of {', '.join(EFFORTS)} (or off: none sent)"
        )
    return {**STUDY_EFFORT, **efforts}


def price_cards(default: str, overrides: dict[str, str]) -> dict[str, PriceCard]:
    try:
        return role_cards(default, overrides, ROLES)
    except ValueError as exc:
        raise MemdirError(f"--price-card: {exc}") from None


def with_effort(model: Model, effort: str | None, temperature: float | None = None) -> Model:
    """`model` as one role plays it: sent this role's effort (and temperature), counted on
    `model` (`Model.with_settings`)."""
    if model.is_offline:
        return model
    if temperature is None:
        return model.with_settings(reasoning_effort=effort)
    return model.with_settings(reasoning_effort=effort, temperature=temperature)


class RoleSetting(TypedDict):
    """A role's settings as the manifest records them (`manifest_roles`)."""

    model: str
    reasoning_effort: str | None
    effort_sent: bool
    price_card: str
    not_played: NotRequired[str]
    temperature: NotRequired[float]


def manifest_roles(
    names: dict[str, str],
    models: dict[str, Model],
    efforts: dict[str, str | None],
    cards: dict[str, PriceCard],
    not_played: dict[str, str] | None = None,
) -> dict[str, RoleSetting]:
    """Each role's settings as the manifest records them: its model, the reasoning effort asked
    and whether the model is sent it, the judge's temperature, and its price card. A role this
    run never plays (`not_played`: role -> why; the builder under `--stores-from`) is asked no
    effort and sent none, and says why, even when its model plays another role of the run."""
    idle = not_played or {}
    out: dict[str, RoleSetting] = {}
    for role in ROLES:
        name = names[role]
        model = models.get(name)
        takes = model is not None and not model.is_offline and model.api.takes_reasoning_effort()
        effort = None if role in idle else efforts.get(role)
        entry: RoleSetting = {
            "model": name,
            "reasoning_effort": effort,
            "effort_sent": bool(takes and effort is not None),
            "price_card": cards[role].name,
        }
        if role in idle:
            entry["not_played"] = idle[role]
        if role == "judge":
            entry["temperature"] = JUDGE_TEMPERATURE
        out[role] = entry
    return out
