"""The options that say where a model is served and how tools reach it, shared by every command
that takes a model (ingest, ask, eval, skills)."""

from __future__ import annotations

from typing import Any

import click

from memdir.models.protocols import PROTOCOLS


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


def build_models(
    names: list[str | None], base_url: str | None, tool_protocol: str | None, round_cap: int | None = None
) -> dict[str, Any]:
    """Every model named (offline aside), built once, so a missing key or local model fails first."""
    from memdir.models import ModelError, get_model

    models: dict[str, Any] = {}
    for name in names:
        if not name or name in models or name.startswith("offline"):
            continue
        try:
            models[name] = get_model(name, base_url=base_url, tool_protocol=tool_protocol)
            models[name].api.round_cap = round_cap
        except ModelError as exc:
            raise click.ClickException(str(exc)) from None
    return models
