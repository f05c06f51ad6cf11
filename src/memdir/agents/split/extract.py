"""What to write: one constrained model call per chunk, returning the chunk's facts as JSON.

The call has no tools and its reply is held to `schema(chunk)` on every provider that can hold
it (`GenerateConfig.require_schema`: llama.cpp's schema grammar for the local model, structured
output on OpenAI-compatible servers, a forced tool on Anthropic). The schema's `evidence` is an
enum of the chunk's own locators, so a small model cannot cite a turn it was not shown; the
grammar lives in the request, not the prompt, so the prompt stays the same across chunks.

The prompt is the instructions (the same bytes for every chunk, `prompts/split_extract.md`)
followed by the chunk, last: llama.cpp's server then reuses the cached prefix and pays only for
the chunk's tokens (about 12 ms each on 2 cores). Each property is generated in schema order,
`evidence` first, so the model names the turn before it copies a value out of it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from memdir.models import ChatMessage, GenerateConfig, Model
from memdir.stream import Chunk

KINDS = ("fact", "event", "plan", "preference", "relation")
# Output cap per chunk (8 turns at most, `stream.MAX_TURNS`): room for about 16 facts. A runaway
# reply is cut here, and its facts up to the cut are still read (`parse_facts`).
MAX_OUTPUT = 900
FIELDS = ("evidence", "subject", "kind", "attribute", "value", "date")


def instructions() -> str:
    return (
        resources.files("memdir.agents").joinpath("prompts", "split_extract.md").read_text(encoding="utf-8")
    )


def schema(chunk: Chunk) -> dict[str, Any]:
    """The reply's shape for `chunk`: every object closed and every field required (what
    OpenAI's strict mode needs), evidence limited to the chunk's locators."""
    fact = {
        "type": "object",
        "properties": {
            "evidence": {
                "type": "array",
                "items": {"type": "string", "enum": list(chunk.locators)},
                "minItems": 1,
                "maxItems": 3,
            },
            "subject": {"type": "string"},
            "kind": {"type": "string", "enum": list(KINDS)},
            "attribute": {"type": "string"},
            "value": {"type": "string"},
            "date": {"type": "string"},
        },
        "required": list(FIELDS),
        "additionalProperties": False,
    }
    facts = {"type": "array", "items": fact, "maxItems": 2 * len(chunk.turns) + 2}
    return {
        "type": "object",
        "properties": {"facts": facts},
        "required": ["facts"],
        "additionalProperties": False,
    }


def messages(chunk: Chunk) -> list[ChatMessage]:
    """The stable instructions, then the chunk."""
    return [
        ChatMessage("system", instructions()),
        ChatMessage("user", f"Chat:\n{chunk.render()}\nIts JSON:"),
    ]


@dataclass(frozen=True)
class Proposed:
    """One fact as the model proposed it, fields as strings (not yet validated)."""

    evidence: tuple[str, ...]
    subject: str
    kind: str
    attribute: str
    value: str
    date: str


@dataclass
class Extraction:
    facts: list[Proposed] = field(default_factory=list)
    reply: str = ""
    malformed: int = 0  # objects in the reply that are not a fact of the schema's shape
    error: str | None = None  # the reply as a whole did not parse
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0  # of tokens_in, read from the server's prefix cache
    seconds: float = 0.0


def _fact(obj: Any) -> Proposed | None:
    if not isinstance(obj, dict):
        return None
    ev = obj.get("evidence")
    if isinstance(ev, str):
        ev = [ev]
    if not isinstance(ev, list) or not all(isinstance(e, str) for e in ev):
        return None
    text = {k: obj.get(k, "") for k in FIELDS[1:]}
    if not all(isinstance(v, str) for v in text.values()):
        return None
    return Proposed(tuple(e.strip() for e in ev), **{k: str(v).strip() for k, v in text.items()})


def _salvage(text: str) -> list[Any]:
    """Every complete fact object `raw_decode` reads in a reply that is not whole JSON (a reply
    cut by the output cap keeps its finished facts)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    i = text.find("{")
    while i >= 0:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict) and "value" in obj:
            found.append(obj)
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    return found


def parse_facts(text: str) -> tuple[list[Proposed], int, str | None]:
    """(the facts, how many objects were not facts, why the reply did not parse or None)."""
    start = text.find("{")
    try:
        whole = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("facts"), list):
        objs, error = list(whole["facts"]), None
    else:
        objs = _salvage(text)
        error = None if objs else f'the reply is not {{"facts": [...]}}: {text[:200]!r}'
    facts = [f for f in map(_fact, objs) if f is not None]
    return facts, len(objs) - len(facts), error


async def extract(model: Model, chunk: Chunk) -> Extraction:
    """One model call: the chunk's proposed facts, with the call's cost."""
    config = GenerateConfig(
        answer_schema=schema(chunk), require_schema=True, max_tokens=MAX_OUTPUT, temperature=0.0
    )
    start = time.perf_counter()
    out = await model.generate(messages(chunk), [], config)
    reply = out.message.content
    facts, malformed, error = parse_facts(reply)
    return Extraction(
        facts,
        reply,
        malformed,
        error,
        calls=1,
        tokens_in=out.usage.input_uncached + out.usage.input_cached,
        tokens_out=out.usage.output,
        tokens_cached=out.usage.input_cached,
        seconds=time.perf_counter() - start,
    )
