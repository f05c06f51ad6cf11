"""PersonaMem (Jiang et al., 2025): multiple-choice questions over a long user-chatbot history.

A sample id `pm_<tier>_<persona>_<ctx8>_e<end>` names the tier (`32k`, `128k`), the persona,
the first 8 hex digits of the shared-context id and the terminal message index: the stream is
the first `end` messages of that shared context (system persona message included, as upstream
slices `context[:end]`), and the questions are every row of `questions_<tier>.csv` with that
persona, context and end index.

`shared_contexts_<tier>.jsonl` holds one `{"<context id>": [message, ...]}` object per line,
messages OpenAI-style `{"role", "content"}` whose content carries a speaker prefix ("User:",
"Patient:", ...). Upstream concatenates topic *blocks* without a marker, so blocks are inferred:
a new block starts at every system message after the first and wherever the user-side speaker
prefix changes (say "Patient:" to "User:"). That inference is unverified against the real files,
which are not available here. Locators are `B<block>M<message>` with the message counted over
the whole context from 1 (the persona message is B1M1), so a locator names the same message
whatever the block inference says. A trailing `(MM/DD/YYYY)`, which upstream appends from its
side notes, becomes the turn's date.

Questions carry their four options; gold is the option letter, e.g. `(c)`. There are no
evidence ids upstream.
"""

from __future__ import annotations

import ast
import csv
import json
import re
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memdir.jsontypes import JsonValue, array, obj
from memdir.stream import Turn
from memdir_study.bench.data import PERSONAMEM_URL, DataUnavailable, UnknownSample, locate
from memdir_study.bench.types import Question, Sample

SAMPLES = (
    "pm_32k_18_246eaab7_e185",
    "pm_32k_19_4b3812ac_e152",
    "pm_32k_19_947ec42f_e152",
    "pm_128k_18_43642c89_e784",
)
DEFAULT = SAMPLES[0]
HF_DATASET = "bowen-upenn/PersonaMem"
_ID = re.compile(r"^pm_(?P<tier>32k|128k|1M)_(?P<persona>\d+)_(?P<prefix>[0-9a-f]{4,64})_e(?P<end>\d+)$")
_PREFIX = re.compile(r"^\s*\[?([A-Z][A-Za-z_ ]{0,24})\]?:\s*")
_DATE = re.compile(r"\((\d{2})/(\d{2})/(\d{4})\)\s*$")


class PersonaMemMissing(DataUnavailable):
    """A PersonaMem file (questions or shared contexts) is not available."""


def parse_id(sample_id: str) -> tuple[str, int, str, int]:
    m = _ID.match(sample_id)
    if not m:
        raise UnknownSample(
            f"{sample_id!r} is not a PersonaMem sample id; the form is pm_<tier>_<persona>_<ctx8>_e<end>, "
            f"e.g. {DEFAULT}"
        )
    return m.group("tier"), int(m.group("persona")), m.group("prefix"), int(m.group("end"))


def _file(tier: str, kind: str) -> Path:
    name = f"questions_{tier}.csv" if kind == "questions" else f"shared_contexts_{tier}.jsonl"
    try:
        return locate(f"personamem/{name}", PERSONAMEM_URL.format(name=name), source=f"HF {HF_DATASET}")
    except DataUnavailable as exc:
        raise PersonaMemMissing(
            f"PersonaMem file {name} is missing: download it from the Hugging Face dataset {HF_DATASET} "
            f"(https://huggingface.co/datasets/{HF_DATASET}) into the personamem/ folder of MEMDIR_DATA. "
            f"Details: {exc}"
        ) from None


def question_rows(tier: str) -> list[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)
    with _file(tier, "questions").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def parse_options(raw: str) -> tuple[str, ...]:
    """`all_options` mixes Python and JSON quoting: literal_eval first, JSON second."""
    try:
        value: Any = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = json.loads(raw)
    return tuple(str(v) for v in value)


def load_questions(sample_id: str = DEFAULT) -> tuple[str, list[Question]]:
    """The full shared-context id and the question battery; needs only the questions file."""
    tier, persona, prefix, end = parse_id(sample_id)
    rows = [
        r
        for r in question_rows(tier)
        if int(r["persona_id"]) == persona
        and r["shared_context_id"].startswith(prefix)
        and int(r["end_index_in_shared_context"]) == end
    ]
    if not rows:
        raise UnknownSample(
            f"questions_{tier}.csv has no rows for {sample_id} (persona {persona}, context {prefix}..., "
            f"end index {end})"
        )
    context_ids = {r["shared_context_id"] for r in rows}
    if len(context_ids) > 1:
        raise UnknownSample(f"{sample_id}: prefix {prefix} matches several contexts; use more hex digits")
    questions = [
        Question(
            id=r["question_id"],
            category=r["question_type"],
            question=r["user_question_or_message"],
            gold=r["correct_answer"].strip(),
            options=parse_options(r["all_options"]),
            order=i + 1,
        )
        for i, r in enumerate(rows)
    ]
    return context_ids.pop(), questions


def load(sample_id: str = DEFAULT) -> Sample:
    tier, _, _, end = parse_id(sample_id)
    context_id, questions = load_questions(sample_id)
    messages = shared_context(tier, context_id)
    if len(messages) < end:
        raise UnknownSample(
            f"{sample_id}: shared context {context_id[:8]} has {len(messages)} messages, fewer than {end}"
        )
    turns = to_turns(messages[:end])
    dates: dict[int, str | None] = {}
    for t in turns:
        if dates.get(t.session) is None:
            dates[t.session] = t.date
    return Sample("personamem", sample_id, turns, questions, dates)


def shared_context(tier: str, context_id: str) -> list[Mapping[str, JsonValue]]:
    """The message list of one context; lines are only parsed when they open with its key."""
    path = _file(tier, "contexts")
    head = '{"' + context_id + '"'
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.lstrip().startswith(head):
                return [obj(m) for m in array(obj(json.loads(line)).get(context_id))]
    raise UnknownSample(f"{path.name} has no shared context {context_id}")


def to_turns(messages: Sequence[Mapping[str, JsonValue]]) -> list[Turn]:
    turns: list[Turn] = []
    block = 1
    user_label: str | None = None
    for i, msg in enumerate(messages):
        role = str(msg.get("role", "user"))
        content = str(msg.get("content", ""))
        m = _PREFIX.match(content) if role != "system" else None
        speaker = m.group(1).strip() if m else role
        text = content[m.end() :] if m else content
        if i > 0 and role == "system":
            block += 1
            user_label = None
        elif role == "user" and m:
            if user_label is not None and speaker != user_label:
                block += 1
            user_label = speaker
        d = _DATE.search(text)
        date = None
        if d:
            date = datetime(int(d.group(3)), int(d.group(1)), int(d.group(2))).date().isoformat()
        turns.append(Turn(f"B{block}M{i + 1}", speaker, text.strip(), date))
    return turns
