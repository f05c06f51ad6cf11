"""The lexical option chooser, an offline baseline policy: multiple choice with no model,
through the read-only tools.

Retrieve with the lexical searcher (the question plus each option's words, so evidence for a
wrong option is read too), then pick the option whose words appear in the line that best matches the
question (a current keyed value outranks a struck-through past one); other lines break near-ties. A baseline.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from memdir.agents.offline.searcher import LexicalSearcher, Line
from memdir.agents.offline.text import terms
from memdir.models.base import LoggedCall
from memdir.tools.profiles import Harness

EVIDENCE_LINES = 20


@dataclass
class Choice:
    index: int
    option: str
    scores: list[float]
    citations: list[str] = field(default_factory=list)
    tool_calls: list[LoggedCall] = field(default_factory=list)


def choose(harness: Harness, question: str, options: list[str]) -> Choice:
    if not options:
        raise ValueError("no options to choose from")
    searcher = LexicalSearcher(harness)
    lines: dict[tuple[str, int], Line] = {}
    for probe in [question, *(f"{question} {o}" for o in options)]:
        for ln in searcher.retrieve(probe)[:EVIDENCE_LINES]:
            prev = lines.get((ln.path, ln.n))
            if prev is None or prev.score < ln.score:
                lines[(ln.path, ln.n)] = ln
    evidence = sorted(lines.values(), key=lambda x: -x.score)[: EVIDENCE_LINES * 2]
    line_terms = [set(terms(ln.text)) for ln in evidence]
    df = Counter(t for d in line_terms for t in d)
    n = max(len(evidence), 1)
    q = set(terms(question))
    scores: list[float] = []
    for opt in options:
        o_terms = set(terms(opt)) - q or set(terms(opt))
        per_line = [
            ln.score * sum(math.log(1 + n / df[t]) for t in o_terms if t in d) / math.sqrt(len(o_terms) or 1)
            for ln, d in zip(evidence, line_terms, strict=True)
        ]
        # The best single supporting line decides; the rest only break near-ties.
        scores.append(max(per_line, default=0.0) + 0.1 * sum(per_line))
    best = max(range(len(options)), key=lambda i: (scores[i], -i))
    support = [ln for ln, d in zip(evidence, line_terms, strict=True) if set(terms(options[best])) & d][:3]
    return Choice(best, options[best], scores, [f"{ln.path}:{ln.n}" for ln in support], searcher.calls)
