"""Judges: the two LLM judges of the study (correctness, attribution) and the offline judge's
lexical scores.

Each LLM judge is one fixed prompt (package data under `prompts/`, identified in run records
by `PROMPT_IDS`, a hash of its text) sent once at temperature 0. The model is anything with an
async `generate(messages, tools, config)` returning an object with `.text`; the models package
provides it, tests pass a scripted one. Attribution resolves every citation against the store
that was searched and shows an unresolvable one as `[FILE NOT FOUND]`.

A reply without a verdict line scores None (reported as unparsed), never a silent 0 or 1.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from importlib import resources
from string import Template
from typing import Any, Protocol

from memdir.bench.types import Question
from memdir.eval.citations import NOT_FOUND, Resolved, lexical_support, resolve, resolve_all
from memdir.eval.lexical import exact_match, f1_score, locomo_f1, normalize_answer, offline_correctness
from memdir.store.store import Store

JUDGE_CONFIG: dict[str, Any] = {"temperature": 0.0, "max_tokens": 8192}


class HasText(Protocol):
    @property
    def text(self) -> str: ...


class JudgeModel(Protocol):
    async def generate(self, messages: list[dict[str, Any]], tools: list[Any], config: Any) -> HasText: ...


def _template(name: str) -> str:
    return resources.files("memdir.eval").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")


PROMPTS = {name: _template(name) for name in ("correctness", "attribution")}
PROMPT_IDS = {name: hashlib.sha256(text.encode()).hexdigest()[:12] for name, text in PROMPTS.items()}
_VERDICT = re.compile(r"VERDICT:\s*\**\s*(CORRECT|WRONG|SUPPORTED|UNSUPPORTED)\b", re.IGNORECASE)
VERDICTS = {"correctness": ("CORRECT", "WRONG"), "attribution": ("SUPPORTED", "UNSUPPORTED")}


def verdict_schema(judge: str) -> dict[str, Any]:
    """The judge's reply as a server that constrains output (json-schema protocol) is asked for:
    the prompt's reason and verdict line as two fields. Measured on the 1.5B local model: asked
    for a verdict line, it wrote "Therefore, the VERDICT is CORRECT." and every verdict of a
    LoCoMo slice was unparsed."""
    return {
        "type": "object",
        "properties": {"reason": {"type": "string"}, "verdict": {"enum": list(VERDICTS[judge])}},
        "required": ["reason", "verdict"],
    }


@dataclass(frozen=True)
class Verdict:
    """A judge's decision: `score` 1.0 / 0.0, or None when the reply had no verdict line."""

    judge: str
    label: str
    score: float | None
    reply: str
    prompt: str
    usage: dict[str, Any] | None = None

    def record(self) -> dict[str, Any]:
        """The verdict as a run-record line carries it, so an unparsed one can be read later."""
        return {
            "judge": self.judge,
            "prompt_id": PROMPT_IDS[self.judge],
            "label": self.label,
            "score": self.score,
            "reply": self.reply,
            "usage": self.usage,
        }


def _structured(judge: str, reply: str) -> list[str]:
    """The verdict of a reply in `verdict_schema`'s shape, if it is one."""
    try:
        data = json.loads(reply)
    except ValueError:
        return []
    verdict = data.get("verdict") if isinstance(data, dict) else None
    return [verdict] if isinstance(verdict, str) and verdict.upper() in VERDICTS[judge] else []


def parse_verdict(judge: str, reply: str, prompt: str) -> Verdict:
    """The last `VERDICT: X` line, or the verdict field of a constrained reply; else unparsed."""
    found = _VERDICT.findall(reply) or _structured(judge, reply.strip())
    if not found:
        return Verdict(judge, "unparsed", None, reply, prompt)
    label = found[-1].upper()
    return Verdict(judge, label.lower(), 1.0 if label in ("CORRECT", "SUPPORTED") else 0.0, reply, prompt)


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
    settings = {**(config or JUDGE_CONFIG), "verdict_schema": verdict_schema(judge)}
    reply = await model.generate([{"role": "user", "content": prompt}], [], settings)
    verdict = parse_verdict(judge, reply.text, prompt)
    usage = getattr(reply, "usage", None)
    return replace(verdict, usage=usage) if isinstance(usage, dict) else verdict


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


async def judge_item(
    model: JudgeModel | None,
    store: Store | None,
    question: Question,
    answer: str,
    citations: list[str],
    *,
    config: Any = None,
) -> dict[str, Any]:
    """Every score the runner records for one answered question. Multiple choice is exact match
    and never goes to a model (as the study does); without a model only offline scores are set;
    without a store (closed-book) there is nothing to attribute."""
    resolved = resolve_all(store, citations) if store is not None else []
    out: dict[str, Any] = {
        "offline_correctness": offline_correctness(question, answer),
        "lexical_support": lexical_support(answer, resolved),
        "citations_resolved": sum(r.ok for r in resolved),
        "citations_not_found": [r.citation for r in resolved if not r.ok],
        "verdicts": [],
    }
    if question.options:
        out["correctness"] = exact_match(answer, question.gold)
    elif model is not None and not answer.strip():
        # An empty answer is WRONG and attributes nothing: no judge can say otherwise, yet the
        # 1.5B local judge said CORRECT to every empty answer of a REALTALK slice.
        out["correctness"] = 0.0
        out["verdicts"].append(Verdict("correctness", "empty", 0.0, "", ""))
        if store is not None:
            out["attribution"] = 0.0
            out["verdicts"].append(Verdict("attribution", "empty", 0.0, "", ""))
        return out
    elif model is not None:
        verdict = await judge_correctness(model, question.question, question.gold, answer, config=config)
        out["correctness"] = verdict.score
        out["verdicts"].append(verdict)
    if model is not None and store is not None and not question.options:
        verdict = await _ask(
            model, "attribution", attribution_prompt(question.question, answer, resolved), config
        )
        out["attribution"] = verdict.score
        out["verdicts"].append(verdict)
    return out


__all__ = [
    "JUDGE_CONFIG",
    "NOT_FOUND",
    "PROMPTS",
    "PROMPT_IDS",
    "JudgeModel",
    "Resolved",
    "Verdict",
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
]
