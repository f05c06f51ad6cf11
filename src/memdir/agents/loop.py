"""The tool loop: a model, a role and a harness, round after round until the model answers.

One round = one model call plus the tool calls it asked for. The loop enforces the role's
round cap and output cap, compacts the context when the prompt passes the role's threshold (or
half a small model's context window; older rounds replaced by a running summary, the 3 most
recent kept), stops a model that repeats the same calls with the same results (or inserts the
same text again), and appends every model call (its reply text and parsed calls included),
compaction and the episode's totals to the run record. Messages are only ever appended between
compactions, so each round's prompt extends the previous one and a server's prefix cache can
serve it.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Unpack

from memdir.agents.record import RecordIds, RunRecord
from memdir.agents.roles import Role
from memdir.jsontypes import JsonObject
from memdir.models import (
    Bounds,
    ChatMessage,
    GenerateConfig,
    Model,
    ModelError,
    ModelOutput,
    ToolInfo,
    Usage,
    episode_bounds,
    price_card,
)
from memdir.models.base import ToolCall, call_dicts, reply_text
from memdir.store.boundary import fence, neutralise
from memdir.tokens import count_tokens
from memdir.tools.base import MeterRecord
from memdir.tools.profiles import BUILDERS_ONLY, Harness

_MeterKey = Literal["calls", "bytes_returned", "bytes_read", "writes", "files_touched"]

KEEP_RECENT = 3
# The final answer of answering roles (prompts/_answer_format.md), for protocols that constrain output.
ANSWER_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "citations": {"type": "array", "items": {"type": "string"}}},
    "required": ["answer", "citations"],
}
SUMMARY_OUTPUT = 4_096
# Rounds in a row whose calls and results equal the round before: at this many the episode stops.
REPEAT_LIMIT = 2
REPEAT_NOTE = (
    "\n\nNote: this call repeats your previous one (the same call with the same result, or the same "
    "text inserted into the same file again). Do not repeat it: use the result above, make a "
    "different call, or finish."
)
_CLIP_ARGS = 2_000
_CLIP_RESULT = 4_000

SUMMARIZER = (
    "You keep the running summary of an agent's work so it can continue after its older turns are "
    "dropped from its context. Merge the previous summary with the turns below into one summary: what "
    "the task is, what has been done (files created, edited, read; facts found, with paths and line "
    "numbers), what remains. Be complete about facts and paths; be brief about everything else."
)


@dataclass
class Episode:
    """What one run of the loop did and cost."""

    final: str
    messages: list[ChatMessage]
    rounds: int = 0
    tool_calls: int = 0
    stop: str = "answer"  # answer | round_cap | max_tokens | repeated_calls
    stop_reason: str | None = None  # said in words when the loop, not the model, ended the episode
    usage: Usage = field(default_factory=Usage)
    round_usage: list[Usage] = field(default_factory=list)
    compactions: int = 0
    seconds: float = 0.0
    writes: int = 0  # file-level changes the episode's tool calls made
    files_opened: int = 0  # distinct files whose content a call returned (view, grep hit, section)

    @property
    def bounds(self) -> Bounds:
        return episode_bounds(self.round_usage)


def shown_result(text: str, is_error: bool) -> str:
    """A tool's result as the model is shown it: inside the data boundary (store/boundary.py),
    since what a tool returns is the store's text. An error is memdir's own words to the model,
    what to do next, so it is not fenced as data, only neutralised (it may quote a stored line)."""
    return neutralise(text) if is_error else fence(text, "tool_result")


def tool_infos(harness: Harness | None) -> list[ToolInfo]:
    """The tools a role's model is shown: the base schemas and descriptions, without memdir's
    extension parameters (expected_sha256, show_sha256) or convention notes (the role prompts
    teach the conventions themselves, one way). A role is the only writer of its store, and a
    small model shown a hash parameter would invent one and refuse its own writes. Nor the
    builders' own tools (`profiles.BUILDERS_ONLY`: `forget`)."""
    if harness is None:
        return []
    return [
        ToolInfo(s.name, s.description, s.input_schema(extensions=False))
        for s in harness.specs.values()
        if s.name not in BUILDERS_ONLY
    ]


def _message_tokens(m: ChatMessage) -> int:
    text = m.content + "".join(json.dumps(c.arguments, ensure_ascii=False) + c.name for c in m.tool_calls)
    return count_tokens(text) + 4  # a few tokens of per-message framing


class _TokenCache:
    def __init__(self) -> None:
        self._seen: dict[int, tuple[ChatMessage, int]] = {}

    def total(self, messages: list[ChatMessage]) -> int:
        n = 0
        for m in messages:
            hit = self._seen.get(id(m))
            if hit is None or hit[0] is not m:
                hit = (m, _message_tokens(m))
                self._seen[id(m)] = hit
            n += hit[1]
        return n


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" …[{len(text) - limit} more characters]"


def _transcript(messages: list[ChatMessage]) -> str:
    lines: list[str] = []
    for m in messages:
        if m.role == "assistant":
            if m.content:
                lines.append(f"ASSISTANT: {m.content}")
            for c in m.tool_calls:
                lines.append(
                    f"TOOL CALL {c.name} {_clip(json.dumps(c.arguments, ensure_ascii=False), _CLIP_ARGS)}"
                )
        elif m.role == "tool":
            lines.append(f"TOOL RESULT ({m.tool_name}): {_clip(m.content, _CLIP_RESULT)}")
        else:
            lines.append(f"{m.role.upper()}: {m.content}")
    return "\n".join(lines)


class Loop:
    """One episode of one role. Use :func:`run_loop`; the class only keeps the state together."""

    def __init__(
        self, model: Model, harness: Harness | None, role: Role, record: RunRecord | None, ids: RecordIds
    ) -> None:
        self.model = model
        self.harness = harness if role.profile is not None else None
        cap = model.api.round_cap
        self.role = role if cap is None or cap >= role.round_cap else replace(role, round_cap=cap)
        self.record = record
        self.ids = {k: v for k, v in ids.items() if v is not None}
        self.tools = tool_infos(self.harness)
        self.config = GenerateConfig(max_tokens=role.output_cap, temperature=role.temperature)
        window = model.api.context_window
        self.compact_at = min(role.compact_at, window // 2) if window and role.compact_at else role.compact_at
        self.tokens = _TokenCache()
        self.summary = ""
        self.last_summary_usage = Usage()
        self._last_round = ""
        self._repeat_run = 0
        self._seen: dict[str, int] = {}

    def _log(self, kind: str, **fields: Any) -> None:
        if self.record is not None:
            self.record.write(kind, role=self.role.name, **self.ids, **fields)

    async def _call_tools(self, out: ModelOutput) -> tuple[list[ChatMessage], list[dict[str, Any]]]:
        replies: list[ChatMessage] = []
        sizes: list[dict[str, Any]] = []
        for call in out.message.tool_calls:
            start = time.perf_counter()
            if call.parse_error is not None:
                text, is_error = (
                    f"Error: {call.name}: {call.parse_error}; send the arguments as a JSON object",
                    True,
                )
            elif self.harness is None:
                text, is_error = "Error: no tools are available in this role; answer directly", True
            else:
                res = await asyncio.to_thread(self.harness.call, call.name, call.arguments)
                text, is_error = res.text, res.is_error
            text = shown_result(text, is_error)
            replies.append(
                ChatMessage("tool", text, tool_call_id=call.id, tool_name=call.name, is_error=is_error)
            )
            sizes.append(
                {"name": call.name, "bytes": len(text.encode("utf-8")), "is_error": is_error,
                 "seconds": round(time.perf_counter() - start, 6)}
            )  # fmt: skip
        return replies, sizes

    async def _compact(self, messages: list[ChatMessage], task: ChatMessage) -> list[ChatMessage]:
        starts = [i for i, m in enumerate(messages) if m.role == "assistant"]
        if len(starts) <= KEEP_RECENT:
            return messages
        cut = starts[-KEEP_RECENT]
        dropped = messages[2:cut]
        before = self.tokens.total(messages)
        prompt = (f"Previous summary:\n{self.summary}\n\n" if self.summary else "") + (
            f"Task:\n{_clip(task.content, _CLIP_RESULT)}\n\nTurns to fold in:\n{_transcript(dropped)}"
        )
        out = await self.model.generate(
            [ChatMessage("system", SUMMARIZER), ChatMessage("user", prompt)],
            [],
            GenerateConfig(max_tokens=min(SUMMARY_OUTPUT, self.role.output_cap)),
        )
        self.summary = out.message.content.strip()
        self.last_summary_usage = out.usage
        note = ChatMessage(
            "user",
            f"{task.content}\n\n<summary_of_earlier_work>\nYour older turns were dropped to save context; "
            f"this is what they did:\n{self.summary}\n</summary_of_earlier_work>",
        )
        kept = [messages[0], note, *messages[cut:]]
        self._log(
            "compaction",
            model=self.model.name,
            usage=out.usage.as_dict(),
            tokens_before=before,
            tokens_after=self.tokens.total(kept),
            dropped_turns=len(starts) - KEEP_RECENT,
            kept_turns=KEEP_RECENT,
            seconds=round(out.usage.seconds, 6),
        )
        return kept

    async def run(self, system: str, user: str, prior: list[ChatMessage] | None = None) -> Episode:
        start = time.perf_counter()
        task = ChatMessage("user", user)
        # A continuation (`prior`: an episode's messages) keeps the earlier prompt as its prefix,
        # so the server's prompt cache serves it; otherwise the system prompt and the task.
        messages: list[ChatMessage] = [*prior, task] if prior else [ChatMessage("system", system), task]
        ep = Episode(final="", messages=messages)
        meter_before = self.harness.meter.as_dict() if self.harness else None
        while True:
            if self.compact_at and self.tokens.total(messages) > self.compact_at:
                compacted = await self._compact(messages, task)
                if compacted is not messages:
                    ep.compactions += 1
                    ep.usage = ep.usage + self.last_summary_usage  # metered, but not a round of the bounds
                    messages = compacted
            # the first round's prompt as sent (its messages; the tool schemas are the profile's,
            # the same for every question): eval's `search.prompt_kb`
            first = sum(len(m.content.encode("utf-8")) for m in messages) if ep.rounds == 0 else None
            out = await self.model.generate(messages, self.tools, self._round_config(ep.rounds + 1))
            ep.rounds += 1
            ep.usage = ep.usage + out.usage
            ep.round_usage.append(out.usage)
            messages.append(out.message)
            capped = ep.rounds >= self.role.round_cap
            replies, sizes = ([], []) if capped and self.harness is None else await self._call_tools(out)
            repeated = self._repeats(out.message, replies)
            if repeated and replies:
                replies[-1] = replace(replies[-1], content=replies[-1].content + REPEAT_NOTE)
            messages.extend(replies)
            ep.tool_calls += len(out.message.tool_calls)
            self._log(
                "model_call",
                round=ep.rounds,
                model=self.model.name,
                protocol=self.model.api.tool_protocol,
                usage=out.usage.as_dict(),
                stop_reason=out.stop_reason,
                reply=reply_text(out.message),
                tool_calls=len(out.message.tool_calls),
                calls=call_dicts(out.message.tool_calls),
                repeated=repeated or None,
                results=sizes,
                seconds=round(out.usage.seconds, 6),
                attempts=self.model.calls[-1].attempts if self.model.calls else 1,
                prompt_tokens_counted=self.tokens.total(messages[: -1 - len(replies)]),
                prompt_bytes=first,
            )
            if not out.message.tool_calls:
                ep.final = out.message.content
                ep.stop = "max_tokens" if out.stop_reason == "max_tokens" else "answer"
                break
            if capped or repeated >= REPEAT_LIMIT:
                if capped:
                    ep.stop = "round_cap"
                else:
                    ep.stop = "repeated_calls"
                    ep.stop_reason = (
                        f"the model made the same call(s) {repeated + 1} times "
                        f"({', '.join(c.name for c in out.message.tool_calls)}); stopped without progress"
                    )
                ep.final = out.message.content
                if self.role.answers and self.harness is not None:
                    ep.final = await self._final_answer(messages, ep)
                break
        ep.messages = messages
        ep.seconds = time.perf_counter() - start
        self._episode_summary(ep, meter_before)
        return ep

    def _round_config(self, round_no: int) -> GenerateConfig:
        """The call's settings: a structured answer for answering roles, and on a model that
        answers before looking (`require_first_call`) a tool call required in round 1."""
        config = self.config
        if self.tools and self.role.answers:
            config = replace(config, answer_schema=ANSWER_SCHEMA)
        if self.tools and round_no == 1 and self.model.api.require_first_call:
            config = replace(config, tool_choice="required")
        return config

    def _repeats(self, message: ChatMessage, replies: list[ChatMessage]) -> int:
        """How many rounds in a row (this one included) repeated the round before, call for call."""
        key = json.dumps(
            [_call_key(c, r) for c, r in zip(message.tool_calls, replies, strict=False)],
            ensure_ascii=False, sort_keys=True, default=str,
        )  # fmt: skip
        if not message.tool_calls:
            self._last_round, self._repeat_run = key, 0
            return 0
        self._seen[key] = self._seen.get(key, 0) + 1
        if key != self._last_round:
            self._last_round, self._repeat_run = key, 0
            # a cycle (A, B, A, B, ...) repeats as surely as A, A: its third sighting counts too
            return REPEAT_LIMIT if self._seen[key] > REPEAT_LIMIT else 0
        self._repeat_run += 1
        return self._repeat_run

    async def _final_answer(self, messages: list[ChatMessage], ep: Episode) -> str:
        """At the round cap (or when stopped for repeating) an answering role gets one last call
        to answer from what it has read."""
        why = (
            f"You have used all {self.role.round_cap} tool rounds."
            if ep.stop == "round_cap"
            else "You are repeating the same call."
        )
        messages.append(
            ChatMessage(
                "user",
                f"{why} Do not call any more tools: give your final answer now, from what you have read, "
                "in the required format.",
            )
        )
        # the tools stay in the request (the prompt prefix, and so the cache, stays the same);
        # tool_choice "none" is how a server that constrains output is told to answer
        config = replace(self._round_config(ep.rounds + 1), tool_choice="none")
        out = await self.model.generate(messages, self.tools, config)
        messages.append(out.message)
        ep.usage = ep.usage + out.usage
        ep.round_usage.append(out.usage)
        self._log(
            "model_call",
            round=ep.rounds + 1,
            final_answer_call=True,
            model=self.model.name,
            usage=out.usage.as_dict(),
            stop_reason=out.stop_reason,
            reply=reply_text(out.message),
            tool_calls=0,
            calls=call_dicts(out.message.tool_calls),
            ignored_tool_calls=len(out.message.tool_calls),
            results=[],
            seconds=round(out.usage.seconds, 6),
        )
        return out.message.content

    def _episode_summary(self, ep: Episode, meter_before: MeterRecord | None) -> None:
        harness_meter = None
        if self.harness is not None and meter_before is not None:
            after = self.harness.meter.as_dict()
            keys: tuple[_MeterKey, ...] = ("calls", "bytes_returned", "bytes_read", "writes", "files_touched")
            harness_meter = {k: after[k] - meter_before[k] for k in keys}
            ep.writes, ep.files_opened = harness_meter["writes"], harness_meter["files_touched"]
        card = price_card(self.model.name)
        writer = self.harness is not None and not self.harness.read_only
        self._log(
            "episode",
            model=self.model.name,
            protocol=self.model.api.tool_protocol,
            rounds=ep.rounds,
            tool_calls=ep.tool_calls,
            stop=ep.stop,
            stop_reason=ep.stop_reason,
            # No silent no-ops: a writing episode that changed nothing, an answer that read nothing.
            wrote_nothing=(ep.writes == 0) if writer else None,
            opened_nothing=(ep.files_opened == 0) if self.harness is not None and not writer else None,
            compactions=ep.compactions,
            usage=ep.usage.as_dict(),
            cost_usd=round(card.cost(ep.usage), 8) if card else None,
            bounds=ep.bounds.as_dict(),
            harness=harness_meter,
            seconds=round(ep.seconds, 6),
        )


async def run_loop(
    model: Model,
    harness: Harness | None,
    role: Role,
    system: str,
    user: str,
    *,
    record: RunRecord | None = None,
    prior: list[ChatMessage] | None = None,
    **ids: Unpack[RecordIds],
) -> Episode:
    """Run one episode of `role`: `ids` (variant, chunk, question, task) go into every record line.
    With `prior` (an earlier episode's messages), `user` continues that conversation instead.

    A model failure (after the wrapper's retries) is logged as an `error` line and re-raised:
    the caller aborts the whole cell rather than report it partially.
    """
    loop = Loop(model, harness, role, record, ids)
    try:
        return await loop.run(system, user, prior)
    except ModelError as exc:
        loop._log("error", model=model.name, error=str(exc))
        raise


def _call_key(call: ToolCall, reply: ChatMessage) -> list[Any]:
    """What makes two calls the same call: name, arguments and result; for `insert`, the file and
    the text alone. The local 1.5B model, curating conv-50, inserted one line into `MEMORY.md`
    at line 35, 36, 37 ... to the round cap: each call and result named a new line, so no round
    equalled the one before, yet every one wrote the same text again."""
    if call.name == "insert" and isinstance(call.arguments, dict):
        return [call.name, call.arguments.get("path"), call.arguments.get("insert_text")]
    return [call.name, call.arguments, reply.content]
