"""Model providers and their accounting. Stands alone: imports nothing of memdir but `tokens`."""

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
