"""Models by name, `provider/model` as on the command line: openai/gpt-5.4-mini,
anthropic/claude-sonnet-4-5, local (the local model, `local/qwen2.5-coder-1.5b`), scripted, offline."""

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
from memdir.models.protocols import check_protocol


def get_model(
    name: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    config: GenerateConfig | None = None,
    retry: RetryPolicy | None = None,
    script: Iterable[Any] | None = None,
    on_call: Callable[[CallRecord], None] | None = None,
    tool_protocol: str | None = None,
) -> Model:
    """Build a model. Keys are read from the environment variable `api_key_env` only.

    `tool_protocol` (native, text, json-schema) overrides the provider's default for
    OpenAI-compatible servers and the local model.
    """
    if name == "offline":
        return OfflineModel()
    provider, _, model_name = name.partition("/")
    protocol = check_protocol(tool_protocol) if tool_protocol else None
    api: ModelAPI
    if provider == "local":
        from memdir.models.local import local_spec
        from memdir.models.local_api import LocalAPI

        # Built even where the weights are absent: readiness is `check_ready`'s question, asked
        # before a run, so naming the model (a test, a default) needs no install.
        api = LocalAPI(local_spec(name), base_url, protocol)
        spec = api.spec
        name = f"local/{spec.alias}"
        # Greedy and seeded unless asked otherwise: a 1.5B model keeps its call format best at 0.
        config = config or GenerateConfig(temperature=0.0, seed=42)
    elif provider == "scripted":
        from memdir.models.scripted import ScriptedAPI

        api = ScriptedAPI(script or [], model_name or "scripted")
    elif provider == "openai" and model_name:
        from memdir.models.openai import OpenAIAPI

        api = OpenAIAPI(
            model_name, base_url, api_key_env or "OPENAI_API_KEY", tool_protocol=protocol or "native"
        )
    elif provider == "anthropic" and model_name:
        from memdir.models.anthropic import AnthropicAPI

        api = AnthropicAPI(model_name, base_url, api_key_env or "ANTHROPIC_API_KEY")
    else:
        raise ModelError(
            f"unknown model {name!r}; use openai/<model> (any OpenAI-compatible server with --base-url), "
            "anthropic/<model>, local (the local model), scripted, or offline"
        )
    return Model(api, name, config, retry, on_call)
