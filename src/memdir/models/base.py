"""The provider interface and the one wrapper that owns retries, usage and the call log.

Messages, tool calls and outputs are neutral dataclasses; each provider converts them to its
wire format in pure functions. A provider implements only `generate`; everything that must
behave the same across providers (backoff on rate limits and 5xx, usage totals, the log of
calls) lives in :class:`Model`.
"""

from __future__ import annotations

import asyncio
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NotRequired, TypedDict

from memdir.jsontypes import JsonObject
from memdir.models.usage import Usage, UsageRecord

Role = Literal["system", "user", "assistant", "tool"]
# The reasoning-effort levels a provider takes (OpenAI's `reasoning_effort`; Anthropic's
# thinking budget by level, models/anthropic.py).
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
StopReason = Literal["stop", "tool_calls", "max_tokens", "other"]


class ModelError(RuntimeError):
    """A model call that failed for good (after retries, or not retryable): the run stops."""


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: JsonObject  # as the model sent them (a tool's ToolArgs)
    parse_error: str | None = None


@dataclass
class ChatMessage:
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    reasoning: str | None = None
    # Provider blocks that must be sent back verbatim (Anthropic thinking signatures).
    raw_blocks: list[JsonObject] | None = None
    # The reply exactly as the model wrote it, when its tool calls were parsed out of the text
    # (models/protocols.py): sent back verbatim so the server's prefix cache keeps matching.
    raw_text: str | None = None


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    parameters: JsonObject


@dataclass(frozen=True)
class GenerateConfig:
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    reasoning_effort: str | None = None
    timeout: float | None = None  # seconds per attempt; None = 600
    cache: bool | None = None  # ask for prompt caching where the API needs asking; None = yes
    # "required": this call must be a tool call (OpenAI's tool_choice; the json-schema protocol
    # leaves the final reply out of the schema); "none": it must not be one (the json-schema
    # protocol leaves the calls out). None: the model chooses.
    tool_choice: str | None = None
    # The shape of a final answer, for protocols that constrain output (json-schema).
    answer_schema: JsonObject | None = None
    # True: a tool-less reply must match `answer_schema` on every provider, not only under the
    # json-schema protocol (OpenAI structured output; a forced tool on Anthropic). Split
    # curation's extraction call asks it; a judge, which also parses free text, does not.
    require_schema: bool | None = None

    def merge(self, other: GenerateConfig | None) -> GenerateConfig:
        """`other`'s set fields over ours."""
        if other is None:
            return self
        return replace(self, **{k: v for k, v in other.__dict__.items() if v is not None})


@dataclass
class ModelOutput:
    message: ChatMessage
    stop_reason: StopReason
    usage: Usage
    model: str = ""
    id: str = ""


class ModelAPI(ABC):
    """One provider. `generate` makes exactly one attempt; the wrapper decides about retries.

    `tool_protocol` says how tools reach the model (models/protocols.py; None where the API has
    only one way); `context_window` is the prompt budget in tokens where the server has a small
    one (a local model), so the loop can compact before the server refuses; `round_cap`, when
    set (eval and skills `--round-cap`), lowers every role's round cap for a model too slow to
    run the roles' own (a small local model at 80 reorganization rounds per pass), and is
    recorded in the run manifest.
    """

    tool_protocol: str | None = None
    context_window: int | None = None
    round_cap: int | None = None
    # Measured for small local models: without it they answer before looking (the loop then
    # requires a tool call in an episode's first round).
    require_first_call: bool = False

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name

    @abstractmethod
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput: ...

    def check_ready(self) -> None:
        """Raise ModelError, saying what to do, when a call could not even be made (no key in the
        environment, a model not installed): checked before a long run starts. Most providers
        have nothing to check."""
        return None

    def takes_reasoning_effort(self) -> bool:
        """Whether this model is sent `GenerateConfig.reasoning_effort` (a per-role
        setting, docs/study.md, Configuration of record (Table 11)). A server that has no such
        control refuses a call that names one, so elsewhere the effort is left out, and the run
        manifest says which models it reached."""
        return False

    def is_retryable(self, exc: BaseException) -> bool:
        return isinstance(exc, TimeoutError | ConnectionError)

    def retry_after(self, exc: BaseException) -> float | None:
        """Seconds the server asked us to wait, when it said so."""
        return None


class LoggedCall(TypedDict):
    """A tool call as the run records keep it: its name, its arguments, why they did not parse."""

    name: str
    args: JsonObject
    parse_error: NotRequired[str]


class CallLine(TypedDict):
    """A completed call as a run record's `model_call` line carries it."""

    model: str
    usage: UsageRecord
    stop_reason: str
    seconds: float
    attempts: int
    tool_calls: list[LoggedCall]
    reply: str
    protocol: str | None


@dataclass
class CallRecord:
    """One completed call as the wrapper saw it; never holds request headers or keys."""

    model: str
    usage: Usage
    stop_reason: str
    seconds: float
    attempts: int
    tool_calls: list[LoggedCall]
    reply: str = ""  # the reply's text as the model wrote it (calls written as text included)
    protocol: str | None = None

    def as_dict(self) -> CallLine:
        return {
            "model": self.model,
            "usage": self.usage.as_dict(),
            "stop_reason": self.stop_reason,
            "seconds": round(self.seconds, 6),
            "attempts": self.attempts,
            "tool_calls": self.tool_calls,
            "reply": self.reply,
            "protocol": self.protocol,
        }


def call_dicts(calls: list[ToolCall]) -> list[LoggedCall]:
    """Tool calls as the logs keep them: name, arguments, and why they did not parse."""
    out: list[LoggedCall] = []
    for c in calls:
        logged = LoggedCall(name=c.name, args=c.arguments)
        if c.parse_error:
            logged["parse_error"] = c.parse_error
        out.append(logged)
    return out


def reply_text(m: ChatMessage) -> str:
    return m.raw_text if m.raw_text is not None else m.content


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    initial_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.25

    def delay(self, attempt: int, hinted: float | None) -> float:
        base: float = min(self.max_delay, self.initial_delay * 2.0 ** (attempt - 1))
        base *= 1 + random.uniform(-self.jitter, self.jitter)
        if hinted is not None:
            base = max(base, min(hinted, self.max_delay))
        return max(0.0, base)


class Model:
    """A provider plus what every run needs around it: retries, usage totals, a call log."""

    def __init__(
        self,
        api: ModelAPI,
        name: str,
        config: GenerateConfig | None = None,
        retry: RetryPolicy | None = None,
        on_call: Callable[[CallRecord], None] | None = None,
    ) -> None:
        self.api = api
        self.name = name
        self.config = config or GenerateConfig()
        self.retry = retry or RetryPolicy()
        self.usage = Usage()
        self.calls: list[CallRecord] = []
        self.on_call = on_call

    @property
    def is_offline(self) -> bool:
        return False

    def with_settings(self, **changes: Any) -> Model:
        """This model as one role plays it, under other `GenerateConfig` settings (a role's
        reasoning effort, the judge's temperature): the same provider client and retries, its
        calls and usage counted on this model too, so this model's totals stay the run's. Itself
        when nothing changes."""
        cfg = replace(self.config, **changes)
        if cfg == self.config:
            return self

        def counted(call: CallRecord) -> None:
            self.usage = self.usage + call.usage
            self.calls.append(call)
            if self.on_call is not None:
                self.on_call(call)

        return Model(self.api, self.name, cfg, self.retry, counted)

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo] | None = None,
        config: GenerateConfig | None = None,
    ) -> ModelOutput:
        cfg = self.config.merge(config)
        if cfg.reasoning_effort is not None and not self.api.takes_reasoning_effort():
            cfg = replace(cfg, reasoning_effort=None)
        attempt = 0
        start = time.perf_counter()
        while True:
            attempt += 1
            try:
                out = await asyncio.wait_for(
                    self.api.generate(messages, tools or [], cfg), cfg.timeout or 600.0
                )
                break
            except Exception as exc:
                retryable = self.api.is_retryable(exc) or isinstance(exc, TimeoutError)
                if not retryable or attempt > self.retry.max_retries:
                    tries = f"after {attempt} attempt(s)" if retryable else "(not retryable)"
                    raise ModelError(
                        f"{self.name}: call failed {tries}: {type(exc).__name__}: {exc}"
                    ) from exc
                await asyncio.sleep(self.retry.delay(attempt, self.api.retry_after(exc)))
        seconds = time.perf_counter() - start
        usage = replace(out.usage, calls=1, seconds=seconds)
        out.usage = usage
        self.usage = self.usage + usage
        record = CallRecord(
            self.name,
            usage,
            out.stop_reason,
            seconds,
            attempt,
            call_dicts(out.message.tool_calls),
            reply_text(out.message),
            self.api.tool_protocol,
        )
        self.calls.append(record)
        if self.on_call is not None:
            self.on_call(record)
        return out


class OfflineModel(Model):
    """The name `offline`: no provider at all; the agents layer plays its roles with policies."""

    def __init__(self) -> None:
        super().__init__(_NoAPI("offline"), "offline")

    @property
    def is_offline(self) -> bool:
        return True


class _NoAPI(ModelAPI):
    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        raise ModelError(
            "the 'offline' model makes no calls; its roles are played by the offline baseline "
            "policies (memdir.agents.offline), which the role runners select for you"
        )
