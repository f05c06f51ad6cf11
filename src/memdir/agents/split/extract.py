"""What to write: one constrained model call per chunk, returning the chunk's facts as JSON.

The call has no tools and its reply is held to `schema(chunk)` on every provider that can hold
it (`GenerateConfig.require_schema`: llama.cpp's schema grammar for the local model, structured
output on OpenAI-compatible servers, a forced tool on Anthropic). The reply is keyed by turn:
one property per turn of the chunk, in order (`key`: its locator, speaker and a few of its
words), each the list of facts that turn tells, so a fact's evidence is the turn it is listed
under and its subject the turn's speaker. The model is walked through the turns one by one and
cannot cite a turn it was not shown; a small model given one flat list of facts (the form this
replaced) wrote one fact again under each following turn (conv-26, sessions 1-5: 25 of 74
proposed facts dropped, most of them such repeats) and skipped the turns it should have read.
Each fact opens with its value, a few words copied from the turn, before the labels. The
grammar lives in the request, not the prompt, so the prompt stays the same across chunks.

The prompt is the instructions (the same bytes for every chunk, `prompts/split_extract.md`)
followed by the chunk, last: llama.cpp's server then reuses the cached prefix and pays only for
the chunk's tokens.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from memdir.agents.split.truthful import people_of
from memdir.conventions import TURN
from memdir.fact_quality import FIRST_PERSON, words_of
from memdir.jsontypes import JsonObject
from memdir.models import ChatMessage, GenerateConfig, Model
from memdir.stream import Chunk, Turn
from memdir.words import sentences

KINDS = ("fact", "event", "plan", "preference", "relation")
# Output cap per chunk (8 turns at most, `stream.MAX_TURNS`): room for about 14 facts of 12-word
# values. A runaway reply is cut here, and its facts up to the cut are still read (`parse_facts`).
MAX_OUTPUT = 900
FIELDS = ("value", "subject", "kind", "attribute", "date")
VALUE_WORDS = 12
# One to VALUE_WORDS words, single-spaced, with no quote or backslash (nothing to escape).
VALUE_PATTERN = rf'^[^"\\ ]+( [^"\\ ]+){{0,{VALUE_WORDS - 1}}}$'
FACTS_PER_TURN = 3
PEOPLE = 3  # people a turn relates to its speaker, offered as subjects beside the speaker
_SELF = FIRST_PERSON | frozenset("we we're we've we'd we'll our ours us ourselves".split())  # noqa: SIM905
ANCHOR_WORDS = 6  # of a turn's text, written in its key
_UNESCAPED = re.compile(r'["\\]')  # left out of a key, so that it holds nothing to escape
_LOCATOR = re.compile(rf"^({TURN})(?![\w])")
# A turn's key opening its list, in a cut reply.
_TURN_KEY = re.compile(rf'"({TURN})(?:[^"\\]|\\.)*"\s*:\s*\[')


def instructions() -> str:
    return (
        resources.files("memdir.agents").joinpath("prompts", "split_extract.md").read_text(encoding="utf-8")
    )


def key(turn: Turn) -> str:
    """A turn's key in the reply: its locator, its speaker and six words from where the turn
    first speaks of its speaker (`S5T10 Melanie: Pottery is a huge part of my`): the first
    sentence with an "I", "my" or "we" that does not ask, else the turn's opening. The schema
    forces the key, so the model writes it as drafted text at little cost, and the words it
    then writes are read right after that sentence's own opening. Keyed by the bare locator,
    the 1.5B model drifted from its turn and listed an earlier turn's facts again under each
    later one; keyed by the turn's first words, it copied the greeting or the thanks a turn
    opens with ("Hey Melanie", "really means a lot") (docs/curation.md)."""
    telling = (s for s in sentences(turn.text) if not s.endswith("?") and set(words_of(s)) & _SELF)
    words = _UNESCAPED.sub("", next(telling, turn.text)).split()[:ANCHOR_WORDS]
    return " ".join([turn.locator, f"{_UNESCAPED.sub('', turn.speaker)}:", *words])


def locator_of(key_text: str) -> str:
    """The locator a reply's key names (`key`'s form, or the bare locator)."""
    m = _LOCATOR.match(key_text.strip())
    return m.group(1) if m else key_text


def asks_only(turn: Turn) -> bool:
    """Whether `turn` asks and says nothing of its speaker: a question, and no "I", "my" or
    "we" ("That looks cozy! Where'd you find a place to stay?"). The schema holds such a turn's
    list empty: a small model filled it with the answer the next turn gives, under the wrong
    speaker. The few reference facts that cite only such turns are the price (how many:
    benchmarks/results/2026-12-06-curation-split-local-model.md, "The extraction call")."""
    return "?" in turn.text and not set(words_of(turn.text)) & _SELF


def schema(chunk: Chunk) -> JsonObject:
    """The reply's shape for `chunk`: one property per turn, in the chunk's order, each a list
    of facts whose subject is that turn's speaker or a person the turn relates to them ("my
    sister Maria": `truthful.people_of`); every object closed and every field required (what
    OpenAI's strict mode needs). Held to the speaker alone, "My sister Maria lives in Rome now."
    could only be filed as the speaker's home; validation still takes the subject from the turn."""

    def told(turn: Turn) -> dict[str, Any]:
        fact = {
            "type": "object",
            "properties": {
                "value": {"type": "string", "pattern": VALUE_PATTERN},
                "subject": {"type": "string", "enum": [turn.speaker, *people_of(turn)[:PEOPLE]]},
                "kind": {"type": "string", "enum": list(KINDS)},
                "attribute": {"type": "string"},
                "date": {"type": "string"},
            },
            "required": list(FIELDS),
            "additionalProperties": False,
        }
        return {"type": "array", "items": fact, "maxItems": 0 if asks_only(turn) else FACTS_PER_TURN}

    properties = {key(t): told(t) for t in chunk.turns}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def shown(chunk: Chunk) -> str:
    """The chunk as the model reads it: its day once, in the heading, when all its turns share
    one (a chunk is one session), else on each turn. A day on every turn cost 8 prompt tokens a
    turn, and the 1.5B model copied it into every fact's `date` (11 output tokens a fact)."""
    days = {t.date for t in chunk.turns}
    if len(days) > 1:
        return f"Chat:\n{chunk.render()}"
    day = days.pop()
    undated = "\n".join(replace(t, date=None).render() for t in chunk.turns)
    return f"Chat ({day}):\n{undated}" if day else f"Chat:\n{undated}"


def messages(chunk: Chunk) -> list[ChatMessage]:
    """The stable instructions, then the chunk."""
    return [
        ChatMessage("system", instructions()),
        ChatMessage("user", f"{shown(chunk)}\nIts JSON:"),
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


def _fact(locator: str, obj: Any) -> Proposed | None:
    if not isinstance(obj, dict):
        return None
    text = {k: obj.get(k, "") for k in FIELDS}
    if not all(isinstance(v, str) for v in text.values()):
        return None
    return Proposed((locator,), **{k: str(v).strip() for k, v in text.items()})


def _salvage(text: str) -> list[tuple[str, Any]]:
    """Every complete fact object `raw_decode` reads under a turn's key in a reply that is not
    whole JSON (a reply cut by the output cap keeps its finished facts)."""
    decoder = json.JSONDecoder()
    found: list[tuple[str, Any]] = []
    keys = list(_TURN_KEY.finditer(text))
    for key, after in zip(keys, [*keys[1:], None], strict=False):
        end = after.start() if after is not None else len(text)
        i = text.find("{", key.end(), end)
        while 0 <= i < end:
            try:
                obj, stop = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                break
            found.append((key.group(1), obj))
            i = text.find("{", stop, end)
    return found


def parse_facts(text: str) -> tuple[list[Proposed], int, str | None]:
    """(the facts, how many objects were not facts, why the reply did not parse or None)."""
    start = text.find("{")
    try:
        whole = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and all(isinstance(v, list) for v in whole.values()):
        objs, error = [(locator_of(k), obj) for k, told in whole.items() for obj in told], None
    else:
        objs = _salvage(text)
        error = None if objs else f'the reply is not {{"S1T1": [...], ...}}: {text[:200]!r}'
    facts = [f for f in (_fact(loc, obj) for loc, obj in objs) if f is not None]
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
