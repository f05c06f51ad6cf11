"""Models by name, `provider/model` as on the command line: openai/gpt-5.4-mini,
anthropic/claude-sonnet-4-5, scripted, offline."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from memdir.models.base import (
    CallRecord,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelError,
    OfflineModel,
    RetryPolicy,
)


def get_model(
    name: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    config: GenerateConfig | None = None,
    retry: RetryPolicy | None = None,
    script: Iterable[Any] | None = None,
    on_call: Callable[[CallRecord], None] | None = None,
) -> Model:
    """Build a model. Keys are read from the environment variable `api_key_env` only."""
    if name == "offline":
        return OfflineModel()
    provider, _, model_name = name.partition("/")
    api: ModelAPI
    if provider == "scripted":
        from memdir.models.scripted import ScriptedAPI

        api = ScriptedAPI(script or [], model_name or "scripted")
    elif provider == "openai" and model_name:
        from memdir.models.openai import OpenAIAPI

        api = OpenAIAPI(model_name, base_url, api_key_env or "OPENAI_API_KEY")
    elif provider == "anthropic" and model_name:
        from memdir.models.anthropic import AnthropicAPI

        api = AnthropicAPI(model_name, base_url, api_key_env or "ANTHROPIC_API_KEY")
    else:
        raise ModelError(
            f"unknown model {name!r}; use openai/<model> (any OpenAI-compatible server with --base-url), "
            "anthropic/<model>, scripted, or offline"
        )
    return Model(api, name, config, retry, on_call)
