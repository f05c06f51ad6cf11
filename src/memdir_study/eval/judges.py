"""Judges: the two LLM judges of the study (correctness, attribution; the paper's Appendix
A.4, D.3) and the offline judge's lexical scores.

Each LLM judge is one fixed prompt (package data under `prompts/`, identified in run records
by `PROMPT_IDS`, a hash of its text) sent once at temperature 0 and, where the model takes one,
the study's low reasoning effort (`JUDGE_CONFIG`). Both answer in JSON. Correctness is a verdict,
CORRECT or WRONG. Attribution is scored on the paper's three scales, each 0-1 (`SCALES`:
citation correctness, relevance, coherent aggregation); its score is the study's attribution,
the `relevance` scale, and two of the scales feed the run-to-run composite with correctness
(`composite.py`, which says which scale is which and why). Attribution resolves every citation against the
store that was searched and shows an unresolvable one as `[FILE NOT FOUND]`; a closed-book
answer has no store, so each of its citations is shown so.

A reply the parser cannot read scores None (reported as unparsed), never a silent 0 or 1.
The model is anything with an async `generate(messages, tools, config)` returning an object
with `.text`; the models package provides it, tests pass a scripted one.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, replace
from importlib import resources
from string import Template
from typing import Any, Literal, NotRequired, Protocol, TypedDict, cast

from memdir.jsontypes import JsonObject
from memdir.models.usage import UsageRecord
from memdir.store.store import Store
from memdir_study.bench.types import Question
from memdir_study.eval.citations import NOT_FOUND, Resolved, lexical_support, resolve, resolve_all
from memdir_study.eval.composite import STUDY_SCALES
from memdir_study.eval.lexical import exact_match, f1_score, locomo_f1, normalize_answer, offline_correctness


# The study's judge setting (docs/study.md, Configuration of record (Table 11)): temperature 0,
# low reasoning effort (sent only to models that take one), the search role's output cap.
class JudgeConfig(TypedDict, total=False):
    """What a judge's call is configured with (the runner may override the effort)."""

    temperature: float
    max_tokens: int
    reasoning_effort: str | None
    verdict_schema: JsonObject


JUDGE_CONFIG = JudgeConfig(temperature=0.0, max_tokens=8192, reasoning_effort="low")
# Attribution's three scales, in the order the prompt asks for them.
SCALES = ("citation_correctness", "relevance", "coherent_aggregation")


class HasText(Protocol):
    @property
    def text(self) -> str: ...


class JudgeMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


class JudgeModel(Protocol):
    async def generate(self, messages: list[JudgeMessage], tools: list[Any], config: Any) -> HasText: ...


class JudgeUsage(UsageRecord):
    """A judge call's usage as its verdict's record line carries it, with the judge's model."""

    model: NotRequired[str]


class VerdictRecord(TypedDict):
    """A verdict as its run-record line carries it (JSON)."""

    judge: str
    prompt_id: str
    label: str
    score: float | None
    scales: dict[str, float] | None
    reply: str
    usage: JudgeUsage | None


def _template(name: str) -> str:
    return resources.files("memdir_study.eval").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")


PROMPTS = {name: _template(name) for name in ("correctness", "attribution")}
PROMPT_IDS = {name: hashlib.sha256(text.encode()).hexdigest()[:12] for name, text in PROMPTS.items()}
_VERDICT = re.compile(r"VERDICT:\s*\**\s*(CORRECT|WRONG)\b", re.IGNORECASE)
VERDICTS = ("CORRECT", "WRONG")


def verdict_schema(judge: str) -> JsonObject:
    """The judge's JSON reply, as a server that constrains output (json-schema protocol) is
    asked for it. Measured on the 1.5B local model: asked for a verdict line, it wrote
    "Therefore, the VERDICT is CORRECT." and every verdict of a LoCoMo slice was unparsed."""
    if judge == "correctness":
        properties: JsonObject = {"reason": {"type": "string"}, "verdict": {"enum": list(VERDICTS)}}
    else:
        scale: JsonObject = {"type": "number", "minimum": 0, "maximum": 1}
        properties = {"reason": {"type": "string"}, **dict.fromkeys(SCALES, scale)}
    return {"type": "object", "properties": properties, "required": list(properties)}


def attribution_score(scales: dict[str, float]) -> float:
    """An answer's attribution: the scale the study reads it from (`composite.STUDY_SCALES`)."""
    return scales[STUDY_SCALES["attribution"]]


@dataclass(frozen=True)
class Verdict:
    """A judge's decision: `score` (correctness 1.0 / 0.0; attribution its `relevance` scale),
    or None when the reply could not be read; attribution's three scales in `scales`."""

    judge: str
    label: str
    score: float | None
    reply: str
    prompt: str
    usage: JudgeUsage | None = None
    scales: dict[str, float] | None = None

    def record(self) -> VerdictRecord:
        """The verdict as a run-record line carries it, so an unparsed one can be read later."""
        return VerdictRecord(
            judge=self.judge,
            prompt_id=PROMPT_IDS[self.judge],
            label=self.label,
            score=self.score,
            scales=self.scales,
            reply=self.reply,
            usage=self.usage,
        )


@dataclass(frozen=True)
class Scores:
    """Every score the runner records for one answered question. `correctness` is the one the
    answer row takes: the judge's verdict (None when unparsed), exact match for multiple choice,
    else (no judge) the offline score; `attribution` likewise: the judge's, else the lexical
    support, None for a closed-book answer without a judge."""

    correctness: float | None
    attribution: float | None
    offline_correctness: float
    lexical_support: float
    citations_resolved: int
    citations_not_found: list[str]
    verdicts: tuple[Verdict, ...] = ()


def _objects(reply: str) -> list[dict[str, Any]]:
    """Every JSON object in a reply, outermost first to last: a reply may wrap its object in a
    code fence or words despite the prompt."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = reply.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(reply, i)
        except ValueError:
            i = reply.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = reply.find("{", end)
    return found


def _scale(value: Any) -> float | None:
    """A scale's value as a number in [0, 1], or None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        x = float(value)
    except ValueError:
        return None
    return x if math.isfinite(x) and 0.0 <= x <= 1.0 else None


def parse_verdict(judge: str, reply: str, prompt: str) -> Verdict:
    """The last JSON object of the reply that holds the judge's fields (correctness: a verdict;
    also a `VERDICT: X` line, as older prompts asked; attribution: all three scales, each in
    [0, 1]); otherwise unparsed."""
    if judge == "attribution":
        for obj in reversed(_objects(reply)):
            scales = {k: _scale(obj.get(k)) for k in SCALES}
            if all(v is not None for v in scales.values()):
                read = {k: v for k, v in scales.items() if v is not None}
                return Verdict(judge, "scored", attribution_score(read), reply, prompt, scales=read)
        return Verdict(judge, "unparsed", None, reply, prompt)
    labels = [
        str(o["verdict"]).upper()
        for o in _objects(reply)
        if isinstance(o.get("verdict"), str) and str(o["verdict"]).upper() in VERDICTS
    ]
    found = labels or [m.upper() for m in _VERDICT.findall(reply)]
    if not found:
        return Verdict(judge, "unparsed", None, reply, prompt)
    label = found[-1]
    return Verdict(judge, label.lower(), 1.0 if label == "CORRECT" else 0.0, reply, prompt)


def correctness_prompt(question: str, gold: str, answer: str) -> str:
    return Template(PROMPTS["correctness"]).safe_substitute(question=question, gold=gold, answer=answer)


def attribution_prompt(question: str, answer: str, resolved: list[Resolved]) -> str:
    if resolved:
        sources = "\n\n".join(f"[{i}] {r.citation}\n{r.shown()}" for i, r in enumerate(resolved, 1))
    else:
        sources = "(no citations)"
    return Template(PROMPTS["attribution"]).safe_substitute(question=question, answer=answer, sources=sources)


async def _ask(model: JudgeModel, judge: str, prompt: str, config: Any) -> Verdict:
    # the schema is only a hint: a model whose server cannot constrain output ignores it
    settings = {**JUDGE_CONFIG, **(config or {}), "verdict_schema": verdict_schema(judge)}
    reply = await model.generate([{"role": "user", "content": prompt}], [], settings)
    verdict = parse_verdict(judge, reply.text, prompt)
    usage = getattr(reply, "usage", None)
    return replace(verdict, usage=cast(JudgeUsage, usage)) if isinstance(usage, dict) else verdict


async def judge_correctness(
    model: JudgeModel, question: str, gold: str, answer: str, *, config: Any = None
) -> Verdict:
    return await _ask(model, "correctness", correctness_prompt(question, gold, answer), config)


async def judge_attribution(
    model: JudgeModel,
    store: Store,
    question: str,
    answer: str,
    citations: list[str],
    *,
    config: Any = None,
) -> Verdict:
    resolved = resolve_all(store, citations)
    return await _ask(model, "attribution", attribution_prompt(question, answer, resolved), config)


def unresolved(citations: list[str]) -> list[Resolved]:
    """Citations with no store to resolve them in (closed-book): each shown as not found."""
    return [
        Resolved(c, None, None, "no store: the closed-book answer was given without one") for c in citations
    ]


async def judge_item(
    model: JudgeModel | None,
    store: Store | None,
    question: Question,
    answer: str,
    citations: list[str],
    *,
    config: Any = None,
    attributed: str | None = None,
) -> Scores:
    """Every score the runner records for one answered question. Multiple choice is exact
    match and never goes to the correctness judge (as the study does); with a model, every
    answer is attributed, multiple choice and closed-book included, as the paper reports them
    (`attributed`: the answer as the attribution judge reads it, e.g. a chosen letter with its
    option's text; default `answer`). Without a model only offline scores are set."""
    resolved = resolve_all(store, citations) if store is not None else unresolved(citations)
    offline = offline_correctness(question, answer)
    support = lexical_support(answer, resolved)
    scores = Scores(
        correctness=exact_match(answer, question.gold) if question.options else offline,
        attribution=support if store is not None else None,
        offline_correctness=offline,
        lexical_support=support,
        citations_resolved=sum(r.ok for r in resolved),
        citations_not_found=[r.citation for r in resolved if not r.ok],
    )
    if model is None:
        return scores
    verdicts: list[Verdict] = []
    if not answer.strip():
        # An empty answer is WRONG and attributes nothing: no judge can say otherwise, yet the
        # 1.5B local judge said CORRECT to every empty answer of a REALTALK slice.
        correctness = scores.correctness
        if not question.options:
            correctness = 0.0
            verdicts.append(Verdict("correctness", "empty", 0.0, "", ""))
        verdicts.append(Verdict("attribution", "empty", 0.0, "", "", scales=dict.fromkeys(SCALES, 0.0)))
        return replace(scores, correctness=correctness, attribution=0.0, verdicts=tuple(verdicts))
    correctness = scores.correctness
    if not question.options:
        verdict = await judge_correctness(model, question.question, question.gold, answer, config=config)
        correctness = verdict.score
        verdicts.append(verdict)
    shown = attributed if attributed is not None else answer
    verdict = await _ask(model, "attribution", attribution_prompt(question.question, shown, resolved), config)
    verdicts.append(verdict)
    return replace(scores, correctness=correctness, attribution=verdict.score, verdicts=tuple(verdicts))


__all__ = [
    "JUDGE_CONFIG",
    "NOT_FOUND",
    "PROMPTS",
    "PROMPT_IDS",
    "SCALES",
    "JudgeConfig",
    "JudgeMessage",
    "JudgeModel",
    "JudgeUsage",
    "Resolved",
    "Scores",
    "Verdict",
    "VerdictRecord",
    "attribution_score",
    "exact_match",
    "f1_score",
    "judge_attribution",
    "judge_correctness",
    "judge_item",
    "lexical_support",
    "locomo_f1",
    "normalize_answer",
    "offline_correctness",
    "parse_verdict",
    "resolve",
    "resolve_all",
    "unresolved",
]
