"""The options that say where a model is served and how tools reach it, shared by every command
that takes a model (ingest, ask, consolidate, eval, skills), and `--tool-set` where a command
takes one; the model they name, the store's call log (`<root>/.memdir/calls.jsonl`, hidden from
every agent tool) and the usage line a command prints after its calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from memdir.agents.record import RunRecord
from memdir.models import REASONING_EFFORTS, Model, ModelError, get_model, price_card
from memdir.models.protocols import PROTOCOLS
from memdir.models.scripted import load_script
from memdir.store.store import Store
from memdir.tools.profiles import TOOL_SETS


def endpoint_options(fn: Any) -> Any:
    fn = click.option(
        "--tool-protocol",
        type=click.Choice(PROTOCOLS),
        default=None,
        help="How tools reach the model: native (the API's tools parameter), text (described in the "
        "prompt, calls parsed from the reply) or json-schema (replies constrained to one call). "
        "Default: the provider's (json-schema for local, native otherwise).",
    )(fn)
    fn = click.option(
        "--base-url",
        default=None,
        help="OpenAI-compatible server URL (vLLM, Ollama, llama.cpp) for openai/<model>, or a running "
        "server for --model local (else it is started on first use).",
    )(fn)
    return fn


def round_cap_option(fn: Any) -> Any:
    return click.option(
        "--round-cap",
        type=click.IntRange(min=1),
        default=None,
        help="Lower every role's tool-round cap to N (the study's: 60 management, 80 per "
        "reorganization pass, 20-40 search) for a slow local model; recorded in the manifest.",
    )(fn)


def per_role(
    values: tuple[str, ...], roles: tuple[str, ...], groups: dict[str, tuple[str, ...]], option: str
) -> tuple[str | None, dict[str, str]]:
    """An option given as VALUE or ROLE=VALUE, any number of times: (the last bare VALUE, or None;
    {role: value}), a group name (e.g. `agents`) standing for its roles. Refuses an unknown role
    naming the ones there are."""
    bare: str | None = None
    named: dict[str, str] = {}
    for value in values:
        role, sep, rest = value.partition("=")
        if not sep:
            bare = value
            continue
        members = groups.get(role, (role,) if role in roles else ())
        if not members:
            known = ", ".join([*roles, *groups])
            raise click.BadParameter(f"no role {role!r} in {value!r}; roles: {known}", param_hint=option)
        named.update(dict.fromkeys(members, rest))
    return bare, named


def reasoning_effort_option(
    roles: tuple[str, ...], agents: tuple[str, ...], study: str
) -> Callable[[Any], Any]:
    """`--reasoning-effort LEVEL | ROLE=LEVEL` (repeatable; a bare LEVEL is the agents'), passed
    as `reasoning_effort`: {role: level, `off` as None}, only the roles given."""

    def parse(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str | None]:
        bare, named = per_role(values, roles, {"agents": agents}, "--reasoning-effort")
        given = ({**dict.fromkeys(agents, bare)} if bare is not None else {}) | named
        bad = sorted({v for v in given.values() if v not in (*REASONING_EFFORTS, "off")})
        if bad:
            levels = ", ".join([*REASONING_EFFORTS, "off"])
            raise click.BadParameter(
                f"unknown reasoning effort {', '.join(bad)}; levels: {levels}",
                param_hint="--reasoning-effort",
            )
        return {r: None if v == "off" else v for r, v in given.items()}

    return click.option(
        "--reasoning-effort",
        multiple=True,
        callback=parse,
        metavar="[ROLE=]LEVEL",
        help=f"Reasoning effort per role (none, minimal, low, medium, high; off: none sent), sent only to "
        f"models that take one. A bare LEVEL sets the agents ({', '.join(agents)}); ROLE=LEVEL one role "
        f"({', '.join(roles)}, or agents). Default, the study's: {study}. Recorded in the manifest.",
    )


def price_card_option(roles: tuple[str, ...], default: str) -> Callable[[Any], Any]:
    """`--price-card NAME | ROLE=NAME` (repeatable), passed as `price_card`: (the card of every
    role not named, {role: card})."""

    def parse(
        ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
    ) -> tuple[str, dict[str, str]]:
        bare, named = per_role(values, roles, {}, "--price-card")
        return bare or default, named

    return click.option(
        "--price-card",
        multiple=True,
        callback=parse,
        metavar="[ROLE=]CARD",
        help=f"Rate card that prices tokens (memdir/models/prices.json; default {default}); ROLE=CARD "
        f"prices one role's bill apart ({', '.join(roles)}). Recorded in the manifest.",
    )


def tool_set_option(help: str) -> Callable[[Any], Any]:
    """`--tool-set NAME`: a TOOL_SETS name, passed as `tool_set`."""
    return click.option(
        "--tool-set", type=click.Choice(list(TOOL_SETS)), default="center", show_default=True, help=help
    )


def build_models(
    names: list[str | None], base_url: str | None, tool_protocol: str | None, round_cap: int | None = None
) -> dict[str, Model]:
    """Every model named (offline aside), built once, so a missing key or local model fails first."""
    from memdir.models import ModelError

    models: dict[str, Model] = {}
    for name in names:
        if not name or name in models or name.startswith("offline"):
            continue
        try:
            models[name] = get_model(name, base_url=base_url, tool_protocol=tool_protocol)
            models[name].api.round_cap = round_cap
        except ModelError as exc:
            raise click.ClickException(str(exc)) from None
    return models


CALL_LOG = "calls.jsonl"


def model_from_options(
    name: str, base_url: str | None, api_key_env: str | None, script: str | None, protocol: str | None = None
) -> Model:
    try:
        steps = load_script(json.loads(Path(script).read_text(encoding="utf-8"))) if script else None
        model = get_model(
            name, base_url=base_url, api_key_env=api_key_env, script=steps, tool_protocol=protocol
        )
        if name.partition("/")[0] == "local":
            model.api.check_ready()  # refused before a store is touched, with the install command
        return model
    except (ModelError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None


def model_options(fn: Any) -> Any:
    fn = click.option("--script", type=click.Path(exists=True, dir_okay=False), default=None,
                      help="For --model scripted: a JSON list of replies to replay.")(fn)  # fmt: skip
    fn = click.option("--api-key-env", default=None, help="Environment variable holding the API key.")(fn)
    fn = endpoint_options(fn)
    help_model = (
        "provider/model (openai/gpt-5.4-mini, anthropic/...), local (the local model), scripted, or offline."
    )
    fn = click.option("--model", "-m", "model_name", required=True, help=help_model)(fn)
    return fn


def call_record(store: Store, **context: Any) -> RunRecord:
    return RunRecord(store.state_dir / CALL_LOG, **context)


def usage_line(model: Model) -> str:
    if model.is_offline:
        return "model: offline (a baseline: no model calls)"
    u = model.usage
    card = price_card(model.name)
    cost = f", ${card.cost(u):.4f}" if card else ""
    return (
        f"model: {model.name}: {u.calls} call(s), {u.input_uncached} uncached + {u.input_cached} cached in, "
        f"{u.output} out ({u.reasoning} reasoning){cost}"
    )
